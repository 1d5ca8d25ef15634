package dev.drain.bench;

import java.util.ArrayList;
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
 * Item 2: {@code producers × consumers} virtual threads share one queue of {@code capacity};
 * {@value #ITEMS} items in all, split evenly, so every thread ends by itself. The score is the
 * time per item.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 5, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"--enable-preview", "-Xms2g", "-Xmx2g"})
public class MpmcBench {
    static final int ITEMS = 1 << 16;
    private static final Integer ITEM = 42;

    @Param({"ShutdownQueue", "ArrayBlockingQueue", "LinkedBlockingQueue", "JoxChannel"})
    String queue = "";

    @Param({"16", "1024"})
    int capacity;

    /** Producers x consumers. */
    @Param({"4x4", "64x64"})
    String shape = "";

    private List<Threads.Task> tasks = List.of();

    /** A fresh queue each iteration. */
    @Setup(Level.Iteration)
    public void setUp() {
        Pipe p = Pipe.Kind.valueOf(queue).create(capacity);
        String[] pc = shape.split("x", -1);
        int producers = Integer.parseInt(pc[0]);
        int consumers = Integer.parseInt(pc[1]);
        if (ITEMS % producers != 0 || ITEMS % consumers != 0) {
            throw new IllegalArgumentException("the items do not split evenly over " + shape);
        }
        int perProducer = ITEMS / producers;
        int perConsumer = ITEMS / consumers;
        List<Threads.Task> all = new ArrayList<>();
        for (int i = 0; i < producers; i++) {
            all.add(() -> {
                for (int n = 0; n < perProducer; n++) {
                    p.put(ITEM);
                }
            });
        }
        for (int i = 0; i < consumers; i++) {
            all.add(() -> {
                for (int n = 0; n < perConsumer; n++) {
                    if (p.take() == null) {
                        throw new AssertionError("null from " + queue);
                    }
                }
            });
        }
        tasks = List.copyOf(all);
    }

    @Benchmark
    @OperationsPerInvocation(ITEMS)
    public void manyToMany() {
        Threads.runAll(Thread.ofVirtual(), tasks);
    }
}
