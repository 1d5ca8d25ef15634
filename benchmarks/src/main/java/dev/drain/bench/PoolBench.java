package dev.drain.bench;

import dev.drain.pool.Handler;
import dev.drain.pool.MetricsSink;
import dev.drain.pool.Results;
import dev.drain.pool.WorkerPool;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import org.openjdk.jmh.annotations.AuxCounters;
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
 * Item 4: the cost per item of running items through a pool of {@code workers}, each item on a
 * virtual thread of its own:
 * <ul>
 *   <li>{@code WorkerPool.SHUTDOWN_QUEUE}, {@code WorkerPool.SENTINEL}: drain's pool with either
 *       intake, the per-item timeout (30 s) and a metrics sink on, the results consumed by the
 *       benchmark thread;</li>
 *   <li>{@code StructuredTaskScope} (the baseline): one scope, one {@code fork} per item, at most
 *       {@code workers} at once under a {@link Semaphore}, then {@code join};</li>
 *   <li>{@code VirtualThreadExecutor}: the same with {@link Executors#newVirtualThreadPerTaskExecutor()}.</li>
 * </ul>
 * Every invocation is a whole run, from building the pool (or opening the scope) to the end of
 * its last thread, so nothing leaks between invocations (checked for the pool). The run is driven
 * from a virtual thread that the invocation starts and joins (JMH's own thread is a platform
 * thread): it consumes the pool's results, or forks the items.
 *
 * <p>{@link #noop}: {@value #NOOP_ITEMS} items, a handler that returns its item; the score is the
 * time per item, which is all overhead. {@link #sleep1ms}: {@code workers × }{@value #ROUNDS}
 * items, a handler that sleeps 1 ms, so every run lasts about {@value #ROUNDS} ms at any width;
 * the score is the time per run, and the secondary result {@code items} the time per item.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 5, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"--enable-preview", "-Xms2g", "-Xmx2g"})
public class PoolBench {
    static final int NOOP_ITEMS = 10_000;
    static final int ROUNDS = 8;
    static final int QUEUE_SIZE = 16;
    static final Duration ITEM_TIMEOUT = Duration.ofSeconds(30);

    @Param({"WorkerPool.SHUTDOWN_QUEUE", "WorkerPool.SENTINEL", "StructuredTaskScope", "VirtualThreadExecutor"})
    String pool = "";

    @Param({"1", "8", "64", "1024"})
    int workers;

    private List<Integer> items = List.of();
    /** What the metrics sink saw, so that the pool's event strings are really built. */
    private final LongAdder metricChars = new LongAdder();

    /** Counts the items of {@link #sleep1ms} (and of {@code SettlementBench} and {@code PeersBench}), for their per-item secondary result. */
    @State(Scope.Thread)
    @AuxCounters(AuxCounters.Type.OPERATIONS)
    public static class Items {
        /** Items handled in this iteration. */
        public long items;

        @Setup(Level.Iteration)
        public void reset() {
            items = 0;
        }
    }

    @Setup(Level.Trial)
    public void setUp() {
        Integer[] all = new Integer[Math.max(NOOP_ITEMS, 1024 * ROUNDS)];
        Arrays.setAll(all, i -> i);
        items = List.of(all);
    }

    @Benchmark
    @OperationsPerInvocation(NOOP_ITEMS)
    public void noop(Blackhole bh) {
        run(items.subList(0, NOOP_ITEMS), item -> item, bh);
    }

    @Benchmark
    public void sleep1ms(Items counter, Blackhole bh) {
        int n = workers * ROUNDS;
        run(items.subList(0, n), item -> {
            Thread.sleep(1);
            return item;
        }, bh);
        counter.items += n;
    }

    /** Runs the whole run on a virtual thread, as an application on virtual threads would, and waits for it. */
    private void run(List<Integer> source, Handler<Integer, Integer> handler, Blackhole bh) {
        Threads.runAll(Thread.ofVirtual(), List.of(() -> runHere(source, handler, bh)));
    }

    private void runHere(List<Integer> source, Handler<Integer, Integer> handler, Blackhole bh) throws Exception {
        switch (pool) {
            case "WorkerPool.SHUTDOWN_QUEUE" -> workerPool(WorkerPool.IntakeKind.SHUTDOWN_QUEUE, source, handler, bh);
            case "WorkerPool.SENTINEL" -> workerPool(WorkerPool.IntakeKind.SENTINEL, source, handler, bh);
            case "StructuredTaskScope" -> structured(source, workers, handler);
            case "VirtualThreadExecutor" -> executor(source, handler);
            default -> throw new IllegalArgumentException(pool);
        }
    }

    private void workerPool(WorkerPool.IntakeKind intake, List<Integer> source, Handler<Integer, Integer> handler,
                            Blackhole bh) {
        LongAdder chars = metricChars;
        MetricsSink sink = (event, detail) -> chars.add(event.id().length() + detail.length());
        WorkerPool<Integer, Integer> p = WorkerPool.builder(handler)
                .workers(workers)
                .queueSize(QUEUE_SIZE)
                .itemTimeout(ITEM_TIMEOUT)
                .metrics(sink)
                .intake(intake)
                .name("bench")
                .build();
        int delivered = 0;
        try (Results<Integer, Integer> results = p.run(source)) {
            while (results.hasNext()) {
                bh.consume(results.next());
                delivered++;
            }
        }
        if (delivered != source.size() || p.liveThreads() != 0) {
            throw new IllegalStateException("delivered " + delivered + " of " + source.size() + ", "
                    + p.liveThreads() + " threads still running");
        }
    }

    /** The baseline: a bare structured fork per item under a semaphore of {@code workers}. */
    @SuppressWarnings("preview")
    static void structured(List<Integer> source, int workers, Handler<Integer, Integer> handler) throws Exception {
        Semaphore permits = new Semaphore(workers);
        try (var scope = java.util.concurrent.StructuredTaskScope.open()) {
            for (Integer item : source) {
                permits.acquire();
                scope.fork(() -> {
                    try {
                        return handler.handle(item);
                    } finally {
                        permits.release();
                    }
                });
            }
            scope.join();
        }
    }

    private void executor(List<Integer> source, Handler<Integer, Integer> handler) throws Exception {
        Semaphore permits = new Semaphore(workers);
        try (ExecutorService executor = Executors.newVirtualThreadPerTaskExecutor()) {
            for (Integer item : source) {
                permits.acquire();
                executor.submit(() -> {
                    try {
                        return handler.handle(item);
                    } finally {
                        permits.release();
                    }
                });
            }
        }
    }
}
