package dev.drain.bench;

import com.softwaremill.jox.Channel;
import com.softwaremill.jox.ChannelDoneException;
import dev.drain.pool.Handler;
import dev.drain.pool.Results;
import dev.drain.pool.WorkerPool;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletionService;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorCompletionService;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Consumer;
import java.util.stream.Gatherers;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.Blackhole;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;
import reactor.util.retry.Retry;

/**
 * Issue 23: drain's pool beside what a Java user would pick instead. Each invocation is one whole
 * run: the items come from an iterator (a {@code List}'s), each is handled on a thread of its own
 * (a virtual thread; {@code platformPool}: a platform thread), at most {@code workers} at once, and
 * the caller drains every result. The caller is a virtual thread that the invocation starts and
 * joins, as in {@link PoolBench}, so that every peer is driven alike. The peers ({@code peer}):
 * <ul>
 *   <li>{@code drain}: {@link WorkerPool} with its defaults: the queue intake (16 items), a
 *       30-second item timeout, no retries, no metrics sink;</li>
 *   <li>{@code drainSink}: the same with a metrics sink that adds up the lengths of the events'
 *       names and details (so that they are really built), as in {@link PoolBench};</li>
 *   <li>{@code drainSettled}: {@code drain} with the settlement hook on and a settler that only
 *       counts what it is given (the hook's own cost, without a store), as in
 *       {@link SettlementBench}; each run checks that every item was settled. {@code drainSink}
 *       and {@code drainSettled} price an option against {@code drain}, not drain against a peer:
 *       {@code benchmarks/run peers} runs them at 8 and 64 workers only;</li>
 *   <li>{@code fork}: a bare {@code StructuredTaskScope} with the {@code allSuccessfulOrThrow}
 *       joiner, one {@code fork} per item under a {@code Semaphore(workers)}. The results reach
 *       the caller only after {@code join}: the owner is busy forking until then;</li>
 *   <li>{@code gatherers}: {@code stream.gather(Gatherers.mapConcurrent(workers, f))}. The
 *       results come in the items' order, so one slow item holds back those after it;</li>
 *   <li>{@code executor}: {@code Executors.newVirtualThreadPerTaskExecutor()}, an
 *       {@code ExecutorCompletionService} and a {@code Semaphore(workers)}; the caller takes the
 *       completed results between submits, then the rest;</li>
 *   <li>{@code platformPool}: the same on {@code Executors.newFixedThreadPool(workers)}. It runs
 *       at {@value #MAX_PLATFORM_WORKERS} workers at most: at more, a run would measure the
 *       creation of a thousand platform threads, not the pool, so {@link #setUp} throws, JMH
 *       reports that combination as failed and goes on with the next. Pass
 *       {@code -p workers=8,64} when {@code platformPool} is among the peers;</li>
 *   <li>{@code jox}: jox's {@code Channel}s: a producer sends the items into a buffered channel
 *       of 16, {@code workers} threads receive and handle them and send the results into a
 *       channel of {@code workers} that the caller receives from. {@code done()} ends each
 *       channel, {@code error()} carries a failure to the other side. The threads are forks of one
 *       {@code StructuredTaskScope};</li>
 *   <li>{@code reactor}: Reactor's {@code Flux.fromIterable(items).flatMap(item ->
 *       Mono.fromCallable(…).subscribeOn(s).timeout(30 s).retryWhen(Retry.max(1).filter(timeout)),
 *       workers)}, taken by the caller through {@code toIterable()}. {@code s} is
 *       {@code Schedulers.fromExecutorService} over a virtual-thread-per-task executor, and the
 *       timeouts have a timer thread of the run's own (as drain's watchdog is), so that the run
 *       leaves no thread behind; Reactor's shared {@code parallel()} scheduler, its default for
 *       timeouts, would outlive it. The retry is there as a user matching drain's options would
 *       write it; no item times out here, so it never retries;</li>
 *   <li>{@code structure}: drain's structure from JDK parts, as in {@link PoolLadderBench}: a
 *       producer fills an {@code ArrayBlockingQueue(16)}, then puts one stop marker per worker;
 *       {@code workers} forks of one scope take the items and run each attempt in a scope of its
 *       own (open, fork one subtask, join, close); the results go into an
 *       {@code ArrayBlockingQueue(workers)} that the caller drains until every worker has put its
 *       done marker;</li>
 *   <li>{@code structureTimed}: the same, but each attempt's scope has the item timeout (30 s), as
 *       a user of the JDK alone would give an attempt a deadline: {@code open(joiner, cf ->
 *       cf.withTimeout(…))}, which starts a timer per attempt (drain keeps its deadlines with one
 *       watchdog thread per run instead);</li>
 *   <li>{@code structureOneScope}: the same, but each worker opens one scope for all its
 *       attempts and forks each into it, waiting on a semaphore for its end: no scope per
 *       attempt.</li>
 * </ul>
 *
 * <h2>What the peers leave to their user</h2>
 * Only {@code drain} keeps all five; the others are as fast as they can be because they keep
 * fewer. None of them fails here (the handlers never throw nor hang), so the table is what a
 * reader weighs against the scores, not what the scores show.
 * <table class="striped">
 *   <caption>drain's guarantees, and how much of each a peer gives</caption>
 *   <thead>
 *     <tr><th scope="col">peer</th><th scope="col">timeout that owns the attempt</th>
 *         <th scope="col">escalating interrupts</th><th scope="col">exact ledger</th>
 *         <th scope="col">bounded lead</th><th scope="col">stop and abort</th></tr>
 *   </thead>
 *   <tbody>
 *     <tr><th scope="row">drain</th><td>yes: the attempt is ended before it is retried or
 *         failed</td><td>yes: three rounds, then a {@code StuckAttempt}</td><td>yes: every
 *         item's fate, once</td><td>yes: {@code queueSize + workers + 1}</td><td>yes:
 *         {@code requestStop()} drains, {@code abort()} cancels and names what was left</td></tr>
 *     <tr><th scope="row">fork</th><td>no (a timeout for the whole scope only)</td><td>no: one
 *         interrupt, then {@code close()} waits as long as it takes</td><td>no: the first failure
 *         cancels the rest, unreported</td><td>the items, yes ({@code workers}); the results, no:
 *         all held until {@code join}</td><td>abort only, by interrupting the owner; no
 *         report</td></tr>
 *     <tr><th scope="row">gatherers</th><td>no</td><td>no: the other tasks are interrupted once,
 *         on a failure</td><td>no</td><td>yes: a window of {@code workers}, in order</td>
 *         <td>abort only, when the stream short-circuits or fails; no report</td></tr>
 *     <tr><th scope="row">executor, platformPool</th><td>no: {@code Future.get(timeout)} stops
 *         the waiting, not the task</td><td>no: {@code shutdownNow()} interrupts once, then
 *         {@code close()} waits</td><td>no</td><td>yes: the semaphore</td><td>by hand:
 *         {@code shutdown()}, {@code shutdownNow()}; no report</td></tr>
 *     <tr><th scope="row">jox</th><td>no</td><td>no</td><td>no: {@code error()} drops the
 *         buffered items</td><td>yes: {@code 16 + 2 × workers}</td><td>by hand: {@code done()}
 *         on the intake drains, {@code error()} drops; no report</td></tr>
 *     <tr><th scope="row">reactor</th><td>partly: it cancels the attempt with one interrupt and
 *         retries at once, while an attempt that ignores the interrupt still runs</td><td>no</td>
 *         <td>no</td><td>yes: {@code flatMap}'s concurrency and the prefetch buffers</td>
 *         <td>abort only, by cancelling the subscription; no report</td></tr>
 *     <tr><th scope="row">structure, structureTimed, structureOneScope</th><td>{@code structureTimed}
 *         only: the scope's timeout cancels the attempt with one interrupt, then {@code close()}
 *         waits as long as it takes</td><td>no: {@code close()}
 *         interrupts once, then waits</td><td>no ({@code structureOneScope}'s {@code awaitAll}
 *         joiner even drops a failed attempt's exception: only the count check below would see
 *         it)</td><td>yes: {@code 16 + 2 × workers}</td><td>no: by hand, closing the scope
 *         aborts; no report</td></tr>
 *   </tbody>
 * </table>
 *
 * <h2>Checks</h2>
 * Before a peer is measured, {@link #setUp} runs it once over {@value #CHECK_ITEMS} distinct items
 * with the no-op handler and fails, naming the peer, unless every item comes back exactly once.
 * Every invocation then checks that it delivered as many results as it had items. Every run
 * closes what it opened (pool, scopes, executors, the timer), so no thread outlives the
 * invocation that started it; {@code drain} also checks that none of its threads is left.
 *
 * <h2>Items and scores</h2>
 * {@code handler=noop}: {@value #NOOP_ITEMS} items, a handler that returns its item, so the cost
 * is all overhead. {@code sleep1ms} and {@code sleep10ms}: {@code workers × }{@value #ROUNDS}
 * items, a handler that sleeps, so a run lasts about {@value #ROUNDS} sleeps at any width. The
 * item count depends on the parameters, and {@code @OperationsPerInvocation} takes a constant, so
 * the score is the time per run (one invocation), and the secondary result {@code items}, an
 * operations counter that each invocation advances by its item count, is the time per item: the
 * figure to compare.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 5, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"--enable-preview", "-Xms2g", "-Xmx2g"})
public class PeersBench {
    static final int NOOP_ITEMS = PoolBench.NOOP_ITEMS;
    static final int ROUNDS = 4;
    static final int CHECK_ITEMS = 2_000;
    /** The intake's size and the item timeout: drain's defaults, as in {@link PoolBench}. */
    static final int QUEUE_SIZE = PoolBench.QUEUE_SIZE;
    static final Duration ITEM_TIMEOUT = PoolBench.ITEM_TIMEOUT;
    static final int MAX_PLATFORM_WORKERS = 64;

    @Param({"drain", "drainSink", "drainSettled", "fork", "gatherers", "executor", "platformPool", "jox", "reactor", "structure",
            "structureTimed", "structureOneScope"})
    String peer = "";

    @Param({"noop", "sleep1ms", "sleep10ms"})
    String handler = "";

    @Param({"8", "64", "1024", "10000"})
    int workers;

    /** The items 0, 1, 2, …; a run takes the first {@link #count}. */
    private List<Integer> items = List.of();
    /** What {@link #handler} names. */
    private Handler<Integer, Integer> handle = item -> item;
    /** How many items one invocation runs. */
    private int count;

    @Setup(Level.Trial)
    public void setUp() {
        if (peer.equals("platformPool") && workers > MAX_PLATFORM_WORKERS) {
            throw new UnsupportedOperationException("platformPool runs at " + MAX_PLATFORM_WORKERS
                    + " workers at most (a platform thread per worker), not " + workers + ": pass -p workers=8,64");
        }
        handle = switch (handler) {
            case "noop" -> item -> item;
            case "sleep1ms" -> sleeping(Duration.ofMillis(1));
            case "sleep10ms" -> sleeping(Duration.ofMillis(10));
            default -> throw new IllegalArgumentException("unknown handler " + handler);
        };
        count = handler.equals("noop") ? NOOP_ITEMS : workers * ROUNDS;
        Integer[] all = new Integer[Math.max(count, CHECK_ITEMS)];
        Arrays.setAll(all, i -> i);
        items = List.of(all);
        checkExactlyOnce();
    }

    @Benchmark
    public void run(PoolBench.Items counter, Blackhole bh) {
        List<Integer> source = items.subList(0, count);
        Delivered delivered = new Delivered(bh);
        Threads.runAll(Thread.ofVirtual(), List.of(() -> runPeer(source, handle, delivered)));
        if (delivered.count != count) { // read after the join, which orders it after the caller's writes
            throw new IllegalStateException(peer + " delivered " + delivered.count + " results for " + count + " items");
        }
        counter.items += count;
    }

    /** Runs {@link #peer} once over {@value #CHECK_ITEMS} distinct items; each must come back exactly once. */
    private void checkExactlyOnce() {
        List<Integer> source = items.subList(0, CHECK_ITEMS);
        Tally tally = new Tally(CHECK_ITEMS);
        Threads.runAll(Thread.ofVirtual(), List.of(() -> runPeer(source, item -> item, tally)));
        tally.check(peer);
    }

    /** One run of {@link #peer}, on the caller's virtual thread; {@code deliver} takes each result there. */
    private void runPeer(List<Integer> source, Handler<Integer, Integer> work, Consumer<Integer> deliver)
            throws Exception {
        switch (peer) {
            case "drain" -> drain(WorkerPool.builder(work), source, workers, deliver);
            case "drainSink" -> {
                LongAdder chars = new LongAdder();
                drain(WorkerPool.builder(work).metrics((event, detail) -> chars.add(event.id().length() + detail.length())),
                        source, workers, deliver);
            }
            case "drainSettled" -> {
                SettlementBench.Counting counting = new SettlementBench.Counting();
                drain(WorkerPool.builder(work).settler(counting), source, workers, deliver);
                if (counting.settled.sum() != source.size()) {
                    throw new IllegalStateException("drain settled " + counting.settled.sum() + " of " + source.size() + " items");
                }
            }
            case "fork" -> fork(source, workers, work, deliver);
            case "gatherers" -> gatherers(source, workers, work, deliver);
            case "executor" -> {
                try (ExecutorService virtualThreads = Executors.newVirtualThreadPerTaskExecutor()) {
                    completionService(virtualThreads, source, workers, work, deliver);
                }
            }
            case "platformPool" -> {
                try (ExecutorService platformThreads = Executors.newFixedThreadPool(workers)) {
                    completionService(platformThreads, source, workers, work, deliver);
                }
            }
            case "jox" -> jox(source, workers, work, deliver);
            case "reactor" -> reactor(source, workers, work, deliver);
            case "structure" -> structure(source, workers, (intake, results) -> scopePerAttempt(work, intake, results), deliver);
            case "structureTimed" -> structure(source, workers, (intake, results) -> timedScopePerAttempt(work, intake, results), deliver);
            case "structureOneScope" -> structure(source, workers, (intake, results) -> oneScope(work, intake, results), deliver);
            default -> throw new IllegalArgumentException("unknown peer " + peer);
        }
    }

    private static Handler<Integer, Integer> sleeping(Duration pause) {
        return item -> {
            Thread.sleep(pause);
            return item;
        };
    }

    /** drain: the pool the builder describes, with {@code workers} and otherwise its defaults. */
    private static void drain(WorkerPool.Builder<Integer, Integer> builder, List<Integer> source, int workers,
                              Consumer<Integer> deliver) {
        WorkerPool<Integer, Integer> pool = builder.workers(workers).name("peers").build();
        try (Results<Integer, Integer> results = pool.run(source)) {
            while (results.hasNext()) {
                deliver.accept(results.next());
            }
        }
        if (pool.liveThreads() != 0) {
            throw new IllegalStateException("drain left " + pool.liveThreads() + " threads running");
        }
    }

    /** One fork per item under a semaphore; the joiner keeps the subtasks, read after {@code join}. */
    @SuppressWarnings("preview")
    private static void fork(List<Integer> source, int workers, Handler<Integer, Integer> handler,
                             Consumer<Integer> deliver) throws InterruptedException {
        Semaphore permits = new Semaphore(workers);
        try (var scope = java.util.concurrent.StructuredTaskScope.open(
                java.util.concurrent.StructuredTaskScope.Joiner.<Integer>allSuccessfulOrThrow())) {
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
            scope.join().forEach(subtask -> deliver.accept(subtask.get()));
        }
    }

    /** {@code mapConcurrent}: a virtual thread per item, at most {@code workers} at once, results in order. */
    private static void gatherers(List<Integer> source, int workers, Handler<Integer, Integer> handler,
                                  Consumer<Integer> deliver) {
        source.stream()
                .gather(Gatherers.mapConcurrent(workers, (Integer item) -> unchecked(handler, item)))
                .forEach(deliver);
    }

    /** The handler, for a mapper that may throw only unchecked exceptions. */
    private static Integer unchecked(Handler<Integer, Integer> handler, Integer item) {
        try {
            return handler.handle(item);
        } catch (RuntimeException e) {
            throw e;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt(); // cancelled: the status stays set for whoever looks next
            throw new IllegalStateException("interrupted while handling item " + item, e);
        } catch (Exception e) {
            throw new IllegalStateException("the handler failed on item " + item, e);
        }
    }

    /**
     * {@code executor} and {@code platformPool}: a submit per item under a semaphore; after each
     * submit the caller takes what has completed, and at the end the rest. The caller's executor
     * closes after, waiting for its threads.
     */
    private static void completionService(ExecutorService executor, List<Integer> source, int workers,
                                          Handler<Integer, Integer> handler, Consumer<Integer> deliver)
            throws InterruptedException, ExecutionException {
        CompletionService<Integer> completion = new ExecutorCompletionService<>(executor);
        Semaphore permits = new Semaphore(workers);
        int pending = 0;
        for (Integer item : source) {
            permits.acquire();
            completion.submit(() -> {
                try {
                    return handler.handle(item);
                } finally {
                    permits.release();
                }
            });
            pending++;
            for (Future<Integer> done = completion.poll(); done != null; done = completion.poll()) {
                deliver.accept(done.get());
                pending--;
            }
        }
        for (; pending > 0; pending--) {
            deliver.accept(completion.take().get());
        }
    }

    /**
     * jox: producer → channel of 16 → {@code workers} threads → channel of {@code workers} → the
     * caller. The last worker to finish says {@code done()} to the results; a failure closes both
     * channels with {@code error()}, so that nobody stays blocked on them.
     */
    @SuppressWarnings("preview")
    private static void jox(List<Integer> source, int workers, Handler<Integer, Integer> handler,
                            Consumer<Integer> deliver) throws InterruptedException {
        Channel<Integer> intake = Channel.newBufferedChannel(QUEUE_SIZE);
        Channel<Integer> results = Channel.newBufferedChannel(workers);
        AtomicInteger running = new AtomicInteger(workers);
        try (var scope = java.util.concurrent.StructuredTaskScope.open()) {
            scope.fork(() -> {
                try {
                    for (Integer item : source) {
                        intake.send(item);
                    }
                    intake.done();
                } catch (Throwable e) {
                    results.errorOrClosed(e); // the caller's receive() throws it
                    throw e;
                }
                return null;
            });
            for (int w = 0; w < workers; w++) {
                scope.fork(() -> {
                    try {
                        while (intake.receiveOrClosed() instanceof Integer item) { // until done, or an error
                            results.send(handler.handle(item));
                        }
                    } catch (Throwable e) {
                        intake.errorOrClosed(e); // stops the producer and the other workers
                        results.errorOrClosed(e); // the caller's receive() throws it
                        throw e;
                    } finally {
                        if (running.decrementAndGet() == 0) {
                            results.doneOrClosed();
                        }
                    }
                    return null;
                });
            }
            try {
                while (true) {
                    deliver.accept(results.receive());
                }
            } catch (ChannelDoneException done) {
                // every worker has finished, and every result has been received
            }
            scope.join();
        }
    }

    /**
     * Reactor: {@code flatMap} with a concurrency of {@code workers}, each item a {@code Mono} on a
     * virtual thread with a timeout and a retry. Both executors are the run's own and close after
     * it: the virtual threads' first, then the timer's.
     */
    private static void reactor(List<Integer> source, int workers, Handler<Integer, Integer> handler,
                                Consumer<Integer> deliver) {
        try (ScheduledThreadPoolExecutor timer = new ScheduledThreadPoolExecutor(1);
             ExecutorService virtualThreads = Executors.newVirtualThreadPerTaskExecutor()) {
            timer.setRemoveOnCancelPolicy(true); // as in Reactor's own schedulers: a finished item's timer leaves at once
            timer.setExecuteExistingDelayedTasksAfterShutdownPolicy(false); // close() does not wait for timers
            Scheduler onVirtualThreads = Schedulers.fromExecutorService(virtualThreads);
            Scheduler timeouts = Schedulers.fromExecutorService(timer);
            Flux.fromIterable(source)
                    .flatMap(item -> Mono.fromCallable(() -> handler.handle(item))
                                    .subscribeOn(onVirtualThreads)
                                    .timeout(ITEM_TIMEOUT, timeouts)
                                    .retryWhen(Retry.max(1).filter(TimeoutException.class::isInstance)),
                            workers)
                    .toIterable()
                    .forEach(deliver);
        }
    }

    /** What {@code structure}'s producer and workers put into a queue besides items and results. */
    private enum Marker {
        /** In the intake, one per worker after the last item: that worker stops. */
        NO_MORE_ITEMS,
        /** In the results, one per worker: that worker has stopped. */
        WORKER_DONE
    }

    /** How a worker of {@link #structure} handles items until it takes {@link Marker#NO_MORE_ITEMS}. */
    @FunctionalInterface
    private interface Worker {
        void work(BlockingQueue<Object> intake, BlockingQueue<Object> results) throws Exception;
    }

    /**
     * drain's structure from JDK parts: producer → {@code ArrayBlockingQueue(16)} →
     * {@code workers} forks → {@code ArrayBlockingQueue(workers)} → the caller, in one scope. An
     * {@code ArrayBlockingQueue} has no shutdown, so stop markers end each side: one per worker in
     * the intake, one from each worker in the results (put in a {@code finally}, so that a failed
     * worker is counted too, and the caller reaches {@code join}, which throws the failure).
     */
    @SuppressWarnings("preview")
    private static void structure(List<Integer> source, int workers, Worker worker, Consumer<Integer> deliver)
            throws InterruptedException {
        BlockingQueue<Object> intake = new ArrayBlockingQueue<>(QUEUE_SIZE);
        BlockingQueue<Object> results = new ArrayBlockingQueue<>(workers);
        try (var scope = java.util.concurrent.StructuredTaskScope.open()) {
            scope.fork(() -> {
                for (Integer item : source) {
                    intake.put(item);
                }
                for (int w = 0; w < workers; w++) {
                    intake.put(Marker.NO_MORE_ITEMS);
                }
                return null;
            });
            for (int w = 0; w < workers; w++) {
                scope.fork(() -> {
                    try {
                        worker.work(intake, results);
                    } finally {
                        results.put(Marker.WORKER_DONE);
                    }
                    return null;
                });
            }
            int done = 0;
            while (done < workers) {
                if (results.take() instanceof Integer result) {
                    deliver.accept(result);
                } else {
                    done++;
                }
            }
            scope.join();
        }
    }

    /** {@code structure}: each attempt in a scope of its own (open, fork one subtask, join, close). */
    @SuppressWarnings("preview")
    private static void scopePerAttempt(Handler<Integer, Integer> handler, BlockingQueue<Object> intake,
                                        BlockingQueue<Object> results) throws InterruptedException {
        while (intake.take() instanceof Integer item) {
            try (var attempt = java.util.concurrent.StructuredTaskScope.<Integer>open()) {
                var subtask = attempt.fork(() -> handler.handle(item));
                attempt.join();
                results.put(subtask.get());
            }
        }
    }

    /** {@code structureTimed}: as {@link #scopePerAttempt}, each attempt's scope with the item timeout. */
    @SuppressWarnings("preview")
    private static void timedScopePerAttempt(Handler<Integer, Integer> handler, BlockingQueue<Object> intake,
                                             BlockingQueue<Object> results) throws InterruptedException {
        while (intake.take() instanceof Integer item) {
            try (var attempt = java.util.concurrent.StructuredTaskScope.open(
                    java.util.concurrent.StructuredTaskScope.Joiner.<Integer>awaitAllSuccessfulOrThrow(),
                    cf -> cf.withTimeout(ITEM_TIMEOUT))) {
                var subtask = attempt.fork(() -> handler.handle(item));
                attempt.join();
                results.put(subtask.get());
            }
        }
    }

    /**
     * {@code structureOneScope}: one scope for all the worker's attempts, each forked into it. The
     * worker may not read a subtask's outcome before {@code join}, which it calls once, at the end;
     * so the attempt puts its result itself, and a semaphore tells the worker that it has ended
     * (one attempt at a time, as in the pool). The {@code awaitAll} joiner never cancels the scope:
     * with the default one, a failed attempt would cancel it, the next fork would start no thread,
     * and the worker would wait forever.
     */
    @SuppressWarnings("preview")
    private static void oneScope(Handler<Integer, Integer> handler, BlockingQueue<Object> intake,
                                 BlockingQueue<Object> results) throws InterruptedException {
        Semaphore ended = new Semaphore(0);
        try (var attempts = java.util.concurrent.StructuredTaskScope.open(
                java.util.concurrent.StructuredTaskScope.Joiner.<Object>awaitAll())) {
            while (intake.take() instanceof Integer item) {
                attempts.fork(() -> {
                    try {
                        results.put(handler.handle(item));
                    } finally {
                        ended.release();
                    }
                    return null;
                });
                ended.acquire();
            }
            attempts.join();
        }
    }

    /** Takes each result of a measured run on the caller's thread: consumes and counts it. */
    private static final class Delivered implements Consumer<Integer> {
        private final Blackhole bh;
        /** Written by the caller's thread only; read by the benchmark thread after joining it. */
        private int count;

        Delivered(Blackhole bh) {
            this.bh = bh;
        }

        @Override
        public void accept(Integer result) {
            bh.consume(result);
            count++;
        }
    }

    /** Counts how often each of the items {@code 0 … n − 1} comes back, for the exactly-once check. */
    private static final class Tally implements Consumer<Integer> {
        /** How often each item came back; written by the caller's thread only, read after joining it. */
        private final int[] times;
        /** Results that were never items. */
        private int strays;

        Tally(int n) {
            this.times = new int[n];
        }

        @Override
        public void accept(Integer result) {
            if (result >= 0 && result < times.length) {
                times[result]++;
            } else {
                strays++;
            }
        }

        void check(String peer) {
            for (int item = 0; item < times.length; item++) {
                if (times[item] != 1) {
                    throw new IllegalStateException(peer + " delivered item " + item + " " + times[item]
                            + " times, not exactly once");
                }
            }
            if (strays != 0) {
                throw new IllegalStateException(peer + " delivered " + strays + " results that were never items");
            }
        }
    }
}
