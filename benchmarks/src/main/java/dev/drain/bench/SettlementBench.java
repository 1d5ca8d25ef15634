package dev.drain.bench;

import dev.drain.pool.Handler;
import dev.drain.pool.Results;
import dev.drain.pool.Settlement;
import dev.drain.pool.Settler;
import dev.drain.pool.WorkerPool;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
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
import org.openjdk.jmh.infra.Blackhole;

/**
 * Issue 21's settlement hook on the in-memory pool (WP-22): the same run, queue intake, no metrics
 * sink, with no settler ({@code none}) or with a settler that only counts what it is given
 * ({@code counting}: the hook's own cost, without a store). The run's shape is
 * {@link PoolBench}'s: {@link #noop} runs {@value PoolBench#NOOP_ITEMS} items through a handler that
 * returns its item (the score is the time per item, all overhead); {@link #sleep1ms} runs
 * {@code workers × }{@value PoolBench#ROUNDS} items through a handler that sleeps 1 ms (the score
 * is the time per run, the secondary result {@code items} the time per item). Each run checks
 * that every item was delivered and, with a settler, settled.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 5, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"--enable-preview", "-Xms2g", "-Xmx2g"})
public class SettlementBench {
    @Param({"none", "counting"})
    String settler = "";

    @Param({"8", "64"})
    int workers;

    private List<Integer> items = List.of();

    @Setup(Level.Trial)
    public void setUp() {
        Integer[] all = new Integer[Math.max(PoolBench.NOOP_ITEMS, 64 * PoolBench.ROUNDS)];
        Arrays.setAll(all, i -> i);
        items = List.of(all);
    }

    @Benchmark
    @OperationsPerInvocation(PoolBench.NOOP_ITEMS)
    public void noop(Blackhole bh) {
        run(items.subList(0, PoolBench.NOOP_ITEMS), item -> item, bh);
    }

    @Benchmark
    public void sleep1ms(PoolBench.Items counter, Blackhole bh) {
        int n = workers * PoolBench.ROUNDS;
        run(items.subList(0, n), item -> {
            Thread.sleep(1);
            return item;
        }, bh);
        counter.items += n;
    }

    private void run(List<Integer> source, Handler<Integer, Integer> handler, Blackhole bh) {
        Threads.runAll(Thread.ofVirtual(), List.of(() -> runHere(source, handler, bh)));
    }

    private void runHere(List<Integer> source, Handler<Integer, Integer> handler, Blackhole bh) {
        Counting counting = new Counting();
        WorkerPool.Builder<Integer, Integer> builder = WorkerPool.builder(handler)
                .workers(workers)
                .queueSize(PoolBench.QUEUE_SIZE)
                .itemTimeout(PoolBench.ITEM_TIMEOUT)
                .name("bench");
        WorkerPool<Integer, Integer> p = switch (settler) {
            case "none" -> builder.build();
            case "counting" -> builder.settler(counting).build();
            default -> throw new IllegalArgumentException(settler);
        };
        int delivered = 0;
        try (Results<Integer, Integer> results = p.run(source)) {
            while (results.hasNext()) {
                bh.consume(results.next());
                delivered++;
            }
        }
        long settled = counting.settled.sum();
        if (delivered != source.size() || p.liveThreads() != 0 || (settler.equals("counting") && settled != source.size())) {
            throw new IllegalStateException("delivered " + delivered + " and settled " + settled + " of " + source.size()
                    + ", " + p.liveThreads() + " threads still running");
        }
    }

    /** A settler that stores nothing: it counts the settlements it is given. */
    static final class Counting implements Settler<Integer> {
        final LongAdder settled = new LongAdder();

        @Override
        public void settle(List<Settlement<Integer>> batch) {
            settled.add(batch.size());
        }
    }
}
