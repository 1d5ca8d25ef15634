package dev.drain.pool;

import dev.drain.queue.QueueFull;
import dev.drain.queue.QueueShutDown;
import dev.drain.queue.ShutdownQueue;
import dev.drain.safe.Fatal;
import dev.drain.safe.SafeText;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
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
 *        │           └─ scope  one per attempt (Supervisor, Structured.Single)
 *        │               └─ attempt   the handler, with its ItemContext bound
 *        ├─ watchdog           a platform thread: times attempts out, cancels and escalates them,
 *        │                     watches the owner (Watchdog)
 *        ├─ metrics            the Reporter: the only thread that calls the metrics sink
 *        └─ settler            the Settling: the only thread that calls the settler (WP-22)
 * </pre>
 * The caller's {@link ScopedValue} bindings are inherited all the way down. Results travel to the
 * consumer through the outbox, a bounded {@link ShutdownQueue}: the consumer is never inside the
 * workers' scope, so its pace cannot hold that scope open, and a slow consumer slows the workers
 * (backpressure all the way to the source). Only the workers handle items, so at most
 * {@code workers} handlers run at any moment (WP-21).
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
    /** Hands every fate the ledger records to the settler, on a thread of its own. */
    private final Settling<T> settling;
    private final Supervisor<T, R> supervisor;
    /** Keeps the attempts' deadlines, and stops attempts, from a platform thread of its own. */
    private final Watchdog watchdog;
    private final Intake<T> intake;
    /** Each item a worker takes, from its first attempt to its fate, and the retries that wait (WP-28). */
    private final Handling<T, R> handling;
    /** Results on their way to the consumer; shut down by the driver at the end (by an abandon, at once). */
    private final ShutdownQueue<R> outbox;
    /**
     * Results produced after the run began to be cancelled, while the outbox was full: they wait
     * here for the consumer, behind the outbox's, so that an abort never waits for a consumer
     * that may be gone (WP-12). At most one per worker.
     */
    private final Queue<R> late = new ConcurrentLinkedQueue<>();
    /** The run's scope, once {@link #open()} has opened it; written before any thread of the run starts. */
    private volatile Structured.@Nullable Boundary boundary;

    Run(PoolConfig<T, R> config, Source<T> source, Lifecycle<T> lifecycle, Ledger<T> ledger, Reporter reporter,
        Settling<T> settling) {
        this.config = config;
        this.source = source;
        this.lifecycle = lifecycle;
        this.ledger = ledger;
        this.reporter = reporter;
        this.settling = settling;
        this.watchdog = new Watchdog(config.workers(), config.itemTimeoutNanos(), lifecycle::isCancelling,
                new WatchdogReports());
        this.supervisor = new Supervisor<>(config, lifecycle, reporter, watchdog);
        this.intake = switch (config.intake()) {
            case SHUTDOWN_QUEUE -> new QueueIntake<>(config.queueSize());
            case SENTINEL -> new SentinelIntake<>(config.queueSize(), config.workers());
        };
        this.outbox = new ShutdownQueue<>(config.workers());
        this.handling = new Handling<>(config, lifecycle, ledger, settling, reporter, supervisor, this::deliver);
    }

    // ---- the boundary: on the caller's thread ------------------------------------------------------

    /** Opens the run's scope on the calling thread, which owns it, and forks the reporter, the watchdog and the driver. */
    RunResults<T, R> open() {
        Structured.Boundary opened = Structured.Boundary.open(config.name(),
                role -> role.equals("watchdog") ? config.threads().platformFactory(role) : config.threads().factory(role),
                () -> lifecycle.abandon(RunOutcome.Abandoned.Reason.SCOPE_CLOSED));
        boundary = opened;
        try {
            if (reporter.hasSink()) {
                opened.fork("metrics", () -> reporter.deliver(lifecycle::crashed));
            }
            if (settling.hasSettler()) {
                opened.fork("settler", () -> settling.deliver(lifecycle::settlementFailed, lifecycle::crashed));
            }
            opened.fork("watchdog", () -> watchdog.watch(opened::isClosedUnderIt, () -> scopeClosedUnderTheRun(opened),
                    lifecycle::stopDeadlinePassed, lifecycle::crashed));
            opened.fork("driver", this::drive);
        } catch (Throwable e) { // the JVM could not start a thread: end the run here, on the caller's thread
            lifecycle.crashed(e);
            finish(false);
            opened.awaitAll();
            opened.close();
            throw e;
        }
        return new RunResults<>(opened, outbox, late, lifecycle, ledger, reporter, config.threads());
    }

    /** The watchdog found the JDK closing the run's scope under it (WP-20): the run ends itself, loudly. */
    private void scopeClosedUnderTheRun(Structured.Boundary opened) {
        if (lifecycle.abandon(RunOutcome.Abandoned.Reason.SCOPE_CLOSED)) {
            PoolLog.scopeClosed(config.name(), opened.owner());
        }
    }

    // ---- effects of the lifecycle's transitions -------------------------------------------------------

    @Override
    public void stopIntake() {
        source.stopPulling(); // a producer waiting inside the source would otherwise wait for its next item
    }

    @Override
    public List<T> dropIntake() {
        handling.cancelWaiting(); // taken, and waiting for their retries: their next attempts are cancelled
        return intake.abort();
    }

    @Override
    public void cancelAttempts() {
        watchdog.wake();
        settling.releaseWaiters(); // a worker waiting for the store's room goes on at once
        reporter.releaseWaiters(); // a thread waiting for the sink's room drops its event
    }

    @Override
    public void dropOutbox() {
        outbox.shutdown(true); // releases workers blocked delivering results nobody will read
    }

    @Override
    public void abortAt(long deadline) {
        watchdog.abortAt(deadline);
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
     * The run's last steps, once every producer, worker and attempt thread has finished: the
     * lifecycle is sealed (no later stop or abort is accepted, and no fate can be recorded), the
     * settler settles every fate (WP-22), then, with {@code threadsStarted}, the reporter (which
     * must be running) delivers every event recorded so far, so that a late fatal error from the
     * sink or the settler still ends the run as {@code Crashed}, and only then is the outcome
     * decided (WP-8, decision 0014).
     */
    private void finish(boolean threadsStarted) {
        try {
            closeSource(); // if the producer never ran
            handling.cancelWaiting(); // unreachable unless a worker crashed: a worker ends only once nothing waits
            ledger.discarded(intake.abort()); // what a cancelled run left in the intake (the sentinel's race)
            lifecycle.seal();
            settling.finish(threadsStarted);
            if (threadsStarted) {
                reporter.flush();
            }
            RunOutcome<T> outcome = lifecycle.end();
            reporter.recordNow(MetricsEvent.POOL_DRAINED, () -> "outcome=" + outcome.getClass().getSimpleName() + " " + ledger);
            PoolLog.ended(config.name(), outcome, ledger.toString());
        } finally {
            watchdog.stop(); // every attempt has ended
            reporter.shutdown();
            Structured.Boundary opened = boundary;
            if (opened != null) {
                opened.runEnded();
            }
            outbox.shutdown(); // the consumer takes what is left, then sees the end
        }
    }

    // ---- the producer ----------------------------------------------------------------------------------

    private void produce() {
        try {
            T held = pullUntilStopped();
            if (held != null) {
                ledger.discarded(List.of(held)); // pulled, and the run was cancelled before it reached the intake
            } else if (lifecycle.isStopRequested() && !lifecycle.isCancelling()) {
                PoolLog.stopping(config.name(), ledger.pulledSoFar()); // the intake has stopped, and what it holds drains
            }
        } catch (Throwable e) {
            lifecycle.crashed(e);
        }
    }

    /**
     * Pulls and puts until the source ends or intake stops; {@return the item still held, if the
     * run was cancelled before it could be put} A stop does not leave an item in the producer's
     * hands: the item it holds still goes into the intake, and a worker handles it (decision 0026).
     */
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
                            && !Fatal.is(failed.cause()) -> {
                        // intake had stopped, and the stop interrupted the source: the stop's doing
                        reporter.recordNow(MetricsEvent.SOURCE_INTERRUPTED, () -> "cause=" + SafeText.of(failed.cause()));
                        return null;
                    }
                    case Source.Pull.Failed<T> failed -> {
                        lifecycle.sourceFailed(failed.cause()); // intake stops; the queued work drains
                        return null;
                    }
                    case Source.Pull.Item<T> pulled -> {
                        long lead = ledger.pulled();
                        PoolEvents.lead(config.name(), lead, config.leadBound());
                        T item = pulled.value();
                        // Accepted before the put, so that no worker's event for it can come first (WP-8).
                        ledger.accepted();
                        if (reporter.hasSink()) { // the detail's supplier is made only for a sink
                            reporter.record(MetricsEvent.ITEM_ACCEPTED, () -> "item=" + SafeText.of(item));
                        }
                        if (!put(item)) {
                            return item;
                        }
                    }
                }
            }
        } finally {
            intake.endOfInput();
            closeSource();
        }
    }

    /**
     * Puts {@code item} into the intake, waiting for room even after a stop (the workers drain
     * the intake); {@return {@code false} if the run is being cancelled first}
     */
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

    /**
     * A worker's loop: a retry that is due comes first, then the intake's next item; once the
     * intake has ended for this worker, it serves the retry room until nothing waits (WP-28).
     */
    private void work(int worker) {
        try {
            boolean intakeEnded = false;
            while (true) {
                RetryRoom.Waiting<Handling<T, R>.InHand> due = intakeEnded ? awaitDue()
                        : handling.room().pollDue(System.nanoTime());
                if (due != null) {
                    handling.handle(due.held(), due.nextAttempt(), worker);
                } else if (intakeEnded) {
                    return; // nothing waits for a retry, or the run is being cancelled
                } else {
                    switch (take(handling.room().nanosToNextDue(System.nanoTime()))) {
                        case Intake.Taken.Item<T> taken when lifecycle.isCancelling() ->
                                ledger.discarded(List.of(taken.value())); // taken after an abort: the sentinel intake's race
                        case Intake.Taken.Item<T> taken -> {
                            ledger.taken();
                            handling.handleFresh(taken.value(), worker);
                        }
                        case Intake.Taken.Nothing<T> nothing -> { } // a retry is due
                        case Intake.Taken.End<T> end -> intakeEnded = true;
                    }
                }
            }
        } catch (Throwable e) {
            lifecycle.crashed(e);
        }
    }

    /**
     * {@return the intake's next item, waiting at most {@code nanos} ({@code Long.MAX_VALUE}: as
     * long as it takes); the end once the intake has ended for this worker or the run is cancelled}
     */
    private Intake.Taken<T> take(long nanos) {
        while (!lifecycle.isCancelling()) {
            try {
                if (nanos != Long.MAX_VALUE) {
                    return intake.take(nanos);
                }
                T item = intake.take();
                return item == null ? new Intake.Taken.End<>() : new Intake.Taken.Item<>(item);
            } catch (InterruptedException e) {
                // woken: look at the phase again
            }
        }
        return new Intake.Taken.End<>();
    }

    /** {@return the next retry once it is due, or {@code null} once nothing waits or the run is cancelled} */
    private RetryRoom.@Nullable Waiting<Handling<T, R>.InHand> awaitDue() {
        while (!lifecycle.isCancelling()) {
            try {
                return handling.room().awaitDue();
            } catch (InterruptedException e) {
                // woken: look at the phase again
            }
        }
        return null;
    }

    /**
     * Hands a result to the consumer: an interrupt does not drop it (WP-12), only an abandoned run
     * does. Once the run is being cancelled it no longer waits for room: a full outbox puts it
     * behind, in {@link #late}, so that a cancelled run ends even if nobody reads.
     */
    private void deliver(R result) {
        while (true) {
            try {
                if (lifecycle.isCancelling()) {
                    outbox.putNowait(result);
                } else {
                    outbox.put(result);
                }
                return;
            } catch (QueueShutDown e) {
                return; // abandoned: nobody will read it (stats: succeeded minus delivered)
            } catch (QueueFull e) {
                late.add(result);
                return;
            } catch (InterruptedException e) {
                // woken: the consumer may still read it, so keep it, and look at the phase again
            }
        }
    }

    /** What the watchdog records: never waits, never builds text on the watchdog. */
    private final class WatchdogReports implements Watchdog.Reports {
        @Override
        public void timedOut(ItemContext<?> context, @Nullable String label) {
            ledger.timedOut();
            new PoolEvents.Timeout().commitFor(config.name(), context, label);
            reporter.recordNow(MetricsEvent.ATTEMPT_TIMEOUT, () -> context + " timeout=" + config.itemTimeout());
        }

        @Override
        public void escalated(ItemContext<?> context, @Nullable String label, int round) {
            ledger.escalated();
            reporter.recordNow(MetricsEvent.ATTEMPT_ESCALATED, () -> context + " round=" + round);
            new PoolEvents.Escalation().commitFor(config.name(), context, label, round);
        }
    }

}
