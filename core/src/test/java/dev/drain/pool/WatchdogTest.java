package dev.drain.pool;

import static dev.drain.pool.Workloads.drain;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.drain.pool.Workloads.CountingSource;
import dev.drain.pool.Workloads.Gate;
import dev.drain.support.Bounds;
import dev.drain.support.Call;
import dev.drain.support.Outcome;
import dev.drain.support.Spawner;
import dev.drain.support.ThreadKind;
import dev.drain.support.Waits;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * WP-3, WP-4, WP-20: the run's {@link Watchdog} and its {@link Watchdog.Watch}es, on their own. Each
 * test drives a watchdog as {@link Run} and {@link Supervisor} do: its loop on a platform daemon
 * thread, an attempt armed, attached to an unstarted thread, begun, completed and disarmed; the
 * attempt's thread is a platform or a virtual one. No test sleeps: each waits for what the watchdog
 * reports, with bounded polls, and times are only ever lower bounds.
 */
class WatchdogTest {
    /** The watchdog's itemTimeout where rounds are not counted: short, so a timeout comes quickly. */
    static final Duration ROUND = Duration.ofMillis(100);
    /** The itemTimeout of the escalation tests: long enough that two rounds' interrupts never merge into one. */
    static final Duration STUBBORN_ROUND = Duration.ofMillis(200);
    /** A deadline that never comes. */
    static final long NEVER = PoolConfig.LONGEST_NANOS;

    @RegisterExtension
    final Spawner spawn = new Spawner();

    /** What an attempt does once it has begun. */
    @FunctionalInterface
    interface Body {
        void run() throws Exception;
    }

    /** One watchdog under test, its loop on a platform daemon thread, and everything it reported or asked. */
    private static final class Rig implements AutoCloseable {
        final AtomicBoolean cancelling = new AtomicBoolean();
        final AtomicBoolean ownerGone = new AtomicBoolean();
        /** How many passes of the loop have begun to serve the watches (each reads {@code cancelling} once). */
        final AtomicLong passes = new AtomicLong();
        /** When the latest pass read {@code cancelling}. */
        volatile long lastPassAt;
        /** When the owner was asked, each time. */
        final List<Long> ownerChecks = new CopyOnWriteArrayList<>();
        final AtomicInteger ownerLeftRuns = new AtomicInteger();
        final List<Throwable> failures = new CopyOnWriteArrayList<>();
        final List<ItemContext<?>> timedOut = new CopyOnWriteArrayList<>();
        final List<Integer> escalations = new CopyOnWriteArrayList<>();
        /** Thrown by the next owner check, once. */
        final AtomicReference<@Nullable RuntimeException> ownerCheckThrows = new AtomicReference<>();
        /** Thrown by the next timeout report, once. */
        final AtomicReference<@Nullable RuntimeException> timeoutReportThrows = new AtomicReference<>();
        final Watchdog watchdog;
        final Call<Void> loop;

        Rig(Spawner spawn, int workers, Duration timeout) {
            this.watchdog = new Watchdog(workers, timeout.toNanos(), this::isCancelling, new Watchdog.Reports() {
                @Override
                public void timedOut(ItemContext<?> context, @Nullable String label) {
                    timedOut.add(context);
                    RuntimeException fault = timeoutReportThrows.getAndSet(null);
                    if (fault != null) {
                        throw fault;
                    }
                }

                @Override
                public void escalated(ItemContext<?> context, @Nullable String label, int round) {
                    escalations.add(round);
                }
            });
            Watchdog dog = watchdog;
            this.loop = spawn.use(ThreadKind.PLATFORM).run("watchdog-under-test",
                    () -> dog.watch(this::ownerLeft, ownerLeftRuns::incrementAndGet, () -> { }, failures::add));
        }

        private boolean isCancelling() {
            lastPassAt = System.nanoTime();
            passes.incrementAndGet();
            return cancelling.get();
        }

        private boolean ownerLeft() {
            ownerChecks.add(System.nanoTime());
            RuntimeException fault = ownerCheckThrows.getAndSet(null);
            if (fault != null) {
                throw fault;
            }
            return ownerGone.get();
        }

        /** Waits until a pass of the loop that began at or after {@code nanos} has served every watch. */
        void awaitPassBegunAfter(long nanos) {
            Waits.until("a pass of the watchdog after the mark", () -> lastPassAt - nanos >= 0);
            long seen = passes.get();
            Waits.until("the pass after it", () -> passes.get() > seen + 1);
        }

        /** Waits until a pass that began after now has served every watch. */
        void awaitPass() {
            awaitPassBegunAfter(System.nanoTime());
        }

        /** Stops the watchdog and waits (bounded) for its loop to return; fails if watch() threw or a failure went unchecked. */
        @Override
        public void close() {
            watchdog.stop();
            loop.value();
            assertThat(failures).as("failures the test did not expect").isEmpty();
        }
    }

    /** One attempt under a worker's watch, run as Supervisor runs it. */
    private static final class Attempt {
        final ItemContext<Integer> context;
        final Watchdog.Watch watch;
        final Thread thread;
        final Body body;
        final CountDownLatch began = new CountDownLatch(1);
        final AtomicBoolean ranTheHandler = new AtomicBoolean();
        final CountDownLatch stuck = new CountDownLatch(1);
        final AtomicInteger stuckReports = new AtomicInteger();
        volatile long stuckAt;
        volatile boolean runningWhenStuck;
        final AtomicReference<@Nullable Throwable> threw = new AtomicReference<>();
        volatile boolean interruptedAtEnd;
        volatile boolean ended;

        /** Arms worker {@code worker}'s watch, due {@code deadlineNanos} from now, and attaches an unstarted thread of {@code kind}. */
        Attempt(Rig rig, ThreadKind kind, int worker, long deadlineNanos, Body body) {
            this.context = new ItemContext<>(100 + worker, 1, worker);
            this.watch = rig.watchdog.watchOf(worker);
            this.body = body;
            watch.arm(context, deadlineNanos, null, this::onStuck);
            String name = "attempt-under-watch-" + worker;
            Runnable run = this::attempt;
            this.thread = watch.attach(switch (kind) {
                case PLATFORM -> Thread.ofPlatform().daemon(true).name(name).unstarted(run);
                case VIRTUAL -> Thread.ofVirtual().name(name).unstarted(run);
            });
        }

        private void attempt() {
            try {
                if (watch.begin()) {
                    ranTheHandler.set(true);
                    began.countDown();
                    body.run();
                }
            } catch (Throwable e) {
                threw.set(e);
            } finally {
                interruptedAtEnd = Thread.currentThread().isInterrupted();
                ended = true;
                watch.completed();
            }
        }

        private void onStuck() {
            stuckAt = System.nanoTime();
            runningWhenStuck = !ended && thread.isAlive();
            stuckReports.incrementAndGet();
            stuck.countDown();
        }

        Attempt start() {
            thread.start();
            return this;
        }

        void awaitBegan() throws InterruptedException {
            assertThat(began.await(Bounds.WAIT.toNanos(), TimeUnit.NANOSECONDS)).as("the attempt began").isTrue();
        }

        void awaitStuck() throws InterruptedException {
            assertThat(stuck.await(Bounds.WAIT.toNanos(), TimeUnit.NANOSECONDS)).as("the attempt was reported stuck").isTrue();
        }

        /** Waits (bounded) for the attempt's thread to end, fails if its body threw, and disarms the watch; {@return the verdict} */
        Watchdog.Verdict end() throws InterruptedException {
            assertThat(thread.join(Bounds.WAIT)).as("the attempt's thread ended").isTrue();
            Throwable failure = threw.get();
            if (failure != null) {
                throw new AssertionError("the attempt's body threw", failure);
            }
            return watch.disarm();
        }
    }

    /** An attempt that waits, bounded, until it is interrupted, noting when, and then ends. */
    private static Body untilInterrupted(AtomicLong interruptedAt) {
        return () -> {
            try {
                if (!new CountDownLatch(1).await(Bounds.WAIT.toNanos(), TimeUnit.NANOSECONDS)) {
                    throw new AssertionError("the attempt was never interrupted");
                }
            } catch (InterruptedException e) {
                interruptedAt.set(System.nanoTime());
            }
        };
    }

    /** An attempt that ignores every interrupt, counting them, until {@code release} opens. */
    private static Body ignoringInterrupts(CountDownLatch release, AtomicInteger interrupts) {
        return () -> {
            while (true) {
                try {
                    if (!release.await(Bounds.WAIT.toNanos(), TimeUnit.NANOSECONDS)) {
                        throw new AssertionError("the stubborn attempt was never released");
                    }
                    return;
                } catch (InterruptedException e) {
                    interrupts.incrementAndGet();
                }
            }
        };
    }

    // ---- WP-3 Per-item timeout -----------------------------------------------------------------------

    /** WP-3: an attempt that ends before its deadline is left alone: verdict IN_TIME, no timeout reported, never interrupted. */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void anAttemptThatEndsInTimeIsInTime(ThreadKind kind) throws Exception {
        try (Rig rig = new Rig(spawn, 1, ROUND)) {
            Attempt attempt = new Attempt(rig, kind, 0, Bounds.WAIT.toNanos(), () -> { }).start();
            assertThat(attempt.end()).isEqualTo(Watchdog.Verdict.IN_TIME);
            assertThat(attempt.ranTheHandler).isTrue();
            assertThat(attempt.interruptedAtEnd).as("interrupted").isFalse();
            assertThat(rig.timedOut).isEmpty();
        }
    }

    /** WP-3: an attempt still running at its deadline gets the TIMED_OUT verdict, reported once with its context. */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void anAttemptThatOutlivesItsDeadlineIsTimedOut(ThreadKind kind) throws Exception {
        try (Rig rig = new Rig(spawn, 1, ROUND)) {
            Attempt attempt = new Attempt(rig, kind, 0, ROUND.toNanos(), untilInterrupted(new AtomicLong())).start();
            assertThat(attempt.end()).isEqualTo(Watchdog.Verdict.TIMED_OUT);
            assertThat(rig.timedOut).containsExactly(attempt.context);
        }
    }

    /** WP-3: the watchdog itself interrupts the thread of an attempt that outlives its deadline. */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void theWatchdogInterruptsATimedOutAttempt(ThreadKind kind) throws Exception {
        try (Rig rig = new Rig(spawn, 1, ROUND)) {
            AtomicLong interruptedAt = new AtomicLong();
            Attempt attempt = new Attempt(rig, kind, 0, ROUND.toNanos(), untilInterrupted(interruptedAt)).start();
            attempt.end();
            assertThat(interruptedAt.get()).as("when the attempt saw its interrupt").isNotZero();
        }
    }

    /** WP-3: no attempt is timed out early: its interrupt comes no sooner than its deadline after it was armed. */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void noAttemptIsTimedOutBeforeItsDeadline(ThreadKind kind) throws Exception {
        Duration deadline = Duration.ofMillis(300);
        try (Rig rig = new Rig(spawn, 1, ROUND)) {
            AtomicLong interruptedAt = new AtomicLong();
            long armedBefore = System.nanoTime();
            Attempt attempt = new Attempt(rig, kind, 0, deadline.toNanos(), untilInterrupted(interruptedAt)).start();
            attempt.end();
            assertThat(Duration.ofNanos(interruptedAt.get() - armedBefore)).isGreaterThanOrEqualTo(deadline);
        }
    }

    /** WP-3: an attempt whose deadline passes before its thread starts never runs its handler, and its verdict is TIMED_OUT. */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void anAttemptTimedOutBeforeItsThreadStartsNeverBegins(ThreadKind kind) throws Exception {
        try (Rig rig = new Rig(spawn, 1, ROUND)) {
            Attempt attempt = new Attempt(rig, kind, 0, 0, () -> {
                throw new AssertionError("the handler ran");
            });
            Waits.until("the unstarted attempt is timed out", () -> !rig.timedOut.isEmpty());
            attempt.start();
            assertThat(attempt.end()).isEqualTo(Watchdog.Verdict.TIMED_OUT);
            assertThat(attempt.ranTheHandler).as("the handler ran").isFalse();
        }
    }

    /**
     * WP-3: the timeout is capped at PoolConfig.LONGEST_NANOS, by the config, so that no deadline
     * armed with it overflows; the watchdog refuses one beyond the cap.
     */
    @Test
    void theTimeoutIsCappedSoThatNoDeadlineOverflows() {
        PoolConfig<Integer, Integer> config = new PoolConfig<>("cap", item -> item, 1, 1,
                java.time.temporal.ChronoUnit.FOREVER.getDuration(), List.of(), 0, null,
                WorkerPool.IntakeKind.SHUTDOWN_QUEUE, new PoolThreads("cap"), null, 1, 1, WorkerPool.OnFailure.STOP, 0, true,
                Backoff.none(), null, item -> 0);
        Watchdog watchdog = new Watchdog(1, config.itemTimeoutNanos(), () -> false, new SilentReports());
        assertThat(watchdog.timeout()).isEqualTo(PoolConfig.LONGEST_NANOS);
        assertThatThrownBy(() -> new Watchdog(1, Long.MAX_VALUE, () -> false, new SilentReports()))
                .isInstanceOf(IllegalArgumentException.class);
    }

    /** WP-3: a Reports.timedOut that throws reaches onFailure, and the attempt is still interrupted and timed out. */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void aThrowingTimeoutReportReachesOnFailureAndTheAttemptIsStillInterrupted(ThreadKind kind) throws Exception {
        try (Rig rig = new Rig(spawn, 1, ROUND)) {
            IllegalStateException broken = new IllegalStateException("the timeout report broke");
            rig.timeoutReportThrows.set(broken);
            AtomicLong interruptedAt = new AtomicLong();
            Attempt attempt = new Attempt(rig, kind, 0, ROUND.toNanos(), untilInterrupted(interruptedAt)).start();
            assertThat(attempt.end()).isEqualTo(Watchdog.Verdict.TIMED_OUT);
            assertThat(interruptedAt.get()).as("when the attempt saw its interrupt").isNotZero();
            assertThat(rig.failures).containsExactly(broken);
            rig.failures.clear();
        }
    }

    /** WP-3: an interrupt only wakes the watchdog: it goes on timing attempts out until stop(). */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void anInterruptDoesNotEndTheWatchdog(ThreadKind kind) throws Exception {
        try (Rig rig = new Rig(spawn, 1, ROUND)) {
            rig.awaitPass();
            rig.loop.thread().interrupt();
            rig.awaitPass();
            Attempt attempt = new Attempt(rig, kind, 0, ROUND.toNanos(), untilInterrupted(new AtomicLong())).start();
            assertThat(attempt.end()).isEqualTo(Watchdog.Verdict.TIMED_OUT);
            assertThat(rig.loop.isDone()).as("the loop has returned").isFalse();
        }
    }

    /** WP-3: each worker's watch is timed on its own: of two attempts, only the one that outlives its deadline is timed out. */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void eachWatchIsTimedOnItsOwn(ThreadKind kind) throws Exception {
        try (Rig rig = new Rig(spawn, 2, ROUND)) {
            CountDownLatch release = new CountDownLatch(1);
            Attempt patient = new Attempt(rig, kind, 0, Bounds.WAIT.toNanos(), () -> {
                if (!release.await(Bounds.WAIT.toNanos(), TimeUnit.NANOSECONDS)) {
                    throw new AssertionError("never released");
                }
            }).start();
            Attempt late = new Attempt(rig, kind, 1, ROUND.toNanos(), untilInterrupted(new AtomicLong())).start();
            assertThat(late.end()).isEqualTo(Watchdog.Verdict.TIMED_OUT);
            release.countDown();
            assertThat(patient.end()).isEqualTo(Watchdog.Verdict.IN_TIME);
            assertThat(rig.timedOut).containsExactly(late.context);
        }
    }

    // ---- WP-4 Escalating cancellation ------------------------------------------------------------------

    /** What one attempt that ignores every interrupt showed, from its timeout (or cancellation) to its release. */
    private record Stubborn(int interrupts, int stuckReports, boolean runningWhenStuck, List<Integer> escalations,
                            List<ItemContext<?>> timedOut, Watchdog.Verdict verdict) {}

    /**
     * Runs one attempt that ignores every interrupt, timed out (or, with {@code cancel}, cancelled
     * with a deadline that never comes), until it is reported stuck and a pass of the watchdog two
     * rounds later has looked at it again; then releases it.
     */
    private Stubborn stubborn(ThreadKind kind, boolean cancel) throws InterruptedException {
        try (Rig rig = new Rig(spawn, 1, STUBBORN_ROUND)) {
            CountDownLatch release = new CountDownLatch(1);
            AtomicInteger interrupts = new AtomicInteger();
            Attempt attempt = new Attempt(rig, kind, 0, cancel ? NEVER : STUBBORN_ROUND.toNanos(),
                    ignoringInterrupts(release, interrupts)).start();
            if (cancel) {
                attempt.awaitBegan();
                rig.cancelling.set(true);
                rig.watchdog.wake();
            }
            try {
                attempt.awaitStuck();
                rig.awaitPassBegunAfter(attempt.stuckAt + STUBBORN_ROUND.multipliedBy(2).toNanos());
            } finally {
                release.countDown();
            }
            Watchdog.Verdict verdict = attempt.end();
            return new Stubborn(interrupts.get(), attempt.stuckReports.get(), attempt.runningWhenStuck,
                    List.copyOf(rig.escalations), List.copyOf(rig.timedOut), verdict);
        }
    }

    /** WP-4: an attempt that ignores interrupts is interrupted INTERRUPT_ROUNDS times, and no more once it is stuck. */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void aStubbornAttemptIsInterruptedInterruptRoundsTimes(ThreadKind kind) throws Exception {
        assertThat(stubborn(kind, false).interrupts()).isEqualTo(Watchdog.INTERRUPT_ROUNDS);
    }

    /** WP-4: an attempt that outlives every round is reported stuck exactly once, while it still runs, and its verdict is STUCK. */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void aStubbornAttemptIsReportedStuckOnceWhileItStillRuns(ThreadKind kind) throws Exception {
        Stubborn seen = stubborn(kind, false);
        assertThat(seen.stuckReports()).as("stuck reports").isOne();
        assertThat(seen.runningWhenStuck()).as("running when reported stuck").isTrue();
        assertThat(seen.verdict()).isEqualTo(Watchdog.Verdict.STUCK);
    }

    /** WP-4: a stubborn attempt's timeout is reported once, and each further round as an escalation numbered from 2 to INTERRUPT_ROUNDS. */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void eachFurtherRoundIsReportedAsAnEscalation(ThreadKind kind) throws Exception {
        Stubborn seen = stubborn(kind, false);
        assertThat(seen.timedOut()).hasSize(1);
        assertThat(seen.escalations()).containsExactly(2, Watchdog.INTERRUPT_ROUNDS);
    }

    /** WP-4: an attempt running when the run begins to cancel is interrupted, with the CANCELLED verdict and no timeout reported. */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void aCancelledAttemptIsInterruptedAndCancelled(ThreadKind kind) throws Exception {
        try (Rig rig = new Rig(spawn, 1, ROUND)) {
            AtomicLong interruptedAt = new AtomicLong();
            Attempt attempt = new Attempt(rig, kind, 0, NEVER, untilInterrupted(interruptedAt)).start();
            attempt.awaitBegan();
            rig.cancelling.set(true);
            rig.watchdog.wake();
            assertThat(attempt.end()).isEqualTo(Watchdog.Verdict.CANCELLED);
            assertThat(interruptedAt.get()).as("when the attempt saw its interrupt").isNotZero();
            assertThat(rig.timedOut).isEmpty();
        }
    }

    /** WP-4: a cancelled attempt that ignores interrupts is escalated as a timed-out one is: INTERRUPT_ROUNDS interrupts, then stuck once, with no timeout reported. */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void aCancelledStubbornAttemptIsEscalatedToStuck(ThreadKind kind) throws Exception {
        Stubborn seen = stubborn(kind, true);
        assertThat(seen.interrupts()).isEqualTo(Watchdog.INTERRUPT_ROUNDS);
        assertThat(seen.stuckReports()).as("stuck reports").isOne();
        assertThat(seen.verdict()).isEqualTo(Watchdog.Verdict.STUCK);
        assertThat(seen.timedOut()).isEmpty();
    }

    /** WP-4: an attempt cancelled before its thread starts never runs its handler, and its verdict is CANCELLED. */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void anAttemptCancelledBeforeItsThreadStartsNeverBegins(ThreadKind kind) throws Exception {
        try (Rig rig = new Rig(spawn, 1, ROUND)) {
            Attempt attempt = new Attempt(rig, kind, 0, NEVER, () -> {
                throw new AssertionError("the handler ran");
            });
            rig.cancelling.set(true);
            rig.watchdog.wake();
            rig.awaitPass();
            attempt.start();
            assertThat(attempt.end()).isEqualTo(Watchdog.Verdict.CANCELLED);
            assertThat(attempt.ranTheHandler).as("the handler ran").isFalse();
        }
    }

    /** WP-4: a watch disarmed while its attempt never started (its fork failed) reads CANCELLED. */
    @Test
    void aWatchWhoseAttemptNeverStartedReadsCancelled() {
        Watchdog watchdog = new Watchdog(1, ROUND.toNanos(), () -> false, new SilentReports());
        Watchdog.Watch watch = watchdog.watchOf(0);
        watch.arm(new ItemContext<>(1, 1, 0), NEVER, null, () -> { });
        assertThat(watch.disarm()).isEqualTo(Watchdog.Verdict.CANCELLED);
    }

    /** WP-4: a watch is armed once per attempt: arming it again before it is disarmed is refused. */
    @Test
    void aWatchArmedTwiceIsRefused() {
        Watchdog watchdog = new Watchdog(1, ROUND.toNanos(), () -> false, new SilentReports());
        Watchdog.Watch watch = watchdog.watchOf(0);
        watch.arm(new ItemContext<>(1, 1, 0), NEVER, null, () -> { });
        assertThatThrownBy(() -> watch.arm(new ItemContext<>(2, 1, 0), NEVER, null, () -> { }))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("armed twice");
    }

    /** WP-4: a watch is disarmed once per attempt: disarming an idle watch is refused. */
    @Test
    void aWatchDisarmedTwiceIsRefused() {
        Watchdog watchdog = new Watchdog(1, ROUND.toNanos(), () -> false, new SilentReports());
        Watchdog.Watch watch = watchdog.watchOf(0);
        watch.arm(new ItemContext<>(1, 1, 0), NEVER, null, () -> { });
        watch.disarm();
        assertThatThrownBy(watch::disarm).isInstanceOf(IllegalStateException.class).hasMessageContaining("disarmed twice");
    }

    /** Reports that record nothing: for the watches no loop serves. */
    private static final class SilentReports implements Watchdog.Reports {
        @Override
        public void timedOut(ItemContext<?> context, @Nullable String label) {}

        @Override
        public void escalated(ItemContext<?> context, @Nullable String label, int round) {}
    }

    // ---- WP-20 The owner's scope closed under the run ------------------------------------------------

    /** WP-20: the watchdog runs onOwnerLeft when ownerLeft says yes, and not while it says no. */
    @Test
    void onOwnerLeftRunsWhenTheOwnerHasLeft() {
        try (Rig rig = new Rig(spawn, 1, ROUND)) {
            Waits.until("the owner has been asked twice", () -> rig.ownerChecks.size() >= 2);
            assertThat(rig.ownerLeftRuns).as("onOwnerLeft runs while the owner is there").hasValue(0);
            rig.ownerGone.set(true);
            Waits.until("onOwnerLeft runs", () -> rig.ownerLeftRuns.get() > 0);
        }
    }

    /**
     * WP-20: the owner is asked again and again, about every OWNER_CHECK_MILLIS ms, not on every
     * pass: with passes every few milliseconds, five checks span at least three check intervals.
     */
    @Test
    void theOwnerIsAskedAboutEveryOwnerCheckMillis() {
        try (Rig rig = new Rig(spawn, 1, Duration.ofMillis(5))) {
            Waits.until("the owner has been asked five times", () -> rig.ownerChecks.size() >= 5);
            List<Long> checks = List.copyOf(rig.ownerChecks);
            long passes = rig.passes.get();
            // Each check is due OWNER_CHECK_MILLIS after the pass of the one before; one interval is
            // left as margin for the moment between a pass reading the clock and asking the owner.
            assertThat(Duration.ofNanos(checks.get(4) - checks.get(0)))
                    .isGreaterThanOrEqualTo(Duration.ofMillis(3 * Watchdog.OWNER_CHECK_MILLIS));
            assertThat(passes).as("passes of the loop").isGreaterThan(checks.size());
        }
    }

    /** WP-20: an ownerLeft that throws reaches onFailure, and the watchdog goes on asking the owner and timing attempts out. */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void aThrowingOwnerCheckReachesOnFailureAndTheLoopGoesOn(ThreadKind kind) throws Exception {
        try (Rig rig = new Rig(spawn, 1, ROUND)) {
            IllegalStateException broken = new IllegalStateException("the owner check broke");
            rig.ownerCheckThrows.set(broken);
            Waits.until("the failure reaches onFailure", () -> !rig.failures.isEmpty());
            assertThat(rig.failures).containsExactly(broken);
            rig.failures.clear();
            int checks = rig.ownerChecks.size();
            Waits.until("the owner is asked again", () -> rig.ownerChecks.size() > checks);
            Attempt attempt = new Attempt(rig, kind, 0, ROUND.toNanos(), untilInterrupted(new AtomicLong())).start();
            assertThat(attempt.end()).isEqualTo(Watchdog.Verdict.TIMED_OUT);
        }
    }

    // ---- The watchdog's thread -----------------------------------------------------------------------

    /** WP-10: stop() ends the watchdog's loop: watch() returns, within the bound. */
    @Test
    void stopEndsTheLoop() {
        try (Rig rig = new Rig(spawn, 1, Duration.ofMinutes(1))) {
            rig.awaitPass();
            rig.watchdog.stop();
            assertThat(rig.loop.outcome()).isInstanceOf(Outcome.Returned.class);
        }
    }

    /** WP-10: a watchdog stopped before its loop begins returns from watch() at once, without asking the owner. */
    @Test
    void aWatchdogStoppedBeforeItsLoopReturnsAtOnce() {
        AtomicInteger asked = new AtomicInteger();
        Watchdog watchdog = new Watchdog(1, Duration.ofMinutes(1).toNanos(), () -> false, new SilentReports());
        watchdog.stop();
        Call<Void> loop = spawn.use(ThreadKind.PLATFORM).run("watchdog-stopped-early",
                () -> watchdog.watch(() -> asked.incrementAndGet() < 0, () -> { }, () -> { }, e -> { }));
        loop.value();
        assertThat(asked).hasValue(0);
    }

    /** Finds the watchdog thread of {@code pool}'s run, which is alive; fails unless there is exactly one. */
    private static Thread watchdogThreadOf(WorkerPool<?, ?> pool) {
        List<Thread> found = Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.getName().startsWith(pool.name() + "-watchdog-")).toList();
        assertThat(found).as("the watchdog threads of %s", pool.name()).hasSize(1);
        return found.getFirst();
    }

    /** {@return a pool of one worker named {@code name}, whose handler waits behind {@code gate}} */
    private static WorkerPool<Integer, String> gatedPool(Gate gate, String name) {
        return WorkerPool.<Integer, String>builder(Workloads.behind(gate))
                .workers(1).queueSize(1).itemTimeout(Bounds.WAIT).name(name).build();
    }

    /** Runs {@code pool} over one item on an owner of {@code kind}, which drains and closes the results; {@return the owner's call} */
    private Call<List<String>> ownerOf(WorkerPool<Integer, String> pool, ThreadKind kind) {
        return spawn.use(kind).call("owner", () -> {
            try (Results<Integer, String> results = pool.run(CountingSource.of(1))) {
                return drain(results);
            }
        });
    }

    /** WP-3, WP-20: a run's watchdog is one platform daemon thread, whatever thread owns the run. */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void theRunsWatchdogIsAPlatformDaemonThread(ThreadKind kind) throws Exception {
        Gate gate = new Gate();
        WorkerPool<Integer, String> pool = gatedPool(gate, "watchdog-kind-" + kind);
        Call<List<String>> owner = ownerOf(pool, kind);
        try {
            gate.awaitArrivals(1);
            Thread watchdog = watchdogThreadOf(pool);
            assertThat(watchdog.isVirtual()).as("virtual").isFalse();
            assertThat(watchdog.isDaemon()).as("daemon").isTrue();
        } finally {
            gate.open();
        }
        assertThat(owner.value()).containsExactly(Workloads.result(0));
        Workloads.assertNoThreadsLeft(pool);
    }

    /** WP-10: a run's watchdog thread ends with the run: once the results are closed it terminates. */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void theRunsWatchdogEndsWithTheRun(ThreadKind kind) throws Exception {
        Gate gate = new Gate();
        WorkerPool<Integer, String> pool = gatedPool(gate, "watchdog-end-" + kind);
        Call<List<String>> owner = ownerOf(pool, kind);
        Thread watchdog;
        try {
            gate.awaitArrivals(1);
            watchdog = watchdogThreadOf(pool);
        } finally {
            gate.open();
        }
        assertThat(owner.value()).containsExactly(Workloads.result(0));
        assertThat(watchdog.join(Bounds.WAIT)).as("the watchdog thread ended").isTrue();
        Workloads.assertNoThreadsLeft(pool);
    }
}
