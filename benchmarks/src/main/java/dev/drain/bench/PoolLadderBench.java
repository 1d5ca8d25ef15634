package dev.drain.bench;

import dev.drain.pool.Handler;
import dev.drain.pool.MetricsSink;
import dev.drain.pool.Results;
import dev.drain.pool.WorkerPool;
import dev.drain.queue.QueueShutDown;
import dev.drain.queue.ShutdownQueue;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.atomic.LongAdder;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
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
 * What the pool's per-item cost is made of: a ladder from the bare structured fork to the
 * {@code WorkerPool}, one mechanism added per step, no-op handler, {@value #ITEMS} items per run,
 * time per item. The steps between the two ends are written here, with the pool's own structure:
 * <ol>
 *   <li>{@code 1.fork}: the baseline of {@link PoolBench}, one {@code fork} per item under a
 *       {@code Semaphore}, in one scope;</li>
 *   <li>{@code 2.queues}: the pool's skeleton without a thread per item: a producer thread puts
 *       the items into a {@code ShutdownQueue(16)} intake, {@code workers} threads take them, call
 *       the handler inline, and put the results into a {@code ShutdownQueue(workers)} outbox that
 *       the benchmark thread drains;</li>
 *   <li>{@code 3.scopePerItem}: as 2, but each worker runs the handler in a scope of its own
 *       (open, fork, join, close), as the pool's attempt does;</li>
 *   <li>{@code 4.wokenWait}: as 3, but the worker waits for the subtask as the pool does: it
 *       parks, without a timer, until the subtask's end unparks it, then {@code join}s (the
 *       pool's deadline is kept by one watchdog thread per run, which an attempt does not touch;
 *       decision 0022). Before that decision this step was a timed wait on a latch, which put a
 *       timer on the JDK's delay scheduler per attempt;</li>
 *   <li>{@code 5.WorkerPool.noMetrics}: the pool (queue intake), no metrics sink: adds its
 *       counters, the item context and its {@code ScopedValue}, named threads, JFR event
 *       objects;</li>
 *   <li>{@code 6.WorkerPool}: the pool with a metrics sink, as in {@link PoolBench}.</li>
 * </ol>
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 5, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"--enable-preview", "-Xms2g", "-Xmx2g"})
public class PoolLadderBench {
    static final int ITEMS = 10_000;

    @Param({"1.fork", "2.queues", "3.scopePerItem", "4.wokenWait", "5.WorkerPool.noMetrics", "6.WorkerPool"})
    String step = "";

    @Param({"8", "64"})
    int workers;

    private List<Integer> items = List.of();
    private final LongAdder metricChars = new LongAdder();
    private final Handler<Integer, Integer> handler = item -> item;

    @Setup
    public void setUp() {
        Integer[] all = new Integer[ITEMS];
        Arrays.setAll(all, i -> i);
        items = List.of(all);
    }

    @Benchmark
    @OperationsPerInvocation(ITEMS)
    public void ladder(Blackhole bh) {
        Threads.runAll(Thread.ofVirtual(), List.of(() -> ladderHere(bh)));
    }

    /** One run, on the virtual thread that {@link #ladder} starts, as in {@link PoolBench}. */
    private void ladderHere(Blackhole bh) throws Exception {
        switch (step) {
            case "1.fork" -> PoolBench.structured(items, workers, handler);
            case "2.queues" -> pipeline(bh, this::inline);
            case "3.scopePerItem" -> pipeline(bh, this::scopePerItem);
            case "4.wokenWait" -> pipeline(bh, this::wokenWait);
            case "5.WorkerPool.noMetrics" -> workerPool(bh, false);
            case "6.WorkerPool" -> workerPool(bh, true);
            default -> throw new IllegalArgumentException(step);
        }
    }

    /** How a worker of the pipeline handles one item. */
    @FunctionalInterface
    private interface Step {
        Integer handle(Integer item) throws Exception;
    }

    private Integer inline(Integer item) throws Exception {
        return handler.handle(item);
    }

    @SuppressWarnings("preview")
    private Integer scopePerItem(Integer item) throws Exception {
        try (var scope = java.util.concurrent.StructuredTaskScope.open(
                java.util.concurrent.StructuredTaskScope.Joiner.<Integer>awaitAll())) {
            var subtask = scope.fork(() -> handler.handle(item));
            scope.join();
            return subtask.get();
        }
    }

    @SuppressWarnings("preview")
    private Integer wokenWait(Integer item) throws Exception {
        Thread owner = Thread.currentThread();
        AtomicBoolean done = new AtomicBoolean();
        try (var scope = java.util.concurrent.StructuredTaskScope.open(
                java.util.concurrent.StructuredTaskScope.Joiner.<Integer>awaitAll())) {
            var subtask = scope.fork(() -> {
                try {
                    return handler.handle(item);
                } finally {
                    done.set(true);
                    LockSupport.unpark(owner);
                }
            });
            while (!done.get()) {
                LockSupport.park(this); // no timer: the pool's watchdog would wake it at the deadline
            }
            scope.join();
            return subtask.get();
        }
    }

    /** Producer → intake → workers → outbox → this thread, the pool's shape, in one scope. */
    @SuppressWarnings("preview")
    private void pipeline(Blackhole bh, Step step) throws Exception {
        ShutdownQueue<Integer> intake = new ShutdownQueue<>(16);
        ShutdownQueue<Integer> outbox = new ShutdownQueue<>(workers);
        AtomicInteger running = new AtomicInteger(workers);
        int delivered = 0;
        try (var scope = java.util.concurrent.StructuredTaskScope.open()) {
            scope.fork(() -> {
                try {
                    for (Integer item : items) {
                        intake.put(item);
                    }
                } finally {
                    intake.shutdown();
                }
                return null;
            });
            for (int w = 0; w < workers; w++) {
                scope.fork(() -> {
                    try {
                        while (true) {
                            Integer item;
                            try {
                                item = intake.get();
                            } catch (QueueShutDown e) {
                                return null;
                            }
                            outbox.put(step.handle(item));
                        }
                    } finally {
                        if (running.decrementAndGet() == 0) {
                            outbox.shutdown();
                        }
                    }
                });
            }
            while (true) {
                try {
                    bh.consume(outbox.get());
                    delivered++;
                } catch (QueueShutDown e) {
                    break;
                }
            }
            scope.join();
        }
        if (delivered != ITEMS) {
            throw new IllegalStateException("delivered " + delivered);
        }
    }

    private void workerPool(Blackhole bh, boolean metrics) {
        WorkerPool.Builder<Integer, Integer> builder = WorkerPool.builder(handler)
                .workers(workers)
                .queueSize(16)
                .itemTimeout(Duration.ofSeconds(30))
                .name("ladder");
        if (metrics) {
            LongAdder chars = metricChars;
            MetricsSink sink = (event, detail) -> chars.add(event.id().length() + detail.length());
            builder.metrics(sink);
        }
        WorkerPool<Integer, Integer> pool = builder.build();
        int delivered = 0;
        try (Results<Integer, Integer> results = pool.run(items)) {
            while (results.hasNext()) {
                bh.consume(results.next());
                delivered++;
            }
        }
        if (delivered != ITEMS || pool.liveThreads() != 0) {
            throw new IllegalStateException("delivered " + delivered + ", " + pool.liveThreads() + " threads left");
        }
    }
}
