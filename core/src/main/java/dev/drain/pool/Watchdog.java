package dev.drain.pool;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * The run's watchdog: one <em>platform</em> thread per run that supervises every attempt from the
 * outside (decision 0025). Each worker has a {@link Watch}, which it arms before it forks an
 * attempt and disarms once the attempt has ended. The watchdog
 * <ul>
 *   <li>times an attempt out when its deadline ({@code itemTimeout} after it was armed) passes,
 *       and interrupts the attempt's thread itself (WP-3);</li>
 *   <li>when the run is being cancelled (abort, abandon, a crash), interrupts every running
 *       attempt at once (WP-12, WP-13);</li>
 *   <li>interrupts a timed-out or cancelled attempt that is still running again after each further
 *       {@code itemTimeout}, {@value #INTERRUPT_ROUNDS} rounds in all, and then reports it stuck:
 *       its item fails at once (WP-4); a round's interrupt never merges into one the attempt has
 *       not seen yet (see {@link Watch}; decision 0058);</li>
 *   <li>every {@value #OWNER_CHECK_MILLIS} ms, asks whether the run's owner is closing the run's
 *       scope without having closed its results, and if so abandons the run (WP-20);</li>
 *   <li>once the deadline of a graceful stop passes ({@link #abortAt}), aborts the run (WP-24).</li>
 * </ul>
 * Why a platform thread: virtual threads are not preempted, so handlers that compute without
 * blocking, on as many workers as there are carriers, would keep every virtual thread of the
 * pool (workers, driver, a virtual watchdog) off the CPU until they end by themselves; no timeout
 * would fire and no abort would land. The operating system time-slices platform threads, so this
 * one runs whatever the handlers do, and an interrupt it sends reaches a handler that polls its
 * interrupt status while it computes. The workers need no CPU for any of it: they wait for their
 * attempts to end and then read the verdict.
 *
 * <p>The watchdog never runs user code (no handler, no sink, no {@code toString}): what it records
 * is built later, on the reporter ({@link Reporter#recordNow}, which never waits), and the text of
 * a stuck attempt's failure is built when someone reads it. A callback that never returns can
 * therefore hold its own thread, never the timeouts of the others.
 *
 * <p>How it knows when to wake without being told about new deadlines: every attempt of a run has
 * the same timeout, so a deadline armed at {@code t} is {@code t + timeout}, and the watchdog never
 * sleeps longer than a timeout; a deadline armed while it sleeps falls due after it wakes (decision
 * 0022). A fast attempt costs three uncontended monitor entries on its watch and no timer.
 * Cancellation wakes it at once ({@link #wake()}).
 */
final class Watchdog {

    /**
     * How many times an attempt that outlived its time, or whose run is being cancelled, is
     * interrupted, {@code itemTimeout} apart, before it is reported stuck (WP-4). The JDK's scopes
     * interrupt once; a handler that swallows one or two interrupts is still stopped here.
     */
    static final int INTERRUPT_ROUNDS = 3;

    /** How often the watchdog looks at the run's owner (WP-20), in milliseconds. */
    static final long OWNER_CHECK_MILLIS = 100;
    private static final long OWNER_CHECK = OWNER_CHECK_MILLIS * 1_000_000;
    /** A delay that means "nothing to do": the watchdog looks again within a timeout anyway. */
    private static final long NOTHING = Long.MAX_VALUE;

    /** How a watched attempt ended, as its worker reads it after the attempt has ended. */
    enum Verdict {
        /** It returned or threw within its time: its ending is the attempt's outcome. */
        IN_TIME,
        /** It outlived {@code itemTimeout}: a {@code TimeoutException}, whatever it did after. */
        TIMED_OUT,
        /** The run was cancelled while it ran: cancelled, whatever it did after. */
        CANCELLED,
        /** It outlived every round, and its item has already failed ({@code onStuck} ran). */
        STUCK
    }

    /** What the watchdog records; supplied by the run, called on the watchdog, never waits. */
    interface Reports {
        /** {@code context}'s attempt outlived {@code itemTimeout}; its first interrupt follows. */
        void timedOut(ItemContext<?> context, @Nullable String label);

        /**
         * {@code context}'s attempt still ran and is interrupted again, in round {@code round}: at
         * once, or, if it has not yet seen the previous interrupt, once it has (rounds never merge).
         */
        void escalated(ItemContext<?> context, @Nullable String label, int round);
    }

    private final Watch[] watches;
    private final long timeout;
    private final BooleanSupplier cancelling;
    private final Reports reports;
    /** Whether the watchdog should end; set once, by {@link #stop()}. */
    private volatile boolean stopped;
    /**
     * When to abort the run, in {@link System#nanoTime()}'s terms ({@link #abortAt}), if a stop
     * has a deadline; written under the lifecycle's lock, read and cleared by the watchdog.
     */
    private volatile @Nullable Long abortAt;
    /** The watchdog's thread, once {@link #watch} runs; written by it, read by {@link #wake()} and {@link #stop()}. */
    private volatile @Nullable Thread thread;

    /**
     * A watchdog for {@code workers} workers, each attempt given {@code timeoutNanos} (at most
     * {@link PoolConfig#LONGEST_NANOS}, so that a deadline does not overflow:
     * {@link PoolConfig#itemTimeoutNanos()} caps it); {@code cancelling} says whether the run is
     * being cancelled.
     */
    Watchdog(int workers, long timeoutNanos, BooleanSupplier cancelling, Reports reports) {
        if (timeoutNanos <= 0 || timeoutNanos > PoolConfig.LONGEST_NANOS) {
            throw new IllegalArgumentException("unreachable: a timeout of " + timeoutNanos + " ns (PoolConfig caps it)");
        }
        this.timeout = timeoutNanos;
        this.cancelling = cancelling;
        this.reports = reports;
        this.watches = new Watch[workers];
        for (int w = 0; w < workers; w++) {
            watches[w] = new Watch();
        }
    }

    /** {@return the watch of worker {@code worker}} */
    Watch watchOf(int worker) {
        return watches[worker];
    }

    /** {@return the timeout of every attempt, in nanoseconds} */
    long timeout() {
        return timeout;
    }

    /**
     * The watchdog's loop, until {@link #stop()}: serves every watch, asks {@code ownerLeft} every
     * {@value #OWNER_CHECK_MILLIS} ms and runs {@code onOwnerLeft} when it says yes, then sleeps
     * until something falls due. An interrupt only wakes it to look again (decision 0015), and it
     * survives its own failures: {@code onFailure} is told, and the loop goes on, because the
     * attempts depend on it.
     */
    void watch(BooleanSupplier ownerLeft, Runnable onOwnerLeft, Runnable onDeadline, Consumer<Throwable> onFailure) {
        thread = Thread.currentThread();
        long nextOwnerCheck = System.nanoTime() + OWNER_CHECK;
        while (!stopped) {
            long sleep = OWNER_CHECK;
            try {
                long now = System.nanoTime();
                if (now - nextOwnerCheck >= 0) {
                    nextOwnerCheck = now + OWNER_CHECK;
                    if (ownerLeft.getAsBoolean()) {
                        onOwnerLeft.run(); // abandons the run: the scan below then cancels its attempts
                    }
                }
                Long deadline = abortAt;
                if (deadline != null && now - deadline >= 0) {
                    abortAt = null;
                    onDeadline.run(); // aborts the run: the scan below then cancels its attempts
                }
                boolean cancel = cancelling.getAsBoolean();
                sleep = Math.min(timeout, nextOwnerCheck - now);
                Long pending = abortAt;
                if (pending != null) {
                    sleep = Math.min(sleep, pending - now);
                }
                for (Watch watch : watches) {
                    sleep = Math.min(sleep, watch.serve(now, cancel, this));
                }
            } catch (Throwable e) { // a bug in drain, or the JVM out of memory: report it, and keep serving
                onFailure.accept(e);
            }
            if (!stopped && sleep > 0) {
                LockSupport.parkNanos(this, sleep);
            }
            Thread.interrupted(); // the watchdog decides by stopped alone (decision 0015)
        }
    }

    /**
     * Has the watchdog abort the run once {@link System#nanoTime()} reaches {@code deadline}
     * (WP-24); a later call replaces it (the lifecycle only ever moves it earlier). Any thread;
     * never blocks.
     */
    void abortAt(long deadline) {
        abortAt = deadline;
        wake();
    }

    /** Makes the watchdog look at every watch now: the run is being cancelled. Any thread; never blocks. */
    void wake() {
        Thread watchdog = thread;
        if (watchdog != null) {
            LockSupport.unpark(watchdog);
        }
    }

    /** Ends the watchdog; call once every worker has finished. */
    void stop() {
        stopped = true;
        wake();
    }

    /**
     * One worker's attempt under watch, from {@link #arm} to {@link #disarm}. The worker arms it
     * before forking, {@linkplain #attach attaches} the attempt's thread (inside the fork, before the
     * thread starts), and disarms it once the attempt has ended; the attempt's thread calls
     * {@link #completed()} when its handler returns or throws; the watchdog {@linkplain #serve serves}
     * it. Exactly one of completion, the deadline and a cancellation decides the verdict, under this
     * watch's lock, and what the watchdog records for it is recorded before the verdict can be read,
     * so that the worker's later events for the item come after it (WP-8).
     *
     * <pre>
     *   IDLE ──arm──► RUNNING ──completed (in time)──────────────► DONE   (begin(): the handler may run)
     *                 RUNNING ──the deadline passed────► TIMED_OUT ─┐ a round every itemTimeout,
     *                 RUNNING ──the run is cancelling──► CANCELLED ─┤ while it still runs
     *                                                               └─ after round 3 ──► STUCK
     *   any ──disarm (the attempt has ended)──► IDLE
     * </pre>
     * <p>A thread's interrupt status is one flag, not a count: an interrupt sent while the previous
     * one is still pending (the attempt's thread has not looked at its status since, because it
     * has not run: its carrier got no CPU for a whole {@code itemTimeout} on a loaded machine)
     * changes nothing, and a handler that swallows two interrupts would then never see a third
     * and run its full course. So a round that falls due while the previous interrupt is still
     * pending is reported on time, but its interrupt is <em>owed</em>: it is sent at the first
     * later look (one every {@code itemTimeout}) at which the previous one has been seen, after
     * the stuck report if need be, until the attempt has been sent one interrupt per round or has
     * ended. An attempt whose status stays set (it never looks) is owed them for as long as it
     * runs; sending them would change nothing, and it is reported stuck on time all the same.
     *
     * <p>A watch's lock comes first in the package's one lock order ({@code package-info.java}):
     * {@code onStuck} and the reports take the lifecycle's, the ledger's and the hand-offs' under
     * it, and nothing takes a watch's lock while holding one of those.
     */
    static final class Watch {
        private enum State { IDLE, RUNNING, DONE, TIMED_OUT, CANCELLED, STUCK }

        @GuardedBy("this")
        private State state = State.IDLE;
        /** Whether the armed attempt's thread has begun to run the handler ({@link #begin()}). */
        @GuardedBy("this")
        private boolean began;
        /** Whether the armed attempt has ended (its handler returned or threw, or never began). */
        @GuardedBy("this")
        private boolean ended;
        /** Rounds of interrupts that have fallen due for the armed attempt. */
        @GuardedBy("this")
        private int round;
        /** Whether the run's cancellation has reached the armed attempt after it had timed out. */
        @GuardedBy("this")
        private boolean cancelSeen;
        /** Interrupts sent to the armed attempt: {@link #round} less those still owed. */
        @GuardedBy("this")
        private int sent;
        /**
         * RUNNING: the deadline; TIMED_OUT and CANCELLED: when the next round (or STUCK) is due;
         * STUCK: when to look again for a chance to send an owed interrupt.
         */
        @GuardedBy("this")
        private long due;
        @GuardedBy("this")
        private @Nullable Thread attempt;
        @GuardedBy("this")
        private @Nullable ItemContext<?> context;
        /** The item's text for the JDK Flight Recorder's events, built by the worker if a recording wants it. */
        @GuardedBy("this")
        private @Nullable String label;
        @GuardedBy("this")
        private @Nullable Runnable onStuck;

        /**
         * The worker is about to fork {@code context}'s attempt, due {@code timeout} nanoseconds
         * from now; {@code onStuck} settles its item as failed if it outlives every round.
         */
        synchronized void arm(ItemContext<?> context, long timeout, @Nullable String label, Runnable onStuck) {
            if (state != State.IDLE) {
                throw new IllegalStateException("unreachable: a watch armed twice (" + state + ")");
            }
            this.state = State.RUNNING;
            this.began = false;
            this.ended = false;
            this.round = 0;
            this.cancelSeen = false;
            this.sent = 0;
            this.due = System.nanoTime() + timeout;
            this.attempt = null;
            this.context = context;
            this.label = label;
            this.onStuck = onStuck;
        }

        /** The armed attempt's thread, created and not yet started; {@return it} */
        synchronized Thread attach(Thread thread) {
            attempt = thread;
            return thread;
        }

        /**
         * The armed attempt's thread is about to run the handler; {@return whether it should} It
         * should not if the attempt has already timed out or been cancelled while its thread waited
         * to start (with more workers than carriers, a computing handler can keep it waiting): as in
         * asyncio, a task cancelled before its first step never runs. Called on the attempt's thread.
         */
        synchronized boolean begin() {
            if (state != State.RUNNING) {
                return false;
            }
            began = true;
            return true;
        }

        /** The armed attempt has ended; called on its thread. Ends the race with the deadline. */
        synchronized void completed() {
            ended = true;
            if (state == State.RUNNING) {
                state = State.DONE;
            }
        }

        /** The worker, once the attempt has ended: frees the watch; {@return the attempt's verdict} */
        synchronized Verdict disarm() {
            State was = state;
            state = State.IDLE;
            attempt = null;
            context = null;
            label = null;
            onStuck = null;
            return switch (was) {
                case DONE -> Verdict.IN_TIME;
                case TIMED_OUT -> Verdict.TIMED_OUT;
                case CANCELLED -> Verdict.CANCELLED;
                case STUCK -> Verdict.STUCK;
                case RUNNING -> Verdict.CANCELLED; // it never started: the fork failed
                case IDLE -> throw new IllegalStateException("unreachable: a watch disarmed twice");
            };
        }

        /**
         * The watchdog's look at this watch at {@code now}: times the attempt out, cancels it,
         * interrupts it again or reports it stuck, whichever is due, and sends an interrupt still
         * owed once the previous one has been seen. {@return how long until this watch needs a
         * look again, or {@link #NOTHING}}
         */
        synchronized long serve(long now, boolean cancelling, Watchdog watchdog) {
            Thread running = attempt;
            ItemContext<?> item = context;
            if (ended || running == null || item == null) {
                return NOTHING; // idle, done, or not started yet (the worker wakes the watchdog after it forks)
            }
            if (state == State.RUNNING) {
                if (cancelling) {
                    state = State.CANCELLED;
                } else if (now - due >= 0) {
                    state = State.TIMED_OUT;
                    watchdog.reports.timedOut(item, label);
                } else {
                    return due - now;
                }
                return began ? interrupt(running, now, watchdog) : NOTHING; // unbegun: it will not run the handler
            }
            if (!began || (state != State.TIMED_OUT && state != State.CANCELLED && state != State.STUCK)) {
                return NOTHING; // it never ran the handler: nothing to send
            }
            if (cancelling && state == State.TIMED_OUT && !cancelSeen) {
                // The run is being cancelled while a timed-out attempt still runs: its next round
                // comes now, not when its timeout's round would have (WP-12, WP-13).
                cancelSeen = true;
                if (round < INTERRUPT_ROUNDS) {
                    watchdog.reports.escalated(item, label, round + 1);
                    return interrupt(running, now, watchdog);
                }
            }
            if (now - due < 0) {
                return due - now;
            }
            if (state == State.STUCK) {
                return sendOwed(running, now, watchdog); // reported: only the interrupts it is owed remain
            }
            if (round < INTERRUPT_ROUNDS) {
                watchdog.reports.escalated(item, label, round + 1);
                return interrupt(running, now, watchdog);
            }
            state = State.STUCK;
            if (onStuck != null) {
                onStuck.run();
            }
            return sendOwed(running, now, watchdog);
        }

        /** A round falls due: its interrupt is sent, or owed if it would merge into one not yet seen. {@return the next round's delay} */
        @GuardedBy("this")
        private long interrupt(Thread running, long now, Watchdog watchdog) {
            round++;
            due = now + watchdog.timeout;
            sendIfSeen(running);
            return watchdog.timeout;
        }

        /** Stuck: sends an owed interrupt if the previous one has been seen. {@return when to look again, or {@link #NOTHING} once none is owed} */
        @GuardedBy("this")
        private long sendOwed(Thread running, long now, Watchdog watchdog) {
            sendIfSeen(running);
            if (sent == round) {
                return NOTHING;
            }
            due = now + watchdog.timeout;
            return watchdog.timeout;
        }

        /** Sends one owed interrupt, unless the attempt has not yet seen the last one: the two would merge into one. */
        @GuardedBy("this")
        private void sendIfSeen(Thread running) {
            if (sent < round && !running.isInterrupted()) {
                sent++;
                running.interrupt();
            }
        }
    }
}
