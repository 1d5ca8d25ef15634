package dev.drain.pool;

import dev.drain.queue.QueueShutDown;
import dev.drain.queue.ShutdownQueue;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.Objects;
import java.util.Optional;
import java.util.Queue;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;

/**
 * One run of a {@link WorkerPool}: its threads, its counters, its outcome, and the consumer's
 * {@link Results}.
 *
 * <p>The threads, each from the pool's {@link PoolThreads}:
 * <pre>
 *   driver                    the run's root thread (started by run())
 *    └─ scope "pool"          Structured.runAll: the driver owns it
 *        ├─ producer          pulls from the source into the intake
 *        └─ worker × N        take from the intake; for each attempt:
 *             └─ scope        Structured.Single: the worker owns it, with the ItemContext bound
 *                 └─ attempt  the handler's call
 * </pre>
 * Results travel to the consumer through the outbox, a bounded {@link ShutdownQueue}: the consumer
 * never touches a scope, so its pace cannot hold a scope open, and a slow consumer slows the
 * workers (backpressure all the way to the source).
 *
 * <p>Ending a run: the source runs out, or {@link #requestStop} or a permanent failure stops the
 * intake (gracefully: the queued work drains); {@link #abort} drops what is queued and interrupts
 * the driver, whose scope then cancels the producer and the workers, and each worker escalates the
 * interrupts of its attempt; {@link #close} (abandon) does what abort does, also drops the
 * undelivered results, and waits for the driver. When its scope has closed, the driver decides the
 * outcome, then shuts the outbox down, which is how the consumer learns the run is over.
 */
final class Run<T, R> implements Results<R> {

    /** How one attempt ended, as the pool sees it. */
    private sealed interface Attempted<R> {
        record Succeeded<R>(R value) implements Attempted<R> {}

        /** Failed: the handler threw, returned null, or outlived {@code itemTimeout}. */
        record Failed<R>(Throwable cause) implements Attempted<R> {}

        /** The run is being cancelled (abort or abandon) and the attempt was stopped. */
        record Cancelled<R>() implements Attempted<R> {}

        /** Outlived three rounds of interrupts; already recorded as a permanent failure. */
        record Stuck<R>() implements Attempted<R> {}
    }

    private final PoolConfig<T, R> config;
    private final Iterator<? extends T> source;
    private final @Nullable Runnable closeSource;
    private final Intake<T> intake;
    /** Results on their way to the consumer; shut down by the driver at the end. */
    private final ShutdownQueue<R> outbox;
    private final Metrics metrics;
    private final PoolThreads threads;
    private final Thread driver;

    // Lifecycle: each flag is set once, by any thread, and read by every thread of the run.
    private final AtomicBoolean stopRequested = new AtomicBoolean();
    private final AtomicBoolean aborted = new AtomicBoolean();
    private final AtomicBoolean abandoned = new AtomicBoolean();
    /** The producer pulls nothing more once this is set (stop, first permanent failure, abort, abandon). */
    private volatile boolean intakeStopped;
    private volatile boolean consumerInterrupted;
    /** Written by the producer if the source throws; read by the driver after the scope closed. */
    private volatile @Nullable RuntimeException sourceFailure;
    /** Set once, by the driver, before it shuts the outbox down. */
    private volatile @Nullable RunOutcome outcome;

    // Counters and lists: written by the run's threads, read by anyone (stats) and by the driver.
    private final AtomicLong pulled = new AtomicLong();
    private final AtomicLong accepted = new AtomicLong();
    private final AtomicLong inFlight = new AtomicLong();
    private final AtomicLong succeeded = new AtomicLong();
    private final AtomicLong failed = new AtomicLong();
    private final AtomicLong retried = new AtomicLong();
    private final AtomicLong timedOut = new AtomicLong();
    private final AtomicLong escalations = new AtomicLong();
    private final AtomicLong discardedCount = new AtomicLong();
    private final AtomicLong cancelledCount = new AtomicLong();
    /** Items whose fate is settled: succeeded, failed, discarded or cancelled. */
    private final AtomicLong finished = new AtomicLong();
    private final AtomicLong maxLead = new AtomicLong();
    private final Queue<ItemFailure<T>> failures = new ConcurrentLinkedQueue<>();
    private final Queue<T> discarded = new ConcurrentLinkedQueue<>();
    private final Queue<T> cancelled = new ConcurrentLinkedQueue<>();

    /** The result hasNext() has taken but next() has not returned; only the iterating thread uses it. */
    private @Nullable R next;
    /** Set by close(), which may be called from a thread other than the iterating one. */
    private volatile boolean closed;

    Run(PoolConfig<T, R> config, Iterator<? extends T> source, @Nullable Runnable closeSource) {
        this.config = config;
        this.source = source;
        this.closeSource = closeSource;
        this.intake = switch (config.intake()) {
            case SHUTDOWN_QUEUE -> new QueueIntake<>(config.queueSize());
            case SENTINEL -> new SentinelIntake<>(config.queueSize(), config.workers());
        };
        this.outbox = new ShutdownQueue<>(config.workers());
        this.metrics = new Metrics(config.metrics());
        this.threads = config.threads();
        this.driver = threads.factory("driver").newThread(this::drive);
    }

    void start() {
        driver.start();
    }

    // ---- the driver ------------------------------------------------------------------------------

    private void drive() {
        @Nullable Throwable crash = null;
        try {
            if (!cancelRequested()) { // an abort before the start has no thread to interrupt
                Structured.runAll(config.name(), threads::factory, forker -> {
                    forker.fork("producer", this::produce);
                    for (int w = 0; w < config.workers(); w++) {
                        int worker = w;
                        forker.fork("worker", () -> work(worker));
                    }
                });
            }
        } catch (InterruptedException e) {
            // abort or abandon: the scope was cancelled and has closed; every worker is done
        } catch (RuntimeException | Error e) {
            crash = e; // a pool thread failed: a bug in drain, reported to the consumer
        } finally {
            if (cancelRequested()) {
                // Every thread is done; sweep what the intake still holds. The sentinel intake
                // needs this: its abort drains with drainTo, and the producer can put one more
                // item right after. (A ShutdownQueue refuses every put once shut down: empty.)
                discard(intake.abort());
            }
            end(crash);
        }
    }

    private void end(@Nullable Throwable crash) {
        RunOutcome result = decide(crash);
        outcome = result;
        metrics.record("pool.drained", () -> "outcome=" + result.getClass().getSimpleName()
                + " succeeded=" + succeeded + " failed=" + failed + " discarded=" + discardedCount
                + " cancelled=" + cancelledCount);
        outbox.shutdown(); // the consumer takes what is left, then sees the end
    }

    private RunOutcome decide(@Nullable Throwable crash) {
        List<ItemFailure<?>> failed = List.copyOf(failures);
        RuntimeException fromSource = sourceFailure;
        if (abandoned.get()) {
            return new RunOutcome.Abandoned(List.copyOf(discarded), List.copyOf(cancelled), consumerInterrupted);
        } else if (crash != null) {
            return new RunOutcome.Crashed(crash);
        } else if (aborted.get()) {
            return new RunOutcome.Aborted(List.copyOf(discarded), List.copyOf(cancelled), failed);
        } else if (fromSource != null) {
            return new RunOutcome.SourceFailed(fromSource, failed);
        } else if (!failed.isEmpty()) {
            return new RunOutcome.Failed(failed, stopRequested.get());
        }
        return new RunOutcome.Completed(stopRequested.get());
    }

    // ---- the producer ----------------------------------------------------------------------------

    private void produce() {
        @Nullable T held = null; // pulled from the source, not yet in the intake
        boolean interrupted = false;
        try {
            while (!intakeStopped && source.hasNext()) {
                long done = finished.get(); // read before the pull: the lead is never underestimated
                held = Objects.requireNonNull(source.next(), "the source returned null");
                long lead = pulled.incrementAndGet() - done;
                maxLead.accumulateAndGet(lead, Math::max);
                if (!intake.put(held)) {
                    break; // stopped (or aborted) while we held it
                }
                T item = held;
                held = null;
                accepted.incrementAndGet();
                metrics.record("item.accepted", () -> "item=" + item);
            }
        } catch (InterruptedException e) {
            interrupted = true; // the run is being cancelled: we were waiting for room
        } catch (RuntimeException e) {
            sourceFailure = e; // the source failed: stop intake, let the queued work drain
            intakeStopped = true;
        } finally {
            intake.endOfInput(interrupted || cancelRequested());
            if (closeSource != null) {
                closeSource.run();
            }
        }
        if (held != null) {
            // Pulled, so it must be accounted for exactly once: dropped if the run is being
            // cancelled, otherwise handled here, as a worker would.
            if (interrupted || cancelRequested()) {
                discard(List.of(held));
            } else {
                inFlight.incrementAndGet();
                handle(held, -1);
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt(); // never swallowed
        }
    }

    // ---- the workers -----------------------------------------------------------------------------

    private void work(int worker) {
        while (true) {
            T item;
            try {
                item = intake.take();
            } catch (InterruptedException e) {
                return; // cancelled while waiting for work; this thread ends here
            }
            if (item == null) {
                return; // the intake has ended and is drained
            }
            if (cancelRequested()) {
                discard(List.of(item)); // taken after an abort (the sentinel intake's race)
                continue;
            }
            inFlight.incrementAndGet();
            handle(item, worker);
        }
    }

    /** Attempts {@code item} until it succeeds, fails permanently, or the run is cancelled. */
    private void handle(T item, int worker) {
        for (int attempt = 1; ; attempt++) {
            Attempted<R> result = attempt(item, attempt, worker);
            switch (result) {
                case Attempted.Succeeded<R> s -> {
                    settle(succeeded);
                    deliver(s.value());
                    return;
                }
                case Attempted.Stuck<R> s -> {
                    return; // recorded as failed when the third round ran out
                }
                case Attempted.Cancelled<R> c -> {
                    cancel(item);
                    return;
                }
                case Attempted.Failed<R> f -> {
                    boolean retryable = config.isRetryable(f.cause()) && attempt <= config.maxRetries();
                    if (retryable && !cancelRequested()) {
                        retried.incrementAndGet();
                        int next = attempt + 1;
                        metrics.record("attempt.retry", () -> "item=" + item + " next_attempt=" + next);
                        continue;
                    }
                    if (retryable) {
                        cancel(item); // it would have been retried, but the run is being cancelled
                    } else {
                        fail(item, attempt, f.cause());
                    }
                    return;
                }
            }
        }
    }

    /** One attempt: the context bound, the handler forked in a scope of its own, supervised. */
    private Attempted<R> attempt(T item, int attempt, int worker) {
        ItemContext<T> context = new ItemContext<>(item, attempt, worker);
        PoolEvents.Attempt event = new PoolEvents.Attempt();
        event.begin();
        metrics.record("attempt.started", context::toString);
        Attempted<R> result = ScopedValue.where(ItemContext.CURRENT, context).call(() -> supervise(context));
        event.end();
        if (event.shouldCommit()) {
            event.pool = config.name();
            event.item = String.valueOf(item);
            event.attempt = attempt;
            event.worker = worker;
            event.outcome = switch (result) {
                case Attempted.Succeeded<R> s -> "succeeded";
                case Attempted.Failed<R> f -> f.cause() instanceof TimeoutException ? "timed out" : "failed";
                case Attempted.Cancelled<R> c -> "cancelled";
                case Attempted.Stuck<R> s -> "stuck";
            };
            event.commit();
        }
        return result;
    }

    /**
     * Runs the handler in its own scope and waits for it with the pool's own deadline. On timeout
     * or cancellation it interrupts the handler's thread, and again after each further
     * {@code itemTimeout}, three rounds in all (contract point 4), before it closes the scope.
     * The worker's own interrupt status is kept out of these waits and restored at the end.
     *
     * <p>BLOCKS-UNTIL: the handler has returned (for a handler that outlives three rounds, that is
     * the one unbounded wait, the documented limit).
     */
    private Attempted<R> supervise(ItemContext<T> context) {
        long timeout = config.itemTimeout().toNanos();
        boolean interrupted = false; // this worker was interrupted: the run is being cancelled
        try (Structured.Single<R> single = Structured.Single.fork(config.name() + "-attempt",
                threads.factory("attempt"), () -> config.handler().handle(context.item()))) {
            boolean completedInTime;
            try {
                completedInTime = single.await(timeout);
            } catch (InterruptedException e) {
                interrupted = true;
                completedInTime = single.isCompleted();
            }
            boolean timedOutNow = !completedInTime && !interrupted;
            if (timedOutNow) {
                timedOut.incrementAndGet();
                metrics.record("attempt.timeout", () -> context + " timeout=" + config.itemTimeout());
            }
            for (int round = 1; round <= 3 && !single.isCompleted(); round++) {
                if (round > 1) {
                    escalated(context, round);
                }
                single.interrupt();
                interrupted |= awaitIgnoringInterrupts(single, timeout);
            }
            if (!single.isCompleted()) {
                stuck(context);
                while (!single.isCompleted()) {
                    interrupted |= awaitIgnoringInterrupts(single, Long.MAX_VALUE);
                }
                return new Attempted.Stuck<>();
            }
            if (!completedInTime) {
                return interrupted
                        ? new Attempted.Cancelled<>()
                        : new Attempted.Failed<>(new TimeoutException(context + " outlived itemTimeout "
                                + config.itemTimeout()));
            }
            return switch (single.ending()) {
                case Structured.Ending.Returned<R> r when r.value() == null ->
                        new Attempted.Failed<>(new NullPointerException("the handler returned null for " + context));
                case Structured.Ending.Returned<R> r -> {
                    metrics.record("attempt.succeeded", context::toString);
                    yield new Attempted.Succeeded<>(r.value());
                }
                case Structured.Ending.Threw<R> t -> {
                    metrics.record("attempt.failed", () -> context + " cause=" + t.error());
                    yield new Attempted.Failed<>(t.error());
                }
            };
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Waits at most {@code nanos} for the attempt; {@return whether this thread was interrupted meanwhile} */
    private static boolean awaitIgnoringInterrupts(Structured.Single<?> single, long nanos) {
        long deadline = System.nanoTime() + Math.min(nanos, Long.MAX_VALUE / 2);
        boolean interrupted = false;
        while (!single.isCompleted()) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                break;
            }
            try {
                single.await(left);
            } catch (InterruptedException e) {
                interrupted = true; // kept for the caller; the wait goes on
            }
        }
        return interrupted;
    }

    private void escalated(ItemContext<T> context, int round) {
        escalations.incrementAndGet();
        metrics.record("attempt.escalated", () -> context + " round=" + round);
        PoolEvents.Escalation event = new PoolEvents.Escalation();
        if (event.shouldCommit()) {
            event.pool = config.name();
            event.item = String.valueOf(context.item());
            event.attempt = context.attempt();
            event.round = round;
            event.commit();
        }
    }

    private void stuck(ItemContext<T> context) {
        String message = context + ": the handler was still running after 3 rounds of interrupts, "
                + config.itemTimeout() + " apart";
        fail(context.item(), context.attempt(), new StuckAttempt(message));
        metrics.record("attempt.stuck", () -> message);
    }

    /** Hands a result to the consumer; an interrupt does not drop it, only an abandoned run does. */
    private void deliver(R result) {
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    outbox.put(result);
                    return;
                } catch (InterruptedException e) {
                    interrupted = true; // the consumer may still be reading: keep the result
                } catch (QueueShutDown e) {
                    return; // the consumer abandoned the run: nobody will read it
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    // ---- settling items ----------------------------------------------------------------------------

    private void settle(AtomicLong counter) {
        counter.incrementAndGet();
        inFlight.decrementAndGet();
        finished.incrementAndGet();
    }

    private void fail(T item, int attempts, Throwable cause) {
        failures.add(new ItemFailure<>(item, attempts, cause));
        settle(failed);
        stopIntake(); // point 6: intake stops at the first permanent failure; the queue drains
        metrics.record("item.failed", () -> "item=" + item + " attempts=" + attempts + " cause=" + cause);
    }

    private void cancel(T item) {
        cancelled.add(item);
        settle(cancelledCount);
        metrics.record("attempt.cancelled", () -> "item=" + item);
    }

    private void discard(List<T> items) {
        for (T item : items) {
            discarded.add(item);
            discardedCount.incrementAndGet();
            finished.incrementAndGet();
            metrics.record("item.discarded", () -> "item=" + item);
        }
    }

    // ---- stopping ------------------------------------------------------------------------------------

    private boolean cancelRequested() {
        return aborted.get() || abandoned.get();
    }

    private void stopIntake() {
        intakeStopped = true;
        intake.stop();
    }

    /** Graceful stop; synchronous, idempotent, any thread. */
    void requestStop() {
        if (stopRequested.compareAndSet(false, true)) {
            stopIntake();
            metrics.record("pool.stop_requested", config::name);
            PoolEvents.StopRequested event = new PoolEvents.StopRequested();
            if (event.shouldCommit()) {
                event.pool = config.name();
                event.commit();
            }
        }
    }

    /** Emergency stop; synchronous, idempotent, any thread. */
    void abort() {
        if (outcome == null && aborted.compareAndSet(false, true)) {
            intakeStopped = true;
            List<T> dropped = intake.abort();
            discard(dropped);
            driver.interrupt(); // its scope cancels the producer and the workers
            metrics.record("pool.abort", () -> "discarded=" + dropped.size());
            PoolEvents.Abort event = new PoolEvents.Abort();
            if (event.shouldCommit()) {
                event.pool = config.name();
                event.discarded = dropped.size();
                event.commit();
            }
        }
    }

    /** The consumer is done early: cancel everything, and wait until every thread has finished. */
    private void abandon(boolean interrupted) {
        if (outcome == null && abandoned.compareAndSet(false, true)) {
            consumerInterrupted = interrupted;
            intakeStopped = true;
            discard(intake.abort());
            outbox.shutdown(true); // releases workers blocked delivering results nobody will read
            driver.interrupt();
            metrics.record("pool.abandoned", () -> interrupted ? "consumer interrupted" : "results closed");
        }
        boolean wasInterrupted = false;
        while (true) {
            try {
                driver.join(); // the driver ends after its scope closed: every thread is done
                break;
            } catch (InterruptedException e) {
                wasInterrupted = true;
            }
        }
        if (wasInterrupted) {
            Thread.currentThread().interrupt();
        }
    }

    // ---- Results: the consumer's side ---------------------------------------------------------------

    @Override
    public boolean hasNext() {
        if (closed) {
            return false;
        }
        if (next != null) {
            return true;
        }
        try {
            next = outbox.get();
            return true;
        } catch (QueueShutDown e) {
            return reachEnd();
        } catch (InterruptedException e) {
            closed = true;
            abandon(true);
            Thread.currentThread().interrupt();
            CancellationException cancelled = new CancellationException("interrupted while waiting for results");
            cancelled.initCause(e);
            throw cancelled;
        }
    }

    /** The outbox is shut down and empty: the run is over; turn its outcome into the iteration's end. */
    private boolean reachEnd() {
        RunOutcome result = Objects.requireNonNull(outcome, "the outcome is set before the outbox shuts down");
        return switch (result) {
            case RunOutcome.Completed c -> false;
            case RunOutcome.Abandoned a -> false;
            case RunOutcome.Failed f -> throw new PoolFailure(f.failures());
            case RunOutcome.Aborted a -> throw new PoolAborted(a);
            case RunOutcome.SourceFailed s -> throw s.cause();
            case RunOutcome.Crashed c -> throw new IllegalStateException("a thread of the pool failed (a bug in drain)",
                    c.cause());
        };
    }

    @Override
    public R next() {
        if (!hasNext()) {
            throw new NoSuchElementException("no more results");
        }
        R result = Objects.requireNonNull(next);
        next = null;
        return result;
    }

    @Override
    public void close() {
        closed = true;
        abandon(false);
    }

    @Override
    public PoolStats stats() {
        long pulledNow = pulled.get();
        return new PoolStats(pulledNow, accepted.get(), inFlight.get(), succeeded.get(), failed.get(),
                retried.get(), timedOut.get(), escalations.get(), discardedCount.get(), cancelledCount.get(),
                pulledNow - finished.get(), maxLead.get(), metrics.raised(), threads.running());
    }

    @Override
    public Optional<RunOutcome> outcome() {
        return Optional.ofNullable(outcome);
    }

    /** The failures so far, in order (for tests and the report). */
    List<ItemFailure<T>> failuresSoFar() {
        return new ArrayList<>(failures);
    }
}
