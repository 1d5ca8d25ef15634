package dev.drain.pool;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import dev.drain.safe.Fatal;
import dev.drain.safe.SafeText;
import java.util.List;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * The one state of a pool's run and every transition between its states, in one place. A pool
 * holds one {@code Lifecycle} from the moment it is built; {@code run()} starts it.
 *
 * <pre>
 *   NEW ──run()──► RUNNING ──requestStop(), a permanent failure (WP-6), a failing source──► STOPPING
 *   RUNNING, STOPPING ──abort(), a stop's deadline passed, a fatal error on a pool thread──► ABORTING
 *   RUNNING, STOPPING, ABORTING ──Results.close() early, an interrupted consumer,
 *                                 the owner's scope closed under the run──► ABANDONING
 *   RUNNING … ABANDONING ──the driver, once every other thread of the run has finished──► ENDED
 *   ENDED ──Results.close()──► CLOSED
 * </pre>
 * Phases only move forward, so every transition is idempotent: a second {@code requestStop()},
 * an {@code abort()} after the end, a {@code close()} after an abandon, each does nothing. A stop
 * or abort before {@code run()} is remembered (the phase stays NEW) and applied by {@code run()}:
 * the run goes from NEW to RUNNING and at once to STOPPING, or to ABORTING.
 *
 * <p>A transition changes the run only through its {@link Effects}, while holding this object's
 * lock, so that what a transition drops is recorded in the {@link Ledger} before anyone can decide
 * the outcome. The driver ends the run in two steps: {@link #seal()} refuses every later
 * transition (a late {@code requestStop()} or {@code abort()} does nothing, as after the end), the
 * settler then settles every fate (WP-22) and the reporter delivers every event recorded so far,
 * and {@link #end()} decides the outcome from the facts as they were at the seal, with two
 * exceptions: a {@link VirtualMachineError} that the settler or the metrics sink throws in those
 * last steps still makes the run {@link RunOutcome.Crashed} (WP-8, WP-18), and what the settler
 * could not settle makes it {@link RunOutcome.Unsettled}. So no event of an accepted transition reaches the sink
 * after the outcome is decided. A transition holds this lifecycle's lock while its effects take
 * the source's, the ledger's, the hand-offs' and the queues' locks, never the other way: the one
 * lock order is in the package's {@code package-info.java}.
 *
 * <p>The phase is the truth about the run. Interrupts are only how a blocked pool thread is woken
 * to look at it (decision 0015): every pool thread decides by the phase, never by its interrupt
 * status alone.
 */
final class Lifecycle<T> {

    /** Where a run is. Ordered: a transition only ever moves to a later phase. */
    enum Phase {
        /** Built; {@code run()} not yet called. */
        NEW,
        /** Pulling from the source (and handling what it pulled). */
        RUNNING,
        /** Intake stopped early (a requested stop, a permanent failure, a failing source); the queued work drains. */
        STOPPING,
        /** {@code abort()} or a fatal error: queued items dropped, attempts cancelled. */
        ABORTING,
        /** The consumer gave up: as {@code ABORTING}, and undelivered results are dropped too. */
        ABANDONING,
        /** Every thread of the run has finished and the outcome is decided. */
        ENDED,
        /** The consumer has closed the results. */
        CLOSED
    }

    /** What a transition does to a running run's machinery. Called with the lifecycle's lock held; never blocks. */
    interface Effects<T> {
        /** Graceful: pull no more items; what was pulled is still handled, and the queued items drain. */
        void stopIntake();

        /** Emergency: drop and return what is queued; workers stop taking. */
        List<T> dropIntake();

        /** Emergency: have every running attempt interrupted, in rounds (the watchdog's job). */
        void cancelAttempts();

        /** Drop the results nobody will read, releasing workers blocked delivering them. */
        void dropOutbox();

        /** Have {@link #stopDeadlinePassed()} called once {@link System#nanoTime()} reaches {@code deadline} (the watchdog's job). */
        void abortAt(long deadline);
    }

    private final String pool;
    private final Ledger<T> ledger;
    private final Reporter reporter;
    /** Whether a permanent failure stops the intake (WP-6) or the run goes on (WP-23): {@link PoolConfig#stopsAtFailure()}. */
    private final boolean stopsAtFailure;

    /** Written only by the transitions below, under the lock; read by any thread. */
    private volatile Phase phase = Phase.NEW;

    // What was asked for and what went wrong: facts that decide the outcome, written only by
    // transitions, under the lock.
    @GuardedBy("this")
    private boolean stopRequested;
    @GuardedBy("this")
    private boolean abortRequested;
    /** The earliest deadline a {@code requestStop(within)} asked for, in {@link System#nanoTime()}'s terms, if one did. */
    @GuardedBy("this")
    private @Nullable Long stopDeadline;
    /** Whether the run was aborted because a stop's deadline passed (WP-24). */
    @GuardedBy("this")
    private boolean deadlinePassed;
    /** Why the run was abandoned, once it was. */
    @GuardedBy("this")
    private RunOutcome.Abandoned.@Nullable Reason abandoned;
    /** Set by {@link #seal()}: from then on no transition is accepted, and only a crash is recorded. */
    @GuardedBy("this")
    private boolean sealed;
    @GuardedBy("this")
    private @Nullable Throwable sourceFailure;
    @GuardedBy("this")
    private @Nullable Throwable fatal;

    /** The run's machinery, set by {@link #start}. */
    @GuardedBy("this")
    private @Nullable Effects<T> effects;
    /** The driver, once it runs: the thread a cancellation interrupts. */
    @GuardedBy("this")
    private @Nullable Thread driver;
    /** Set by {@link #end()}, read by any thread. */
    private volatile @Nullable RunOutcome<T> outcome;

    /** A lifecycle whose permanent failures stop the intake, as the seed's rule says (WP-6). */
    Lifecycle(String pool, Ledger<T> ledger, Reporter reporter) {
        this(pool, ledger, reporter, true);
    }

    Lifecycle(String pool, Ledger<T> ledger, Reporter reporter, boolean stopsAtFailure) {
        this.pool = pool;
        this.ledger = ledger;
        this.reporter = reporter;
        this.stopsAtFailure = stopsAtFailure;
    }

    /** {@return the phase now} */
    Phase phase() {
        return phase;
    }

    /** {@return whether the producer may pull from the source} */
    boolean isPulling() {
        return phase == Phase.RUNNING;
    }

    /** {@return whether {@code requestStop()} was called (with or without a deadline)} */
    synchronized boolean isStopRequested() {
        return stopRequested;
    }

    /** {@return whether the run is being cancelled: attempts stop, nothing more is handled} */
    boolean isCancelling() {
        Phase now = phase;
        return now == Phase.ABORTING || now == Phase.ABANDONING;
    }

    /** {@return the outcome, once the run has ended} */
    @Nullable RunOutcome<T> outcome() {
        return outcome;
    }

    // ---- transitions ---------------------------------------------------------------------------

    /** NEW → RUNNING (then STOPPING or ABORTING at once, if that was asked for before the run). */
    synchronized void start(Effects<T> run) {
        if (phase != Phase.NEW) {
            throw new IllegalStateException("a WorkerPool runs once, and this one is " + phase
                    + "; build another from the same Builder for another run");
        }
        effects = run;
        phase = Phase.RUNNING;
        if (stopDeadline != null) {
            if (!abortRequested && stopDeadline - System.nanoTime() <= 0) {
                deadlinePassed = true; // it passed before the run: the run starts aborted, and says why
                abortRequested = true;
            } else {
                run.abortAt(stopDeadline);
            }
        }
        if (abortRequested) {
            abortNow();
        } else if (stopRequested) {
            stopNow();
        }
    }

    /** The driver has started; {@return whether it should fork the producer and workers} */
    synchronized boolean driverStarted(Thread thread) {
        driver = thread;
        return !isCancelling();
    }

    /** requestStop(): RUNNING → STOPPING; before the run, remembered; once sealed, nothing. */
    synchronized void requestStop() {
        if (sealed || stopRequested || phase.compareTo(Phase.ABORTING) >= 0) {
            return;
        }
        stopRequested = true;
        new PoolEvents.StopRequested().commitFor(pool);
        reporter.recordNow(MetricsEvent.POOL_STOP_REQUESTED, () -> pool);
        if (phase == Phase.RUNNING) {
            stopNow();
        }
    }

    /**
     * requestStop(within): as {@link #requestStop()}, and the run is aborted at {@code deadline}
     * if it has not ended by then (WP-24). The earliest deadline asked for holds; before the run,
     * remembered; once aborting or sealed, nothing.
     */
    synchronized void requestStop(long deadline) {
        if (sealed || abortRequested || phase.compareTo(Phase.ABORTING) >= 0) {
            return; // an abort was asked for first (before the run, it is only remembered): it is the abort's
        }
        if (deadline - System.nanoTime() <= 0) { // already passed: an abort, said to be the deadline's
            deadlinePassed = true;
            abortRequested = true;
            if (phase != Phase.NEW) {
                abortNow();
            }
            return;
        }
        if (stopDeadline == null || deadline - stopDeadline < 0) {
            stopDeadline = deadline;
            if (phase != Phase.NEW) {
                requireStarted().abortAt(deadline);
            }
        }
        requestStop();
    }

    /**
     * The deadline of a {@code requestStop(within)} passed and the run has not ended: RUNNING or
     * STOPPING → ABORTING, and the outcome says the deadline did it (WP-24). Called on the watchdog.
     */
    synchronized void stopDeadlinePassed() {
        if (sealed || phase.compareTo(Phase.ABORTING) >= 0 || phase == Phase.NEW) {
            return;
        }
        deadlinePassed = true;
        abortRequested = true;
        abortNow();
    }

    /** A permanent failure: intake stops (WP-6), unless the run goes on past its failures (WP-23). */
    synchronized void itemFailed() {
        if (stopsAtFailure && !sealed && phase == Phase.RUNNING) {
            stopNow();
        }
    }

    /** The store did not take a batch of settlements: intake stops, as at a permanent failure (WP-22). */
    synchronized void settlementFailed() {
        if (!sealed && phase == Phase.RUNNING) {
            stopNow();
        }
    }

    /** The source threw from {@code hasNext}, {@code next} or {@code close}: intake stops; the first failure is kept. */
    synchronized void sourceFailed(Throwable cause) {
        if (Fatal.is(cause)) {
            crashed(cause);
            return;
        }
        if (sealed) {
            return; // unreachable: the source is closed before the seal
        }
        sourceFailure = keepFirst(sourceFailure, cause);
        reporter.recordNow(MetricsEvent.SOURCE_FAILED, () -> "cause=" + SafeText.of(cause));
        if (phase == Phase.RUNNING) {
            stopNow();
        }
    }

    /** abort(): RUNNING or STOPPING → ABORTING; before the run, remembered; once sealed, nothing. */
    synchronized void abort() {
        if (sealed || abortRequested || phase.compareTo(Phase.ABORTING) >= 0) {
            return;
        }
        abortRequested = true;
        if (phase != Phase.NEW) {
            abortNow();
        }
    }

    /**
     * A pool thread cannot go on: a {@link VirtualMachineError} from a callback that runs on it,
     * or a bug in drain. The run is cancelled as by {@code abort()} and ends as
     * {@link RunOutcome.Crashed}. Once sealed, the crash is still recorded (a sink's fatal error
     * on the last events): there is nothing left to cancel.
     */
    synchronized void crashed(Throwable cause) {
        if (phase.compareTo(Phase.ENDED) >= 0) {
            return; // decided: too late to change the outcome
        }
        fatal = keepFirst(fatal, cause);
        if (!sealed && (phase == Phase.RUNNING || phase == Phase.STOPPING)) {
            abortNow();
        }
    }

    /**
     * The consumer gave up ({@code reason}): → ABANDONING; {@return whether this call abandoned
     * the run} (not if it had been abandoned before, had been sealed, or had ended).
     */
    synchronized boolean abandon(RunOutcome.Abandoned.Reason reason) {
        if (sealed || phase.compareTo(Phase.ABANDONING) >= 0) {
            return false;
        }
        abandoned = reason;
        Effects<T> run = requireStarted();
        boolean attemptsRunning = !isCancelling();
        phase = Phase.ABANDONING;
        drop(run);
        run.dropOutbox();
        if (attemptsRunning) {
            run.cancelAttempts(); // after an abort they are being cancelled already
        }
        new PoolEvents.Abandon().commitFor(pool, reason == RunOutcome.Abandoned.Reason.CONSUMER_INTERRUPTED);
        reporter.recordNow(MetricsEvent.POOL_ABANDONED, reason::toString);
        interruptDriver();
        return true;
    }

    /**
     * Every other thread of the run has finished; no transition is accepted from now on, and the
     * outcome is decided, by {@link #end()}, from the facts as they are now.
     */
    synchronized void seal() {
        sealed = true;
    }

    /**
     * Sealed, every fate settled and every event recorded before the seal delivered: → ENDED, and
     * {@return the outcome} (wrapped in {@link RunOutcome.Unsettled} if the store did not
     * acknowledge every settlement, WP-22)
     */
    synchronized RunOutcome<T> end() {
        if (!sealed || phase.compareTo(Phase.ENDED) >= 0) {
            throw new IllegalStateException("unreachable: the run ends once, after its seal; it is " + phase);
        }
        Ledger.Fates<T> fates = ledger.fates();
        RunOutcome<T> ended = decide(fates);
        RunOutcome<T> decided = fates.unsettled().isEmpty() ? ended
                : new RunOutcome.Unsettled<>(ended, fates.unsettled(), Objects.requireNonNull(fates.settleFailure()));
        phase = Phase.ENDED;
        outcome = decided;
        return decided;
    }

    /** The consumer closed the results after the end: → CLOSED. */
    synchronized void closed() {
        if (phase != Phase.ENDED && phase != Phase.CLOSED) {
            throw new IllegalStateException("the results can be closed only once the run has ended; it is " + phase);
        }
        phase = Phase.CLOSED;
    }

    // ---- what the transitions do -----------------------------------------------------------------

    @GuardedBy("this")
    private void stopNow() {
        phase = Phase.STOPPING;
        requireStarted().stopIntake();
    }

    @GuardedBy("this")
    private void abortNow() {
        Effects<T> run = requireStarted();
        phase = Phase.ABORTING;
        int dropped = drop(run);
        run.cancelAttempts();
        new PoolEvents.Abort().commitFor(pool, dropped);
        reporter.recordNow(MetricsEvent.POOL_ABORT, () -> "discarded=" + dropped);
        interruptDriver();
    }

    /** Drops what the intake holds and records it as discarded; {@return how many} */
    @GuardedBy("this")
    private int drop(Effects<T> run) {
        List<T> dropped = run.dropIntake();
        ledger.discarded(dropped);
        return dropped.size();
    }

    /** Wakes the driver, whose scope then cancels the producer and the workers. */
    @GuardedBy("this")
    private void interruptDriver() {
        if (driver != null) {
            driver.interrupt();
        }
        // Not started yet: driverStarted() will see the phase and fork nothing.
    }

    @GuardedBy("this")
    private Effects<T> requireStarted() {
        if (effects == null) {
            throw new IllegalStateException("unreachable: a transition that needs the run before run() (" + phase + ")");
        }
        return effects;
    }

    /**
     * The outcome, by precedence: a crash, then an abandon, an abort, a source failure, item
     * failures (unless the run goes on past them, WP-23), and a normal end. Each carries the ledger's lists, which are final here.
     */
    @GuardedBy("this")
    private RunOutcome<T> decide(Ledger.Fates<T> fates) {
        if (fatal != null) {
            return new RunOutcome.Crashed<>(fatal, fates.discarded(), fates.cancelled(), fates.failures());
        }
        if (phase == Phase.ABANDONING) {
            return new RunOutcome.Abandoned<>(fates.discarded(), fates.cancelled(), fates.failures(),
                    Objects.requireNonNull(abandoned));
        }
        if (phase == Phase.ABORTING) {
            return new RunOutcome.Aborted<>(fates.discarded(), fates.cancelled(), fates.failures(), deadlinePassed);
        }
        if (!fates.discarded().isEmpty() || !fates.cancelled().isEmpty()) {
            throw new IllegalStateException("unreachable: items dropped in a run that was not cancelled: " + ledger);
        }
        if (sourceFailure != null) {
            return new RunOutcome.SourceFailed<>(sourceFailure, fates.failures());
        }
        if (!stopsAtFailure) {
            return new RunOutcome.Completed<>(stopRequested, fates.failures()); // the failures were settled as they came (WP-23)
        }
        if (!fates.failures().isEmpty()) {
            return new RunOutcome.Failed<>(fates.failures(), stopRequested);
        }
        return new RunOutcome.Completed<>(stopRequested);
    }

    /** {@return {@code first}, or {@code next} if there is none; a later, different throwable is suppressed in the first} */
    @SuppressWarnings("ReferenceEquality") // the same throwable again: a throwable cannot suppress itself
    static Throwable keepFirst(@Nullable Throwable first, Throwable next) {
        if (first == null) {
            return next;
        }
        if (first != next) {
            first.addSuppressed(next);
        }
        return first;
    }

    @Override
    public String toString() {
        return pool + " " + phase;
    }
}
