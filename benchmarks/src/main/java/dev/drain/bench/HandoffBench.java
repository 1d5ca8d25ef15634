package dev.drain.bench;

import java.util.List;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Item 1: one producer hands {@value #ITEMS} items to one consumer through a queue of
 * {@code capacity}, both on {@code threads} threads that the invocation starts and joins. The
 * score is the time per item. Starting and joining the two threads is part of every invocation
 * and the same for every queue (about 1 µs for virtual, 100 µs for platform threads, against
 * milliseconds for the items).
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 5, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"--enable-preview", "-Xms2g", "-Xmx2g"})
public class HandoffBench {
    static final int ITEMS = 1 << 16;
    /** One boxed item, sent again and again, so that the only allocation is the queue's own. */
    private static final Integer ITEM = 42;

    @Param({"ShutdownQueue", "ArrayBlockingQueue", "LinkedBlockingQueue", "JoxChannel"})
    String queue = "";

    @Param({"1", "16", "100"})
    int capacity;

    @Param({"virtual", "platform"})
    String threads = "";

    private Pipe pipe = Pipe.Kind.ArrayBlockingQueue.create(1);
    private Thread.Builder builder = Thread.ofVirtual();

    /** A fresh queue each iteration. */
    @Setup(Level.Iteration)
    public void setUp() {
        pipe = Pipe.Kind.valueOf(queue).create(capacity);
        builder = Threads.Kind.valueOf(threads).builder();
    }

    @Benchmark
    @OperationsPerInvocation(ITEMS)
    public void handoff() {
        Pipe p = pipe;
        Threads.runAll(builder, List.of(
                () -> {
                    for (int i = 0; i < ITEMS; i++) {
                        p.put(ITEM);
                    }
                },
                () -> {
                    for (int i = 0; i < ITEMS; i++) {
                        if (p.take() == null) {
                            throw new AssertionError("null from " + queue);
                        }
                    }
                }));
    }
}
