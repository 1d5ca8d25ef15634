package dev.drain.bench;

import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The hot path alone: one thread puts an item into a queue of 16 and takes it back, so neither
 * call ever blocks and the lock is never contended. The score is the time of the pair: what each
 * queue does inside its lock, which is what the other benchmarks multiply by contention.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 5, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"--enable-preview", "-Xms2g", "-Xmx2g"})
public class FastPathBench {
    private static final Integer ITEM = 42;

    @Param({"ShutdownQueue", "ArrayBlockingQueue", "LinkedBlockingQueue", "JoxChannel"})
    String queue = "";

    private Pipe pipe = Pipe.Kind.ArrayBlockingQueue.create(16);

    @Setup
    public void setUp() {
        pipe = Pipe.Kind.valueOf(queue).create(16);
    }

    @Benchmark
    public Integer putTake() throws Exception {
        pipe.put(ITEM);
        return pipe.take();
    }
}
