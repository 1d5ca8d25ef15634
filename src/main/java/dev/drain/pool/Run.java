package dev.drain.pool;

import dev.drain.queue.QueueShutDown;
import dev.drain.queue.ShutdownQueue;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * The threads of one run of a {@link WorkerPool}, and what each of them does.
 *
 * <pre>
 *   caller                     the thread that called run(): owns the boundary scope, iterates, closes
 *    └─ scope "&lt;pool&gt;"          Structured.Boundary, opened in run(): RunResults is its face
 *        ├─ driver             owns the workers' scope; ends the run
 *        │   └─ scope "&lt;pool&gt;-workers"   Structured.runAll
 *        │       ├─ producer   source ─► intake
 *        │       └─ worker × N intake ─► attempts ─► outbox
 *        │           └─ scope  one per attempt (Supervisor, Structured.Single), ItemContext bound
 *        │               └─ attempt   the handler
 *        ├─ deadlines          the watchdog that wakes a worker whose attempt is overdue (Deadlines)
 *        └─ metrics            the Reporter: the only thread that calls the metrics sink
 * </pre>
 * The caller's {@link ScopedValue} bindings are inherited all the way down. Results travel to the
 * consumer through the outbox, a bounded {@link ShutdownQueue}: the consumer is never inside the
 * workers' scope, so its pace cannot hold that scope open, and a slow consumer slows the workers
 * (backpressure all the way to the source).
 *
 * <p>Every pool thread decides by the run's {@link Lifecycle} phase; an interrupt only wakes it
 * to look (decision 0015). Its body catches everything: a pool thread never throws into a scope;
 * what it cannot handle it reports as a crash, which cancels the run.
 */
final class Run<T, R> implements Lifecycle.Effects<T> {

    private final PoolConfig<T, R> config;
    private final Source<T> source;
    private final Lifecycle<T> lifecycle;
    private final Ledger<T> ledger;
    private final Reporter reporter;
    private final Supervisor<T, R> supervisor;
    /** The deadlines of the attempts being waited for, and the watchdog that serves them. */
    private final Deadlines deadlines;
    private final Intake<T> intake;
    /** Results on their way to the consumer; shut down by the driver at the end (by an abandon, at once). */
    private final ShutdownQueue<R> outbox;

    Run(PoolConfig<T, R> config, Source<T> source, Lifecycle<T> lifecycle, Ledger<T> ledger, Reporter reporter) {
        this.config = config;
        this.source = source;
        this.lifecycle = lifecycle;
        this.ledger = ledger;
        this.reporter = reporter;
        this.deadlines = new Deadlines(config.workers() + 1, config.itemTimeoutNanos());
        this.supervisor = new Supervisor<>(config, lifecycle, ledger, reporter, deadlines);
        this.intake = switch (config.intake()) {
            case SHUTDOWN_QUEUE -> new QueueIntake<>(config.queueSize());
            case SENTINEL -> new SentinelIntake<>(config.queueSize(), config.workers());
        };
        this.outbox = new ShutdownQueue<>(config.workers());
    }

    // ---- the boundary: on the caller's thread ------------------------------------------------------

    /** Opens the run's scope on the calling thread, which owns it, and forks the reporter and the driver. */
    RunResults<T, R> open() {
        Structured.Boundary boundary = Structured.Boundary.open(config.name(), config.threads()::factory);
        try {
            if (reporter.hasSink()) {
                boundary.fork("metrics", reporter::deliver);
            }
            boundary.fork("deadlines", deadlines::watch);
            boundary.fork("driver", this::drive);
        } catch (Throwable e) { // the JVM could not start a thread: end the run here, on the caller's thread
            lifecycle.crashed(e);
            finish(false);
            boundary.awaitAll();
            boundary.close();
            throw e;
        }
        return new RunResults<>(boundary, outbox, lifecycle, ledger, reporter, config.threads());
    }

    // ---- effects of the lifecycle's transitions -------------------------------------------------------

    @Override
    public void stopIntake() {
        intake.stop();
        source.stopPulling(); // a producer waiting inside the source would otherwise wait for its next item
    }

    @Override
    public List<T> dropIntake() {
        return intake.abort();
    }

    @Override
    public void dropOutbox() {
        outbox.shutdown(true); // releases workers blocked delivering results nobody will read
    }

    // ---- the driver ----------------------------------------------------------------------------------

    private void drive() {
        try {
            if (lifecycle.driverStarted(Thread.currentThread())) {
                Structured.runAll(config.name() + "-workers", config.threads()::factory, forker -> {
                    forker.fork("producer", this::produce);
                    for (int w = 0; w < config.workers(); w++) {
                        int worker = w;
                        forker.fork("worker", () -> work(worker));
                    }
                });
            }
        } catch (InterruptedException e) {
            // cancelled: the scope interrupted the producer and the workers and waited for them all
        } catch (Throwable e) {
            lifecycle.crashed(e); // a pool thread threw after all: a bug in drain
        } finally {
            finish(true);
        }
    }

    /**
     * The run's last steps, once every producer, worker and attempt thread has finished; with
     * {@code flushEvents}, the reporter (which must be running) first delivers what it still
     * holds, so that a late fatal error from the sink ends the run as {@code Crashed}.
     */
    private void finish(boolean flushEvents) {
        try {
            closeSource(); // if the producer never ran
            discard(intake.abort()); // what a cancelled run left in the intake (the sentinel's race)
            if (flushEvents) {
                reporter.flush();
            }
            RunOutcome<T> outcome = lifecycle.end();
            reporter.recordNow("pool.drained", () -> "outcome=" + outcome.getClass().getSimpleName() + " " + ledger);
        } finally {
            deadlines.stop(); // every attempt has been waited for
            reporter.shutdown();
            outbox.shutdown(); // the consumer takes what is left, then sees the end
        }
    }

    // ---- the producer ----------------------------------------------------------------------------------

    private void produce() {
        try {
            T held = pullUntilStopped();
            if (held == null) {
                return;
            }
            // Pulled, so settled exactly once: dropped if the run is being cancelled, otherwise
            // handled here, as a worker would (decision 0009).
            if (lifecycle.isCancelling()) {
                discard(List.of(held));
            } else {
                ledger.taken();
                handle(held, -1);
            }
        } catch (Throwable e) {
            lifecycle.crashed(e);
        }
    }

    /** Pulls and puts until the source ends or intake stops; {@return the item still held, if a stop caught it} */
    private @Nullable T pullUntilStopped() {
        try {
            while (true) {
                switch (source.pull(lifecycle::isPulling)) {
                    case Source.Pull.End<T> end -> {
                        return null;
                    }
                    case Source.Pull.Stopped<T> stopped -> {
                        return null;
                    }
                    case Source.Pull.Failed<T> failed when !lifecycle.isPulling()
                            && !(failed.cause() instanceof VirtualMachineError) -> {
                        // intake had stopped, and the stop interrupted the source: the stop's doing
                        reporter.recordNow("source.interrupted", () -> "cause=" + Text.of(failed.cause()));
                        return null;
                    }
                    case Source.Pull.Failed<T> failed -> {
                        lifecycle.sourceFailed(failed.cause()); // intake stops; the queued work drains
                        return null;
                    }
                    case Source.Pull.Item<T> pulled -> {
                        new PoolEvents.Lead().commitFor(config.name(), ledger.pulled(),
                                config.queueSize() + config.workers() + 1L);
                        T item = pulled.value();
                        if (!put(item)) {
                            return item;
                        }
                        ledger.accepted();
                        reporter.record("item.accepted", () -> "item=" + Text.of(item));
                    }
                }
            }
        } finally {
            intake.endOfInput();
            closeSource();
        }
    }

    /** {@return whether the item went into the intake; {@code false} if intake stopped or the run is cancelled first} */
    private boolean put(T item) {
        while (!lifecycle.isCancelling()) {
            try {
                return intake.put(item);
            } catch (InterruptedException e) {
                // woken: look at the phase again
            }
        }
        return false;
    }

    private void closeSource() {
        source.close().ifPresent(lifecycle::sourceFailed);
    }

    // ---- the workers -------------------------------------------------------------------------------------

    private void work(int worker) {
        try {
            for (T item = take(); item != null; item = take()) {
                if (lifecycle.isCancelling()) {
                    discard(List.of(item)); // taken after an abort: the sentinel intake's race
                } else {
                    ledger.taken();
                    handle(item, worker);
                }
            }
        } catch (Throwable e) {
            lifecycle.crashed(e);
        }
    }

    /** {@return the next item, or {@code null} once the intake has ended for this worker or the run is cancelled} */
    private @Nullable T take() {
        while (!lifecycle.isCancelling()) {
            try {
                return intake.take();
            } catch (InterruptedException e) {
                // woken: look at the phase again
            }
        }
        return null;
    }

    /** Attempts {@code item} until it succeeds, fails permanently, or the run is cancelled; settles it once. */
    private void handle(T item, int worker) {
        InHand held = new InHand(item);
        try {
            for (int attempt = 1; !held.settled; attempt++) {
                ItemContext<T> context = new ItemContext<>(item, attempt, worker);
                switch (supervisor.attempt(context, () -> held.stuck(context))) {
                    case Supervisor.Attempted.Succeeded<R> s -> {
                        held.succeeded();
                        deliver(s.value());
                    }
                    case Supervisor.Attempted.Stuck<R> s -> { } // settled at the moment it was found stuck
                    case Supervisor.Attempted.Cancelled<R> c -> held.cancelled();
                    case Supervisor.Attempted.Failed<R> f -> retryOrFail(held, context, f.cause());
                }
            }
        } finally {
            if (!held.settled) {
                held.cancelled(); // this thread is failing mid-item: the crash is reported by its caller
            }
        }
    }

    private void retryOrFail(InHand held, ItemContext<T> context, Throwable cause) {
        if (!config.isRetryable(cause) || context.attempt() > config.maxRetries()) {
            held.failed(context.attempt(), cause);
        } else if (lifecycle.isCancelling()) {
            held.cancelled(); // it would be retried, but the run is being cancelled
        } else {
            ledger.retried();
            reporter.record("attempt.retry", () -> "item=" + Text.of(context.item()) + " next_attempt="
                    + (context.attempt() + 1));
        }
    }

    /** Hands a result to the consumer: an interrupt does not drop it (WP-12), only an abandoned run does. */
    private void deliver(R result) {
        while (true) {
            try {
                outbox.put(result);
                return;
            } catch (QueueShutDown e) {
                return; // abandoned: nobody will read it (stats: succeeded minus delivered)
            } catch (InterruptedException e) {
                // the consumer may still read it: keep it
            }
        }
    }

    private void discard(List<T> items) {
        ledger.discarded(items);
        for (T item : items) {
            reporter.recordNow("item.discarded", () -> "item=" + Text.of(item));
        }
    }

    /** One item in a worker's hands: settled exactly once, in the ledger, by one of these. */
    private final class InHand {
        final T item;
        /** Confined to the thread handling the item. */
        boolean settled;

        InHand(T item) {
            this.item = item;
        }

        void succeeded() {
            settle();
            ledger.succeeded();
        }

        void cancelled() {
            settle();
            ledger.cancelled(item);
            reporter.record("attempt.cancelled", () -> "item=" + Text.of(item));
        }

        void failed(int attempts, Throwable cause) {
            settle();
            ledger.failed(new ItemFailure<>(item, attempts, cause));
            lifecycle.itemFailed(); // WP-6: intake stops at the first permanent failure; the queue drains
            reporter.record("item.failed", () -> "item=" + Text.of(item) + " attempts=" + attempts + " cause="
                    + Text.of(cause));
        }

        /** The attempt outlived every round and still runs: the item fails now (WP-4), then the event. */
        void stuck(ItemContext<T> context) {
            String message = context + ": the handler was still running after " + Supervisor.INTERRUPT_ROUNDS
                    + " rounds of interrupts, " + config.itemTimeout() + " apart";
            failed(context.attempt(), new StuckAttempt(message));
            reporter.record("attempt.stuck", () -> message);
        }

        private void settle() {
            if (settled) {
                throw new IllegalStateException("unreachable: an item settled twice");
            }
            settled = true;
        }
    }
}
