package dev.drain.pool;

import dev.drain.safe.Fatal;
import dev.drain.safe.SafeText;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.ToIntFunction;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;

/**
 * One run of a worker pool that can be stopped gracefully or in an emergency without losing,
 * duplicating or leaking anything: {@code workers} threads take items from a bounded intake, handle
 * each on a thread of its own under a per-item timeout, retry what is retryable, and deliver the
 * results in completion order. A pool runs once, like a {@code StructuredTaskScope}; for another
 * run, build another pool from the same {@link Builder} (decision 0029).
 *
 * <h2>What it guarantees</h2>
 * The clauses of {@code specs/worker-pool.md}, in short: first the ten points of the contract
 * (WP-1 … WP-10),
 * <ol>
 *   <li>Bounded intake: the source is never more than {@code queueSize + workers + 1} items ahead
 *       of finished work.</li>
 *   <li>Exactly once: every item pulled is handled once, every result delivered once.</li>
 *   <li>Per-item timeout: an attempt that outlives {@code itemTimeout} is a failure (retryable if
 *       {@link java.util.concurrent.TimeoutException} is), never a hang.</li>
 *   <li>Escalating cancellation: a handler that swallows an interrupt is interrupted again,
 *       {@code itemTimeout} later, three rounds in all; one that outlives all three is reported
 *       as a {@link StuckAttempt} failure (the one documented limit: the run ends only when it
 *       returns).</li>
 *   <li>Retries: an exception of a {@linkplain Builder#retryable retryable} type is retried up to
 *       {@code maxRetries} times.</li>
 *   <li>Permanent failures stop intake, let the queued work drain, and end the run with one
 *       {@link PoolFailure} holding exactly them.</li>
 *   <li>{@link #requestStop()} stops intake, drains, and ends the run normally.</li>
 *   <li>The {@linkplain MetricsSink metrics sink} may fail; the pool counts it and carries on.</li>
 *   <li>Context isolation: each attempt sees its own {@link ItemContext}, through a
 *       {@link ScopedValue}, and nothing another attempt sets.</li>
 *   <li>No leaks: when the run has ended, every thread it started has finished.</li>
 * </ol>
 * then what they take for granted (WP-11 … WP-22), and what a service needs (WP-23 … WP-29):
 * <ol start="11">
 *   <li>The types say what they mean: no raw type and no bare {@code Object} in a public
 *       signature.</li>
 *   <li>{@link #abort()}, the emergency path: queued items dropped and named, attempts cancelled
 *       at once.</li>
 *   <li>Abandon: {@link Results#close()} before the end ends the run as an abort does.</li>
 *   <li>An interrupted consumer abandons the run and gets a
 *       {@link java.util.concurrent.CancellationException}.</li>
 *   <li>Observability: the sink's {@link MetricsEvent}s, JDK Flight Recorder events, live
 *       {@link PoolStats}.</li>
 *   <li>Every setting checked at {@link Builder#build()}; the source closed once; a pool runs
 *       once.</li>
 *   <li>The caller owns the run: only the thread that called {@code run()} iterates and closes.</li>
 *   <li>Every callback may throw anything, and the pool still ends with every fate known.</li>
 *   <li>One lifecycle: every transition is a method of one state machine, each idempotent.</li>
 *   <li>A forgotten {@code close()} never hangs: the run ends itself, abandoned, and says so.</li>
 *   <li>At most {@code workers} handlers run at any moment.</li>
 *   <li>Every fate is settled with the store, once, through the {@linkplain Builder#settler
 *       settler}.</li>
 *   <li>A run may outlive its bad items ({@link OnFailure#CONTINUE}): each is settled as failed,
 *       counted, logged, and the run goes on.</li>
 *   <li>A graceful stop may have a deadline ({@link #requestStop(Duration)}), past which it is an
 *       abort, and the outcome says so.</li>
 *   <li>Work whose result nobody wants ({@link #forEach}) has no null trap and needs no reader;
 *       {@link #drain} runs a pool to its end in one call.</li>
 *   <li>What nobody else is told is logged on {@code System.Logger} {@code dev.drain.pool}.</li>
 *   <li>The JVM's shutdown (SIGTERM) stops the runs drained through a {@link StopOnShutdown} with
 *       a deadline, and holds the JVM until they have ended, or the deadline plus a grace.</li>
 *   <li>A retry may wait ({@link Builder#retryBackoff}) without holding a worker.</li>
 *   <li>A retry that waits long may be its store's ({@link Builder#deferRetriesLongerThan}), with
 *       its attempts, so that it holds nothing of the run and outlives it.</li>
 * </ol>
 *
 * <h2>A batch or a service</h2>
 * A batch reads its results: {@code try (var results = pool.run(source)) { for (var r : results) … }},
 * with {@link #builder}, whose first permanent failure stops the run (WP-6). A service does its work
 * as a side effect and goes on past its bad items: {@code WorkerPool.forEach(job -> work(job))}
 * with a {@linkplain Builder#settler settler}, then {@code pool.drain(source)} on the service's
 * thread, under a {@link StopOnShutdown}, which turns SIGTERM into
 * {@code pool.requestStop(Duration.ofSeconds(25))} and holds the JVM until the run has ended.
 *
 * <h2>How it runs</h2>
 * {@link #run(Iterator)} opens the run's {@code StructuredTaskScope} on the calling thread, starts
 * the run in it and returns its {@link Results} at once; the calling thread owns them, iterates
 * them and closes them, in a try-with-resources statement. Every thread of the run hangs off that
 * scope, so the caller's {@link ScopedValue} bindings reach every handler, and a thread dump shows
 * the run's tree under the caller. Results reach the consumer through a bounded queue, so a slow
 * consumer slows the workers, which slows the intake, which slows the pull from the source. At most
 * {@code workers} handlers run at any moment, and timeouts, {@code abort()} and {@code close()}
 * land even while handlers compute on every core: the run's watchdog is a platform thread.
 *
 * <p>Close the results. If the owner ends, or closes an enclosing scope, without closing them, the
 * JDK closes the run's scope under the run; the run notices within about 100 ms, ends itself as
 * {@linkplain RunOutcome.Abandoned abandoned} (its threads end, its books stay exact) and logs a
 * {@code WARNING} on the {@code dev.drain.pool} logger naming the run and its owner (WP-20).
 *
 * <h2>How it stops</h2>
 * <ul>
 *   <li>The source runs out: the queued work drains and the run completes.</li>
 *   <li>{@link #requestStop()} (graceful, the deployment path): no more items are pulled, the
 *       queued and in-flight work drains, the run completes normally;
 *       {@link #requestStop(Duration)} turns it into an abort if it outlives its deadline.</li>
 *   <li>{@link #abort()} (emergency): queued items are dropped and reported, in-flight attempts
 *       are cancelled with the escalating interrupts, and the iteration ends with
 *       {@link PoolAborted} naming what was left undone.</li>
 *   <li>{@link Results#close()} before the end (abandon): as abort, and {@code close()} waits until
 *       every thread of the run has finished.</li>
 * </ul>
 * {@code requestStop()} and {@code abort()} return at once, are idempotent, and may be called from
 * any thread, the pool's own included, before or during the run:
 * {@snippet file="TourSnippets.java" region="stop"}
 *
 * <h2>Callbacks</h2>
 * The handler, the metrics sink, the source and an item's {@code toString} may throw anything; the
 * pool never hangs on it and never loses an item's fate. A handler's throwable fails its attempt;
 * the sink's are counted; the source's end the run as {@link RunOutcome.SourceFailed}; a
 * {@link VirtualMachineError} from the sink or the source ends the run as
 * {@link RunOutcome.Crashed}. What an item's {@code toString} or an exception's message throws is
 * only described, in place of the text: text never decides a fate.
 * {@code specs/worker-pool.md} (WP-18) lists each case.
 *
 * <h2>Memory consistency effects</h2>
 * Actions in the thread that pulls an item from the source happen-before the attempts that handle
 * it; actions in an attempt happen-before the consumer receives its result; actions in every
 * thread of the run happen-before the iteration reaches the end, and before {@code close()}
 * returns.
 *
 * <h2>Nulls</h2>
 * Arguments may not be {@code null}; the source may not yield {@code null} (the run then ends as
 * {@link RunOutcome.SourceFailed}); a handler that returns {@code null} fails that attempt with a
 * {@link NullPointerException}. A {@link SideEffect} of {@link #forEach} returns nothing: for it,
 * returning is success.
 *
 * @param <T> the item type
 * @param <R> the result type
 */
public final class WorkerPool<T, R> {

    /** Which intake carries items from the producer to the workers; see {@code specs/worker-pool.md}. */
    public enum IntakeKind {
        /** A bounded {@link dev.drain.queue.ShutdownQueue}: one {@code shutdown} call stops everyone. */
        SHUTDOWN_QUEUE,
        /** A {@link java.util.concurrent.LinkedBlockingQueue} bounded at {@code queueSize}, with one stop marker per worker. */
        SENTINEL
    }

    /**
     * What a permanent failure (a failure that is not retried) does to the run; see
     * {@link Builder#onFailure} and decision 0060.
     */
    public enum OnFailure {
        /**
         * The seed's rule (WP-6): intake stops at the first permanent failure, the queued and
         * in-flight work drains, and the run ends {@link RunOutcome.Failed}, its iteration with one
         * {@link PoolFailure} holding every failure. The default of {@link #builder}: a batch
         * whose results are read stops at its first bad item.
         */
        STOP,
        /**
         * A run that outlives its bad items (WP-23): the failure is recorded, counted, settled as
         * failed (a durable settler dead-letters it), reported to the sink and logged, and the run
         * goes on pulling; it ends {@link RunOutcome.Completed}, keeping the first
         * {@link Builder#failuresKept} failures with their causes. The default of
         * {@link #forEach}: a service has nobody to throw a failure at mid-run.
         */
        CONTINUE
    }

    private static final AtomicLong POOLS = new AtomicLong();

    private final PoolConfig<T, R> config;
    /** The run's books, kept from the pool's creation: a pool runs once. */
    private final Ledger<T> ledger;
    private final Reporter reporter;
    /** Where the ledger's fates go: the settler, if there is one (WP-22). */
    private final Settling<T> settling;
    /** The run's one state, from NEW to CLOSED; every transition is a method of it. */
    private final Lifecycle<T> lifecycle;

    private WorkerPool(PoolConfig<T, R> config) {
        this.config = config;
        this.reporter = new Reporter(config.metrics());
        this.settling = new Settling<>(config.settler(), config.settleBatch(), config.batchesInFlight(), reporter);
        this.ledger = new Ledger<>(settling, reporter, config.stopsAtFailure() ? Integer.MAX_VALUE : config.failuresKept());
        this.lifecycle = new Lifecycle<>(config.name(), ledger, reporter, config.stopsAtFailure());
    }

    /**
     * Starts configuring a pool.
     *
     * @param handle what to do with each item
     * @param <T> the item type
     * @param <R> the result type
     * @return a builder with the defaults: 4 workers, a queue of 16, a 30-second item timeout,
     *     nothing retryable, the {@code SHUTDOWN_QUEUE} intake, no metrics, no settler
     */
    public static <T, R> Builder<T, R> builder(Handler<? super T, ? extends R> handle) {
        return new Builder<>(handle, true, OnFailure.STOP);
    }

    /**
     * Starts configuring a pool whose work is a side effect: nobody wants a result, so returning is
     * success (no {@code null} trap), nothing is delivered to the {@link Results} (a run makes
     * progress whether or not anyone iterates them; {@link #drain} runs one to its end in one
     * call), and a permanent failure does not end the run: it is settled as failed, logged, and
     * the run goes on ({@link OnFailure#CONTINUE}, unless {@link Builder#onFailure} says
     * otherwise). WP-23, WP-25.
     *
     * @param action what to do with each item
     * @param <T> the item type
     * @return a builder with the defaults of {@link #builder}, but for {@code onFailure}
     *     ({@code CONTINUE}, keeping {@value Builder#DEFAULT_FAILURES_KEPT} failures)
     */
    @SuppressWarnings("NullAway") // Void's one value is null; a forEach pool delivers no result, so none is read
    public static <T> Builder<T, Void> forEach(SideEffect<? super T> action) {
        Objects.requireNonNull(action, "action");
        Handler<T, Void> handler = item -> {
            action.accept(item);
            return null;
        };
        return new Builder<>(handler, false, OnFailure.CONTINUE);
    }

    /**
     * Starts the run over {@code source} and returns its results at once. The calling thread owns
     * them: only it iterates and closes them. The source is read by the pool's producer thread
     * only, one item at a time, never more than {@code queueSize + workers + 1} items ahead of
     * finished work.
     *
     * @param source the items
     * @return the results, in completion order; close them (try-with-resources)
     * @throws IllegalStateException if this pool has run before
     */
    public Results<T, R> run(Iterator<? extends T> source) {
        Objects.requireNonNull(source, "source");
        return start(new Source<>(() -> source, null));
    }

    /**
     * Starts the run over {@code source}'s iterator.
     *
     * @param source the items
     * @return the results, in completion order; close them (try-with-resources)
     * @throws IllegalStateException if this pool has run before
     * @see #run(Iterator)
     */
    public Results<T, R> run(Iterable<? extends T> source) {
        Objects.requireNonNull(source, "source");
        return start(new Source<>(source::iterator, null)); // iterator() is asked for by the producer
    }

    /**
     * Starts the run over {@code source}, which the pool closes exactly once, when it stops pulling
     * from it (or at once, if this pool has run before).
     *
     * @param source the items
     * @return the results, in completion order; close them (try-with-resources)
     * @throws IllegalStateException if this pool has run before
     * @see #run(Iterator)
     */
    public Results<T, R> run(Stream<? extends T> source) {
        Objects.requireNonNull(source, "source");
        return start(new Source<>(source::iterator, source::close)); // a used stream fails the run, and is closed
    }

    /**
     * Runs over {@code source} on the calling thread until the run has ended, reading and dropping
     * every result, and returns how it ended: the one call a service's {@code main} makes (WP-25). The calling thread owns the run as with {@link #run(Iterator)} (WP-17); another
     * thread ends it with {@link #requestStop()}, {@link #requestStop(Duration)} or {@link #abort()}.
     * Every ending is returned, as the sealed {@link RunOutcome} (a {@link RunOutcome.Failed}, an
     * {@link RunOutcome.Aborted} or an {@link RunOutcome.Unsettled} too), except a
     * {@link VirtualMachineError} that crashed the run, which is thrown. If the calling thread is
     * interrupted, the run is abandoned (WP-14), and this returns its
     * {@link RunOutcome.Abandoned} once every thread has ended, with the interrupt status set.
     *
     * @param source the items
     * @return the outcome
     * @throws IllegalStateException if this pool has run before
     */
    public RunOutcome<T> drain(Iterator<? extends T> source) {
        Objects.requireNonNull(source, "source");
        return drainToEnd(start(new Source<>(() -> source, null)));
    }

    /**
     * Runs over {@code source}'s iterator to the end, on the calling thread.
     *
     * @param source the items
     * @return the outcome
     * @throws IllegalStateException if this pool has run before
     * @see #drain(Iterator)
     */
    public RunOutcome<T> drain(Iterable<? extends T> source) {
        Objects.requireNonNull(source, "source");
        return drainToEnd(start(new Source<>(source::iterator, null)));
    }

    /**
     * Runs over {@code source} to the end, on the calling thread, and closes it.
     *
     * @param source the items
     * @return the outcome
     * @throws IllegalStateException if this pool has run before
     * @see #drain(Iterator)
     */
    public RunOutcome<T> drain(Stream<? extends T> source) {
        Objects.requireNonNull(source, "source");
        return drainToEnd(start(new Source<>(source::iterator, source::close)));
    }

    private static <T, R> RunOutcome<T> drainToEnd(RunResults<T, R> results) {
        try (results) {
            return results.drainToEnd();
        }
    }

    private RunResults<T, R> start(Source<T> source) {
        Run<T, R> run;
        try {
            run = new Run<>(config, source, lifecycle, ledger, reporter, settling);
            lifecycle.start(run);
        } catch (Throwable e) { // a second run, or the JVM out of memory: the run never started
            source.close(); // the source was handed to the pool: it is closed on every path
            throw e;
        }
        return run.open();
    }

    /**
     * Stops the run gracefully: no more items are pulled, the queued and in-flight work drains,
     * and the run ends normally (with a {@link PoolFailure} only if items failed). Returns at
     * once; idempotent; any thread; before the run, the run starts stopped.
     */
    public void requestStop() {
        lifecycle.requestStop();
    }

    /**
     * Stops the run gracefully, and aborts it if it has not ended within {@code within} (WP-24):
     * as {@link #requestStop()} at once; then, once {@code within} has passed, as {@link #abort()}
     * (in-flight attempts cancelled with the escalating interrupts, queued items dropped, every
     * unfinished item released to the settler), and the run ends {@link RunOutcome.Aborted} with
     * {@code deadlinePassed}. The deadline counts from this call; the earliest of several holds.
     * Returns at once; any thread; before the run, the run starts stopped, its deadline running;
     * after the run has ended, or once it is aborting, does nothing.
     *
     * @param within how long the graceful stop may take; zero or negative aborts at once
     */
    public void requestStop(Duration within) {
        Objects.requireNonNull(within, "within");
        requestStopAt(System.nanoTime() + (within.isNegative() ? 0 : PoolConfig.cappedNanos(within)));
    }

    /** As {@link #requestStop(Duration)}, with the deadline in {@link System#nanoTime()}'s terms ({@link StopOnShutdown}). */
    void requestStopAt(long deadline) {
        lifecycle.requestStop(deadline);
    }

    /**
     * Ends the run in an emergency: the queued items are dropped, in-flight attempts are cancelled
     * (with the escalating interrupts), and the iteration ends with a {@link PoolAborted} that
     * names them. Returns at once; idempotent; any thread; before the run, the run starts aborted;
     * after the run has ended, does nothing.
     */
    public void abort() {
        lifecycle.abort();
    }

    /** {@return how many threads this pool has started that are still running} Zero before and after a run. */
    public int liveThreads() {
        return config.threads().running();
    }

    /**
     * {@return the pool's settings in one line}, for example {@code workers=2, queueSize=2,
     * itemTimeout=PT0.1S, retries=[TimeoutException] x1, intake=SHUTDOWN_QUEUE, metrics=yes, settler=no}
     */
    public String settings() {
        return config.describe();
    }

    /** {@return the pool's name, the prefix of its threads' names} */
    public String name() {
        return config.name();
    }

    @Override
    public String toString() {
        return "WorkerPool[" + config.name() + ", " + config.describe() + ", " + lifecycle.phase() + "]";
    }

    /**
     * Fails now, with a message that names the flag, where the first {@code run()} would fail with
     * an {@link UnsupportedClassVersionError}: only {@code Structured} uses the preview API, so
     * only its class file is marked as needing preview features, and code compiled against drain
     * without {@code --enable-preview} compiles, starts, and would otherwise fail late.
     */
    private static void requirePreview() {
        try {
            Structured.load();
        } catch (UnsupportedClassVersionError e) {
            throw new UnsupportedOperationException("drain's WorkerPool needs JDK 25 run with --enable-preview:"
                    + " StructuredTaskScope, on which every run is built, is a preview API in Java 25, and this JVM ("
                    + Runtime.version() + ") cannot load it: " + e.getMessage() + ". Pass --enable-preview to java"
                    + " (and to javac and the test runner: drain's README, \"Use it in your project\")", e);
        }
    }

    /**
     * Configures a {@link WorkerPool}. Every setting is checked by {@link #build()}, which names
     * each one that is invalid (a {@code null} handler or {@code itemTimeout} included); the
     * other setters throw {@link NullPointerException} at once when given {@code null}.
     *
     * @param <T> the item type
     * @param <R> the result type
     */
    public static final class Builder<T, R> {
        /**
         * The most workers a pool may have. Each worker costs a virtual thread and a watch for the
         * whole run (and, with the sentinel intake, a stop marker), so a small heap needs fewer
         * workers; {@code benchmarks/results/heavy-runs.md} has what this many took.
         */
        public static final int MAX_WORKERS = 100_000;

        /** How many settlements a {@link Settler} is given at most per call, unless {@link #settleBatch} says otherwise. */
        public static final int DEFAULT_SETTLE_BATCH = 64;

        /** The largest {@link #settleBatch}. */
        public static final int MAX_SETTLE_BATCH = 10_000;

        /** The most batches a {@link Settler} may keep waiting for their acknowledgement ({@link Settler#batchesInFlight()}). */
        public static final int MAX_BATCHES_IN_FLIGHT = 1_000;

        /** How many failures a run that goes on past them keeps with their causes, unless {@link #failuresKept} says otherwise. */
        public static final int DEFAULT_FAILURES_KEPT = 100;

        /** The largest {@link #failuresKept}. */
        public static final int MAX_FAILURES_KEPT = 100_000;

        private final @Nullable Handler<? super T, ? extends R> handler;
        private int workers = 4;
        private int queueSize = 16;
        private @Nullable Duration itemTimeout = Duration.ofSeconds(30);
        private final List<Class<? extends Exception>> retryable = new ArrayList<>();
        private int maxRetries = 0;
        private @Nullable MetricsSink metrics;
        private IntakeKind intake = IntakeKind.SHUTDOWN_QUEUE;
        private @Nullable String name;
        private @Nullable Settler<T> settler;
        private int settleBatch = DEFAULT_SETTLE_BATCH;
        /** Whether {@link #settleBatch} was called: it needs a settler. */
        private boolean settleBatchSet;

        /** Whether the handler's results are delivered; {@code false} for {@link #forEach}. */
        private final boolean deliversResults;
        private OnFailure onFailure;
        private int failuresKept = DEFAULT_FAILURES_KEPT;
        private Backoff backoff = Backoff.none();
        /** From how long a retry's wait it is handed to the store (WP-29); null: never. */
        private @Nullable Duration deferRetriesLongerThan;
        /** The attempts an item had in earlier runs, as its store says (WP-29). */
        private ToIntFunction<? super T> priorAttempts = item -> 0;
        /** Whether {@link #priorAttempts} was called: a deferral needs it. */
        private boolean priorAttemptsSet;
        /** Whether {@link #failuresKept} was called: it needs {@code CONTINUE}. */
        private boolean failuresKeptSet;

        private Builder(@Nullable Handler<? super T, ? extends R> handler, boolean deliversResults, OnFailure onFailure) {
            this.handler = handler;
            this.deliversResults = deliversResults;
            this.onFailure = onFailure;
        }

        /**
         * Sets how many workers handle items at once: at most this many handlers run at any
         * moment. Each worker is a virtual thread and a watch the run allocates when it starts.
         *
         * @param workers at least 1, at most {@value #MAX_WORKERS}
         * @return this builder
         */
        public Builder<T, R> workers(int workers) {
            this.workers = workers;
            return this;
        }

        /**
         * Sets how many items may wait in the intake.
         *
         * @param queueSize at least 1
         * @return this builder
         */
        public Builder<T, R> queueSize(int queueSize) {
            this.queueSize = queueSize;
            return this;
        }

        /**
         * Sets how long one attempt may run, and the interval between the interrupts that try to
         * stop it once it has outlived that.
         *
         * @param itemTimeout positive
         * @return this builder
         */
        public Builder<T, R> itemTimeout(Duration itemTimeout) {
            this.itemTimeout = itemTimeout;
            return this;
        }

        /**
         * Adds exception types whose attempts are retried (subtypes included), up to
         * {@link #maxRetries} times. An attempt that times out fails with a
         * {@link java.util.concurrent.TimeoutException}, so it is retried if that type or a
         * supertype is listed: {@code retryable(Exception.class)} also retries timeouts, as
         * Python's {@code retryable=(Exception,)} would retry a {@code TimeoutError}. Retryable
         * types need {@code maxRetries} above zero, and {@code maxRetries} needs retryable types:
         * {@link #build()} refuses one without the other.
         *
         * @param types the retryable types
         * @return this builder
         */
        @SafeVarargs
        public final Builder<T, R> retryable(Class<? extends Exception>... types) {
            for (Class<? extends Exception> type : types) {
                retryable.add(Objects.requireNonNull(type, "retryable type"));
            }
            return this;
        }

        /**
         * Sets how many times a retryable failure is retried (attempts = 1 + retries at most).
         *
         * @param maxRetries zero or more; above zero only with {@linkplain #retryable retryable} types
         * @return this builder
         */
        public Builder<T, R> maxRetries(int maxRetries) {
            this.maxRetries = maxRetries;
            return this;
        }

        /**
         * Sets how long a retry waits after its failed attempt (WP-28): {@link Backoff#none()} (the
         * default) retries at once, on the same worker; {@link Backoff#fixed} and
         * {@link Backoff#exponential} park the item in the run's retry room, and its worker goes on
         * with other items meanwhile. Needs retries ({@link #maxRetries} above zero).
         *
         * @param backoff the wait before each retry
         * @return this builder
         */
        public Builder<T, R> retryBackoff(Backoff backoff) {
            this.backoff = Objects.requireNonNull(backoff, "backoff");
            return this;
        }

        /**
         * Hands to the store every retry whose wait ({@link #retryBackoff}) is at least
         * {@code threshold}, rather than keeping it in the run (WP-29): the item is settled as
         * {@link Settlement.Deferred}, with its attempts so far and when its retry is due, and the
         * store hands it out again then, to this run or a later one, in this process or another.
         * So a retry that waits minutes holds neither a worker nor a place in the retry room, nor
         * memory, and outlives a deploy. Needs a {@link #settler} whose
         * {@link Settler#keepsDeferred()} is {@code true} (the job table's), a backoff, and
         * {@link #priorAttempts}, so that the retry budget and the backoff go on counting where
         * they were (without it, an item that always fails would be deferred forever).
         *
         * @param threshold the shortest wait handed to the store; positive
         * @return this builder
         */
        public Builder<T, R> deferRetriesLongerThan(Duration threshold) {
            this.deferRetriesLongerThan = Objects.requireNonNull(threshold, "threshold");
            return this;
        }

        /**
         * Says how many attempts an item had before this run, as its store counts them (WP-29):
         * the item's first attempt here is the next one, so {@link #maxRetries} counts all of
         * them, the backoff waits as long as it would have, and {@link ItemContext#attempt()} goes on
         * from there. The job table's {@code Job::attempts} is one. Called on the worker that takes
         * the item, outside any attempt and its timeout: it must be quick; if it throws, or gives a
         * negative number, the item fails with that as its cause.
         *
         * @param priorAttempts the attempts an item had before, zero or more
         * @return this builder
         */
        public Builder<T, R> priorAttempts(ToIntFunction<? super T> priorAttempts) {
            this.priorAttempts = Objects.requireNonNull(priorAttempts, "priorAttempts");
            this.priorAttemptsSet = true;
            return this;
        }

        /**
         * Sets where events are reported. The sink is called from one thread of the run's own,
         * never from a worker or from the caller of {@code requestStop()} or {@code abort()}, event
         * by event in the order they happened (a slow sink may miss events of a cancelled run);
         * it may throw anything (see {@link MetricsSink}).
         *
         * @param metrics the sink
         * @return this builder
         */
        public Builder<T, R> metrics(MetricsSink metrics) {
            this.metrics = Objects.requireNonNull(metrics, "metrics");
            return this;
        }

        /**
         * Sets where every item's fate is settled durably: each item the run pulls is handed to
         * {@code settler} exactly once, with the fate its books recorded (succeeded, failed,
         * released unfinished, or deferred to the store for a later retry, WP-29), in batches, from a thread of the run's own (see {@link Settler}).
         * The run ends only once every settlement has been offered and answered; if the settler
         * throws, the run stops pulling and ends as {@link RunOutcome.Unsettled}, naming what
         * the store did not acknowledge (WP-22).
         *
         * @param settler the settler
         * @return this builder
         */
        public Builder<T, R> settler(Settler<T> settler) {
            this.settler = Objects.requireNonNull(settler, "settler");
            return this;
        }

        /**
         * Sets how many settlements the settler is given at most per call; the workers wait while
         * {@code (3 + batchesInFlight) × settleBatch} settlements are not yet settled (a
         * slow store slows the pool), where {@code batchesInFlight} is the settler's
         * {@link Settler#batchesInFlight()}, 1 unless it says otherwise. Needs a {@link #settler}.
         *
         * @param settleBatch between 1 and {@value #MAX_SETTLE_BATCH}; {@value #DEFAULT_SETTLE_BATCH} by default
         * @return this builder
         */
        public Builder<T, R> settleBatch(int settleBatch) {
            this.settleBatch = settleBatch;
            this.settleBatchSet = true;
            return this;
        }

        /**
         * Chooses what a permanent failure does: {@link OnFailure#STOP} (the seed's rule, WP-6,
         * the default of {@link WorkerPool#builder}) or {@link OnFailure#CONTINUE} (the run goes
         * on, WP-23, the default of {@link WorkerPool#forEach}).
         *
         * @param onFailure the rule
         * @return this builder
         */
        public Builder<T, R> onFailure(OnFailure onFailure) {
            this.onFailure = Objects.requireNonNull(onFailure, "onFailure");
            return this;
        }

        /**
         * Sets how many permanent failures a run that goes on past them ({@link OnFailure#CONTINUE})
         * keeps, with their items and causes, for its outcome: the first ones, in order. Every
         * failure is counted ({@link PoolStats#failed()}), settled and logged all the same; the
         * bound keeps a run of any length in bounded memory. Needs {@code CONTINUE}: under
         * {@code STOP} every failure is kept (the lead bounds them, WP-1).
         *
         * @param failuresKept between 0 and {@value #MAX_FAILURES_KEPT}; {@value #DEFAULT_FAILURES_KEPT} by default
         * @return this builder
         */
        public Builder<T, R> failuresKept(int failuresKept) {
            this.failuresKept = failuresKept;
            this.failuresKeptSet = true;
            return this;
        }

        /**
         * Chooses the intake: {@link IntakeKind#SHUTDOWN_QUEUE} (the default) or
         * {@link IntakeKind#SENTINEL}; both meet the whole contract.
         *
         * @param intake the intake
         * @return this builder
         */
        public Builder<T, R> intake(IntakeKind intake) {
            this.intake = Objects.requireNonNull(intake, "intake");
            return this;
        }

        /**
         * Names the pool; its threads are named {@code <name>-<role>-<n>}.
         *
         * @param name not blank
         * @return this builder
         */
        public Builder<T, R> name(String name) {
            this.name = Objects.requireNonNull(name, "name");
            return this;
        }

        /**
         * Checks every setting and builds the pool.
         *
         * @return a new pool, not yet running; this builder may build more
         * @throws IllegalArgumentException naming every invalid setting, if any
         * @throws UnsupportedOperationException if this JVM cannot run a pool: drain's pool needs
         *     JDK 25 with {@code --enable-preview} ({@code StructuredTaskScope} is a preview API in
         *     Java 25), and the message names the flag
         */
        public WorkerPool<T, R> build() {
            List<String> problems = new ArrayList<>();
            if (handler == null) {
                problems.add("handler must not be null");
            }
            if (workers < 1 || workers > MAX_WORKERS) {
                problems.add("workers must be between 1 and " + MAX_WORKERS + ", was " + workers);
            }
            if (queueSize < 1) {
                problems.add("queueSize must be at least 1 (the intake is bounded), was " + queueSize);
            }
            Duration timeout = itemTimeout;
            if (timeout == null || timeout.isNegative() || timeout.isZero()) {
                problems.add("itemTimeout must be positive, was " + timeout);
            }
            if (maxRetries < 0) {
                problems.add("maxRetries must not be negative, was " + maxRetries);
            } else if (maxRetries > 0 && retryable.isEmpty()) {
                problems.add("maxRetries is " + maxRetries + " but nothing is retryable: add the types to retry"
                        + " with retryable(...), or leave maxRetries at 0");
            } else if (maxRetries == 0 && !retryable.isEmpty()) {
                problems.add("retryable(" + retryable.stream().map(Class::getSimpleName).collect(Collectors.joining(", "))
                        + ") has no effect with maxRetries 0: set maxRetries to how many times to retry them");
            }
            if (!(backoff instanceof Backoff.None) && maxRetries == 0) {
                problems.add("retryBackoff(" + backoff + ") has no effect with maxRetries 0: set how many times to retry,"
                        + " or leave the backoff alone");
            }
            if (settleBatch < 1 || settleBatch > MAX_SETTLE_BATCH) {
                problems.add("settleBatch must be between 1 and " + MAX_SETTLE_BATCH + ", was " + settleBatch);
            } else if (settleBatchSet && settler == null) {
                problems.add("settleBatch is " + settleBatch + " but there is no settler: set one with settler(...),"
                        + " or leave settleBatch alone");
            }
            int inFlight = 1;
            Settler<T> store = settler;
            if (store != null) {
                Integer asked = askTheSettler(store::batchesInFlight, "batchesInFlight()", problems);
                inFlight = asked == null ? 1 : asked;
                if (inFlight < 1 || inFlight > MAX_BATCHES_IN_FLIGHT) {
                    problems.add("the settler's batchesInFlight() must be between 1 and " + MAX_BATCHES_IN_FLIGHT
                            + ", was " + inFlight);
                }
            }
            problems.addAll(deferralProblems());
            if (failuresKept < 0 || failuresKept > MAX_FAILURES_KEPT) {
                problems.add("failuresKept must be between 0 and " + MAX_FAILURES_KEPT + ", was " + failuresKept);
            } else if (failuresKeptSet && onFailure == OnFailure.STOP) {
                problems.add("failuresKept is " + failuresKept + " but onFailure is STOP, which keeps every failure:"
                        + " set onFailure(CONTINUE), or leave failuresKept alone");
            }
            String poolName = name == null ? "drain-pool-" + POOLS.incrementAndGet() : name;
            if (poolName.isBlank()) {
                problems.add("name must not be blank");
            }
            if (!problems.isEmpty() || handler == null || timeout == null) {
                throw new IllegalArgumentException("invalid WorkerPool: " + String.join("; ", problems));
            }
            requirePreview();
            return new WorkerPool<>(new PoolConfig<>(poolName, handler, workers, queueSize, timeout,
                    List.copyOf(retryable), maxRetries, metrics, intake, new PoolThreads(poolName), settler,
                    settleBatch, inFlight, onFailure, failuresKept, deliversResults, backoff, deferRetriesLongerThan,
                    priorAttempts));
        }

        /**
         * {@return what the settler answers to {@code question}, asked once when the pool is built,
         * or null if it threw, which {@code problems} then says} A JVM's trouble is thrown on.
         */
        private static <V> @Nullable V askTheSettler(java.util.function.Supplier<V> question, String name, List<String> problems) {
            try {
                return question.get();
            } catch (Throwable e) { // a checked one too, thrown sneakily (Kotlin, Lombok)
                if (Fatal.isBeyondTheCall(e)) {
                    throw e; // the JVM's trouble, not a setting
                }
                problems.add("the settler's " + name + " threw " + SafeText.of(e));
                return null;
            }
        }

        /** {@return what is wrong with the deferral's settings (WP-29): a threshold needs a positive wait, a backoff and a store that keeps deferred items} */
        private List<String> deferralProblems() {
            List<String> problems = new ArrayList<>();
            Duration threshold = deferRetriesLongerThan;
            if (threshold == null) {
                return problems;
            }
            if (threshold.isNegative() || threshold.isZero()) {
                problems.add("deferRetriesLongerThan must be positive, was " + threshold);
            }
            if (backoff instanceof Backoff.None) {
                problems.add("deferRetriesLongerThan(" + threshold + ") has no effect without a retryBackoff: every retry"
                        + " starts at once");
            }
            if (!priorAttemptsSet) {
                problems.add("deferRetriesLongerThan(" + threshold + ") needs priorAttempts(...): without the attempts"
                        + " its store keeps, every run would start an item's count again, and one that always fails"
                        + " would be deferred forever");
            }
            Settler<T> store = settler;
            if (store == null) {
                problems.add("deferRetriesLongerThan(" + threshold + ") needs a settler that keeps deferred items:"
                        + " set one with settler(...)");
            } else {
                Boolean keeps = askTheSettler(store::keepsDeferred, "keepsDeferred()", problems);
                if (keeps != null && !keeps) {
                    problems.add("deferRetriesLongerThan(" + threshold + ") needs a settler whose keepsDeferred() is true:"
                            + " this one would hand a deferred item out again at once, with no wait");
                }
            }
            return problems;
        }
    }
}
