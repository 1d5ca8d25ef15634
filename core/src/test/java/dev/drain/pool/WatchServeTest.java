package dev.drain.pool;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import dev.drain.support.Bounds;
import dev.drain.support.Call;
import dev.drain.support.Spawner;
import dev.drain.support.ThreadKind;
import dev.drain.support.Waits;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * WP-3, WP-4, WP-12: one {@link Watchdog.Watch}, served by the test at moments the test chooses
 * instead of by the watchdog's loop, so that each decision of {@code serve} is checked to the
 * nanosecond: what it sends at a moment, and when it asks to be served again. ({@link WatchdogTest}
 * checks the same watch under the real loop, where a late look is only a late look.) The attempt is a
 * started thread of either kind that counts the interrupts it gets until the test releases it.
 */
class WatchServeTest {
    private static final long TIMEOUT = Duration.ofMillis(250).toNanos();
    private static final long NOTHING = Long.MAX_VALUE;

    @RegisterExtension
    final Spawner spawn = new Spawner();

    private final List<String> reported = new CopyOnWriteArrayList<>();
    private final AtomicInteger stuck = new AtomicInteger();
    private final Watchdog watchdog = new Watchdog(1, TIMEOUT, () -> false, new Watchdog.Reports() {
        @Override
        public void timedOut(ItemContext<?> context, @Nullable String label) {
            reported.add("timedOut " + context.item());
        }

        @Override
        public void escalated(ItemContext<?> context, @Nullable String label, int round) {
            reported.add("escalated " + context.item() + " round " + round);
        }
    });
    private final Watchdog.Watch watch = watchdog.watchOf(0);
    private final ItemContext<Integer> context = new ItemContext<>(42, 1, 0);
    private final AtomicInteger interrupts = new AtomicInteger();
    private final CountDownLatch release = new CountDownLatch(1);
    /** When the watch was armed: its deadline is within TIMEOUT after it, and at most {@code armedBy} + TIMEOUT. */
    private long armedFrom;
    private long armedBy;

    /** Arms the watch and attaches a started attempt of {@code kind} that counts interrupts until released; begun if {@code begin}. */
    private Call<Void> armed(ThreadKind kind, boolean begin) {
        armedFrom = System.nanoTime();
        watch.arm(context, TIMEOUT, null, stuck::incrementAndGet);
        armedBy = System.nanoTime();
        Call<Void> attempt = spawn.use(kind).run("attempt-served-by-the-test", () -> {
            while (true) {
                try {
                    if (!release.await(Bounds.WAIT.toNanos(), TimeUnit.NANOSECONDS)) {
                        throw new AssertionError("the attempt was never released");
                    }
                    return;
                } catch (InterruptedException e) {
                    interrupts.incrementAndGet();
                }
            }
        });
        Thread _ = watch.attach(attempt.thread());
        if (begin) {
            assertThat(watch.begin()).isTrue();
        }
        return attempt;
    }

    /** Ends the attempt (releases it, waits for it, marks it completed) and {@return the watch's verdict} */
    private Watchdog.Verdict ended(Call<Void> attempt) {
        release.countDown();
        attempt.value();
        watch.completed();
        return watch.disarm();
    }

    private void awaitInterrupts(int expected) {
        Waits.until(expected + " interrupts", () -> interrupts.get() >= expected);
        assertThat(interrupts.get()).as("interrupts").isEqualTo(expected);
    }

    /** WP-3: before its deadline a watch sends nothing and asks to be served again exactly when the deadline falls due. */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void beforeTheDeadlineTheWatchWaitsForIt(ThreadKind kind) {
        Call<Void> attempt = armed(kind, true);
        long now = System.nanoTime();
        long next = watch.serve(now, false, watchdog);
        assertThat(next).isBetween(armedFrom + TIMEOUT - now, armedBy + TIMEOUT - now);
        assertThat(next).isPositive();
        assertThat(reported).isEmpty();
        assertThat(ended(attempt)).isEqualTo(Watchdog.Verdict.IN_TIME);
        assertThat(interrupts).hasValue(0);
    }

    /**
     * WP-3, WP-4: at its deadline an attempt is reported timed out and interrupted once; it is
     * interrupted again exactly one timeout after each round, {@value Watchdog#INTERRUPT_ROUNDS}
     * rounds in all, and one timeout after the last it is reported stuck, once, and then left alone.
     */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void aStubbornAttemptIsInterruptedRoundByRoundThenStuck(ThreadKind kind) {
        Call<Void> attempt = armed(kind, true);
        long now = System.nanoTime();
        long at = now + watch.serve(now, false, watchdog); // the deadline itself, to the nanosecond
        assertThat(watch.serve(at - 1, false, watchdog)).as("a nanosecond before the deadline").isEqualTo(1);
        assertThat(reported).isEmpty();
        assertThat(watch.serve(at, false, watchdog)).as("at the deadline").isEqualTo(TIMEOUT);
        assertThat(reported).containsExactly("timedOut 42");
        awaitInterrupts(1);
        for (int round = 2; round <= Watchdog.INTERRUPT_ROUNDS; round++) {
            assertThat(watch.serve(at + TIMEOUT - 1, false, watchdog)).as("a nanosecond before round " + round).isEqualTo(1);
            assertThat(interrupts).hasValue(round - 1);
            at += TIMEOUT;
            assertThat(watch.serve(at, false, watchdog)).as("round " + round).isEqualTo(TIMEOUT);
            awaitInterrupts(round);
        }
        assertThat(watch.serve(at + TIMEOUT - 1, false, watchdog)).isEqualTo(1);
        assertThat(stuck).hasValue(0);
        assertThat(watch.serve(at + TIMEOUT, false, watchdog)).isEqualTo(NOTHING);
        assertThat(stuck).as("reported stuck").hasValue(1);
        assertThat(watch.serve(at + 10 * TIMEOUT, true, watchdog)).isEqualTo(NOTHING);
        assertThat(stuck).as("reported stuck once").hasValue(1);
        assertThat(reported).containsExactly("timedOut 42", "escalated 42 round 2", "escalated 42 round 3");
        assertThat(ended(attempt)).isEqualTo(Watchdog.Verdict.STUCK);
        assertThat(interrupts).hasValue(Watchdog.INTERRUPT_ROUNDS);
    }

    /**
     * WP-4: a round that falls due while the attempt has not yet seen the previous interrupt (its
     * thread has not run since, as on a loaded machine) is reported on time, but its interrupt,
     * which would merge into the pending one, is owed: it is sent at the first look after the
     * attempt has seen the previous one, after the stuck report if need be, so that the attempt sees
     * one interrupt for each of the {@value Watchdog#INTERRUPT_ROUNDS} rounds.
     */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void aRoundsInterruptNeverMergesIntoOneNotYetSeen(ThreadKind kind) throws InterruptedException {
        Offstage offstage = new Offstage();
        Call<Void> attempt;
        synchronized (offstage.gate) { // held except while the attempt looks: until then its interrupt status is left alone
            watch.arm(context, TIMEOUT, null, stuck::incrementAndGet);
            attempt = spawn.use(kind).run("attempt-that-looks-when-let", offstage::run);
            try {
                Thread _ = watch.attach(attempt.thread());
                assertThat(watch.begin()).isTrue();
                long now = System.nanoTime();
                long at = now + watch.serve(now, false, watchdog);
                assertThat(watch.serve(at, false, watchdog)).as("at the deadline").isEqualTo(TIMEOUT);
                at += TIMEOUT;
                assertThat(watch.serve(at, false, watchdog)).as("round 2, the first interrupt not yet seen").isEqualTo(TIMEOUT);
                assertThat(reported).as("rounds reported on time").containsExactly("timedOut 42", "escalated 42 round 2");
                offstage.letLook();
                assertThat(offstage.seen()).as("interrupts seen at the first look").isEqualTo(1);
                at += TIMEOUT;
                assertThat(watch.serve(at, false, watchdog)).as("round 3, round 2's interrupt sent").isEqualTo(TIMEOUT);
                at += TIMEOUT;
                assertThat(watch.serve(at, false, watchdog)).as("stuck, round 3's interrupt still owed").isEqualTo(TIMEOUT);
                assertThat(stuck).as("reported stuck on time").hasValue(1);
                offstage.letLook();
                assertThat(offstage.seen()).as("interrupts seen at the second look").isEqualTo(2);
                assertThat(watch.serve(at + TIMEOUT - 1, false, watchdog)).as("a nanosecond before the next look").isEqualTo(1);
                assertThat(watch.serve(at + TIMEOUT, false, watchdog)).as("the last owed interrupt sent").isEqualTo(NOTHING);
                offstage.letLook();
                assertThat(offstage.seen()).as("interrupts seen at the last look").isEqualTo(Watchdog.INTERRUPT_ROUNDS);
            } finally {
                offstage.close(); // ends the attempt at its next look, even if an assertion failed
            }
        }
        attempt.value();
        watch.completed();
        assertThat(watch.disarm()).isEqualTo(Watchdog.Verdict.STUCK);
        assertThat(stuck).as("reported stuck once").hasValue(1);
        assertThat(reported).containsExactly("timedOut 42", "escalated 42 round 2", "escalated 42 round 3");
    }

    /**
     * An attempt's body that looks at its interrupt status only when the test lets it,
     * {@value #LOOKS} times, counting the interrupts it finds. Between looks it waits to enter
     * {@link #gate}, which the test holds: a thread that waits for a monitor leaves its interrupt
     * status as it is, as one that gets no CPU does.
     */
    private static final class Offstage {
        static final int LOOKS = Watchdog.INTERRUPT_ROUNDS;
        final Object gate = new Object();
        @GuardedBy("gate")
        private int allowed;
        @GuardedBy("gate")
        private int looked;
        @GuardedBy("gate")
        private int seen;
        @GuardedBy("gate")
        private boolean closed;

        /** The attempt: looks when let, until it has looked {@value #LOOKS} times or the test has closed it. */
        void run() {
            while (true) {
                synchronized (gate) {
                    if (looked < allowed) {
                        looked++;
                        if (Thread.interrupted()) {
                            seen++;
                        }
                        gate.notifyAll();
                    }
                    if (looked == LOOKS || closed) {
                        return;
                    }
                }
            }
        }

        /** The test, holding {@link #gate}, is done: the attempt ends at its next look. */
        @GuardedBy("gate")
        void close() {
            closed = true;
        }

        /** The test, holding {@link #gate}: lets the attempt look once, and waits (bounded) until it has. */
        @GuardedBy("gate")
        void letLook() throws InterruptedException {
            allowed++;
            long deadline = System.nanoTime() + Bounds.WAIT.toNanos();
            while (looked < allowed) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    throw new AssertionError("the attempt did not look within " + Bounds.WAIT);
                }
                TimeUnit.NANOSECONDS.timedWait(gate, left);
            }
        }

        @GuardedBy("gate")
        int seen() {
            return seen;
        }
    }

    /** WP-12: when the run is cancelling, a running attempt is interrupted at once, long before its deadline, and not reported as timed out. */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void aCancelledAttemptIsInterruptedAtOnce(ThreadKind kind) {
        Call<Void> attempt = armed(kind, true);
        long now = armedFrom;
        assertThat(watch.serve(now, true, watchdog)).isEqualTo(TIMEOUT);
        awaitInterrupts(1);
        assertThat(watch.serve(now + TIMEOUT - 1, true, watchdog)).isEqualTo(1);
        assertThat(watch.serve(now + TIMEOUT, true, watchdog)).isEqualTo(TIMEOUT);
        awaitInterrupts(2);
        assertThat(reported).containsExactly("escalated 42 round 2");
        assertThat(ended(attempt)).isEqualTo(Watchdog.Verdict.CANCELLED);
    }

    /**
     * WP-12, WP-13, WP-4: a cancellation reaches an attempt that timed out and still runs at once,
     * as its next round, not when that round would have fallen due; the rounds go on from there
     * and the verdict stays the timeout's.
     */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void aCancellationReachesATimedOutAttemptAtOnce(ThreadKind kind) {
        Call<Void> attempt = armed(kind, true);
        long at = armedBy + TIMEOUT;
        assertThat(watch.serve(at, false, watchdog)).as("at the deadline").isEqualTo(TIMEOUT);
        awaitInterrupts(1);
        long cancelledAt = at + 1; // long before the next round, due at + TIMEOUT
        assertThat(watch.serve(cancelledAt, true, watchdog)).as("the cancellation's round").isEqualTo(TIMEOUT);
        awaitInterrupts(2);
        assertThat(watch.serve(cancelledAt + 1, true, watchdog)).as("nothing more until a timeout later")
                .isEqualTo(TIMEOUT - 1);
        assertThat(watch.serve(cancelledAt + TIMEOUT, true, watchdog)).as("round 3").isEqualTo(TIMEOUT);
        awaitInterrupts(3);
        assertThat(watch.serve(cancelledAt + 2 * TIMEOUT, true, watchdog)).as("then stuck").isEqualTo(NOTHING);
        assertThat(stuck).hasValue(1);
        assertThat(reported).containsExactly("timedOut 42", "escalated 42 round 2", "escalated 42 round 3");
        assertThat(ended(attempt)).isEqualTo(Watchdog.Verdict.STUCK);
        assertThat(interrupts).hasValue(Watchdog.INTERRUPT_ROUNDS);
    }

    /** WP-3: an attempt whose thread has not begun the handler by its deadline is timed out without an interrupt, and then never runs the handler. */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void anAttemptThatNeverBeganIsTimedOutUninterrupted(ThreadKind kind) {
        Call<Void> attempt = armed(kind, false);
        long at = armedBy + TIMEOUT;
        assertThat(watch.serve(at, false, watchdog)).isEqualTo(NOTHING);
        assertThat(reported).containsExactly("timedOut 42");
        assertThat(watch.begin()).as("may it run the handler").isFalse();
        assertThat(watch.serve(at + 5 * TIMEOUT, false, watchdog)).isEqualTo(NOTHING);
        assertThat(stuck).hasValue(0);
        assertThat(ended(attempt)).isEqualTo(Watchdog.Verdict.TIMED_OUT);
        assertThat(interrupts).hasValue(0);
    }

    /** WP-3: a watch whose attempt has completed, or has no thread yet, asks for nothing, whatever the time and whether the run is cancelling. */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void aCompletedOrUnstartedAttemptAsksForNothing(ThreadKind kind) {
        watch.arm(context, TIMEOUT, null, stuck::incrementAndGet);
        assertThat(watch.serve(System.nanoTime() + 2 * TIMEOUT, true, watchdog)).as("no thread attached yet").isEqualTo(NOTHING);
        assertThat(watch.disarm()).as("an attempt whose fork failed").isEqualTo(Watchdog.Verdict.CANCELLED);
        Call<Void> attempt = armed(kind, true);
        release.countDown();
        attempt.value();
        watch.completed();
        assertThat(watch.serve(armedBy + 2 * TIMEOUT, true, watchdog)).isEqualTo(NOTHING);
        assertThat(reported).isEmpty();
        assertThat(watch.disarm()).isEqualTo(Watchdog.Verdict.IN_TIME);
        assertThat(interrupts).hasValue(0);
    }
}
