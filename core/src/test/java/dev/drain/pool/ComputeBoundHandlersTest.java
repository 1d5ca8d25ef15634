package dev.drain.pool;

import static dev.drain.pool.Workloads.assertLedgerExact;
import static dev.drain.pool.Workloads.assertNoThreadsLeft;
import static dev.drain.pool.Workloads.drain;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.drain.pool.Workloads.CountingSource;
import dev.drain.support.Bounds;
import dev.drain.support.Call;
import dev.drain.support.Spawner;
import dev.drain.support.ThreadKind;
import dev.drain.support.Waits;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.IntStream;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * WP-3, WP-4, WP-12, WP-13 (decision 0025): handlers that compute without blocking, polling their
 * interrupt status as {@link Handler} asks, on more workers than there are cores. Virtual threads
 * are not preempted, so such handlers hold every carrier of the virtual-thread scheduler; the
 * pool's supervision must not need one. Each handler computes until it is interrupted, or for
 * {@link #COMPUTE} if nobody interrupts it, and counts that case: a pool whose timeouts and
 * cancellations wait for a carrier lets every handler run its full course. On both intakes; the
 * owner runs on both kinds of thread, and a call that must land while the handlers compute
 * ({@code abort()}) comes from a platform thread, since a virtual caller would need a carrier too.
 */
@ParameterizedClass
@EnumSource(WorkerPool.IntakeKind.class)
class ComputeBoundHandlersTest {
    /**
     * How long a handler computes if nobody interrupts it: far longer than any timeout here, and
     * well inside the bound of the owner's wait, so that a handler nobody stops ends the run and
     * fails the test by the assertions about it ({@code unstopped}), not as an owner that did not
     * end within the bound at the moment the handler was about to.
     */
    static final Duration COMPUTE = Bounds.WAIT.dividedBy(2);
    /**
     * The itemTimeout of the escalation (WP-4): the round {@link WatchdogTest} gives its stubborn
     * attempts, scaled as every bound is. WP-4's bound and its stuck report are on the wall clock
     * and assume that the handler's thread runs at least once a round; beside other builds on two
     * cores a carrier goes 50 ms without the CPU many times a minute, and 200 ms a few times.
     */
    static final Duration ROUND = WatchdogTest.STUBBORN_ROUND.multipliedBy(Bounds.FACTOR);
    /** More workers than carriers: the virtual-thread scheduler has one per core. */
    static final int WORKERS = 2 * Runtime.getRuntime().availableProcessors();

    private final WorkerPool.IntakeKind intake;

    @RegisterExtension
    final Spawner spawn = new Spawner();

    ComputeBoundHandlersTest(WorkerPool.IntakeKind intake) {
        this.intake = intake;
    }

    /**
     * Handlers that compute; each counts itself in {@code started}, and in {@code unstopped} if it
     * ran its full course, and notes in {@code offCpu} the longest time it went without looking at
     * its interrupt status: how long the machine kept its thread off the CPU.
     */
    static final class Computing {
        final CountDownLatch started = new CountDownLatch(1);
        final AtomicInteger began = new AtomicInteger();
        final AtomicInteger unstopped = new AtomicInteger();
        final AtomicInteger ended = new AtomicInteger();
        /** Per item, the longest time its handler went between two looks (from its start to its end), in nanoseconds. */
        final Map<Integer, Long> offCpu = new ConcurrentHashMap<>();
        private final int swallowed;
        private final Duration compute;

        /** Handlers that give up at the first interrupt after ignoring {@code swallowed} of them. */
        Computing(int swallowed) {
            this(swallowed, COMPUTE);
        }

        /** Handlers that give up at the first interrupt after ignoring {@code swallowed} of them, or after {@code compute}. */
        Computing(int swallowed, Duration compute) {
            this.swallowed = swallowed;
            this.compute = compute;
        }

        String handle(int item) throws InterruptedException {
            began.incrementAndGet();
            started.countDown();
            long last = System.nanoTime();
            long longest = 0;
            try {
                long end = last + compute.toNanos();
                long work = item;
                int ignored = 0;
                for (long now = System.nanoTime(); now - end < 0; now = System.nanoTime()) {
                    longest = Math.max(longest, now - last);
                    last = now;
                    work = work * 31 + 7; // computing: no blocking call, nothing the scheduler could switch at
                    if (Thread.interrupted() && ignored++ >= swallowed) {
                        throw new InterruptedException("stopped while computing " + item + " (" + work + ")");
                    }
                }
                unstopped.incrementAndGet();
                return Workloads.result(item);
            } finally {
                offCpu.put(item, Math.max(longest, System.nanoTime() - last));
                ended.incrementAndGet();
            }
        }

        /** {@return whether {@code item}'s handler, if it began, looked at its interrupt status at least every {@code every}} */
        boolean ranEvery(int item, Duration every) {
            return offCpu.getOrDefault(item, 0L) < every.toNanos();
        }
    }

    private WorkerPool.Builder<Integer, String> pool(Computing computing) {
        return WorkerPool.<Integer, String>builder(computing::handle).intake(intake).workers(WORKERS).queueSize(WORKERS);
    }

    /** WP-3: every attempt of a handler that computes times out, on more workers than cores; none runs its full course. */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void computingHandlersTimeOut(ThreadKind kind) {
        Computing computing = new Computing(0);
        WorkerPool<Integer, String> pool = pool(computing).itemTimeout(Duration.ofMillis(100)).build();
        PoolFailure failure = spawn.use(kind).call("owner", () -> {
            try (Results<Integer, String> results = pool.run(IntStream.range(0, WORKERS).boxed())) {
                PoolFailure failed = catchThrowableOfType(PoolFailure.class, () -> drain(results));
                assertLedgerExact(results);
                return failed;
            }
        }).value();
        assertThat(Objects.requireNonNull(failure).failures()).hasSize(WORKERS)
                .allSatisfy(f -> assertThat(f.cause()).isInstanceOf(TimeoutException.class));
        assertThat(computing.unstopped).as("handlers that ran their full course").hasValue(0);
        assertNoThreadsLeft(pool);
    }

    /**
     * WP-4: a computing handler that swallows two interrupts is stopped by the third round, and one
     * that ignores them all is reported stuck while it still computes. Stopped it always is, even
     * when the machine keeps its thread off the CPU for whole rounds (rounds never merge); that it
     * stops in time, and so is not reported stuck, WP-4 promises where its thread runs at least once
     * a round, so it is checked where the handler saw itself run at least every half round (it
     * needs the CPU once to see the third interrupt and once to end, within the round after it).
     */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void computingHandlersAreEscalatedAndReportedStuck(ThreadKind kind) throws Exception {
        Computing stubborn = new Computing(2);
        WorkerPool<Integer, String> escalated = pool(stubborn).itemTimeout(ROUND).build();
        PoolFailure failure = spawn.use(kind).call("owner", () -> {
            try (Results<Integer, String> results = escalated.run(IntStream.range(0, WORKERS).boxed())) {
                return catchThrowableOfType(PoolFailure.class, () -> drain(results));
            }
        }).value();
        assertThat(stubborn.unstopped).as("handlers that ran their full course").hasValue(0);
        assertThat(Objects.requireNonNull(failure).failures()).hasSize(WORKERS).allSatisfy(f -> {
            int item = (Integer) f.item(); // PoolFailure's list is wildcarded (WP-11)
            String cause = "the cause for item " + item + ", whose handler went at most "
                    + TimeUnit.NANOSECONDS.toMillis(stubborn.offCpu.getOrDefault(item, 0L)) + " ms without the CPU";
            if (stubborn.ranEvery(item, ROUND.dividedBy(2))) {
                assertThat(f.cause()).as(cause).isInstanceOf(TimeoutException.class);
            } else { // kept off the CPU: reported stuck before it could stop, it may be
                assertThat(f.cause()).as(cause).isInstanceOfAny(TimeoutException.class, StuckAttempt.class);
            }
        });

        Computing deaf = new Computing(Integer.MAX_VALUE, Duration.ofSeconds(2));
        WorkerPool<Integer, String> stuck = pool(deaf).itemTimeout(Duration.ofMillis(50)).build();
        AtomicReference<@Nullable Results<Integer, String>> running = new AtomicReference<>();
        Call<PoolFailure> owner = spawn.use(kind).call("owner", () -> {
            try (Results<Integer, String> results = stuck.run(IntStream.range(0, WORKERS).boxed())) {
                running.set(results);
                return catchThrowableOfType(PoolFailure.class, () -> drain(results));
            }
        });
        // Watched from this platform thread: a virtual owner gets no carrier while the deaf handlers
        // compute. The attempts that began are reported stuck by the watchdog, while they compute;
        // those that timed out waiting for a carrier are settled by their workers, later.
        Waits.until("every computing handler that began is reported stuck", () -> {
            Results<Integer, String> results = running.get();
            return results != null && deaf.began.get() > 0 && results.stats().failed() == deaf.began.get();
        });
        assertThat(deaf.ended).as("handlers that have ended when they are all reported stuck").hasValue(0);
        PoolFailure stuckFailures = Objects.requireNonNull(owner.value());
        // an attempt that timed out while it waited for a carrier never ran its handler (as in asyncio)
        assertThat(stuckFailures.failures()).hasSize(WORKERS).allSatisfy(f -> assertThat(f.cause())
                .isInstanceOfAny(StuckAttempt.class, TimeoutException.class));
        long stuckOnes = stuckFailures.failures().stream().filter(f -> f.cause() instanceof StuckAttempt).count();
        assertThat(stuckOnes).as("handlers reported stuck").isPositive();
        assertThat(deaf.unstopped).as("deaf handlers run their full course: the documented limit").hasValue((int) stuckOnes);
        assertNoThreadsLeft(stuck);
    }

    /** WP-12: abort() from a platform thread cancels attempts that compute on every carrier, and the run ends at once. */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void abortStopsComputingHandlers(ThreadKind kind) throws Exception {
        Computing computing = new Computing(0);
        WorkerPool<Integer, String> pool = pool(computing).itemTimeout(Duration.ofHours(1)).build();
        Call<PoolAborted> owner = spawn.use(kind).call("owner", () -> {
            try (Results<Integer, String> results = pool.run(CountingSource.endless())) {
                PoolAborted aborted = catchThrowableOfType(PoolAborted.class, () -> drain(results));
                assertLedgerExact(results);
                return aborted;
            }
        });
        assertThat(computing.started.await(Bounds.WAIT.toNanos(), TimeUnit.NANOSECONDS)).as("a handler started").isTrue();
        pool.abort(); // from the test's own thread, a platform thread
        PoolAborted aborted = Objects.requireNonNull(owner.value());
        assertThat(aborted.cancelled()).as("attempts the abort cancelled").isNotEmpty();
        assertThat(computing.unstopped).as("handlers that ran their full course").hasValue(0);
        assertNoThreadsLeft(pool);
    }

    /**
     * WP-13: close() before the end returns once the attempts that compute on every carrier are
     * cancelled. The owner is a platform thread: a virtual one could not get a carrier to call
     * close() until a handler ended.
     */
    @org.junit.jupiter.api.Test
    void closeStopsComputingHandlers() {
        Computing computing = new Computing(0);
        WorkerPool<Integer, String> pool = pool(computing).itemTimeout(Duration.ofHours(1)).build();
        RunOutcome<Integer> outcome = spawn.use(ThreadKind.PLATFORM).call("owner", () -> {
            Results<Integer, String> results = pool.run(CountingSource.endless());
            try (results) {
                assertThat(computing.started.await(Bounds.WAIT.toNanos(), TimeUnit.NANOSECONDS)).isTrue();
            }
            return assertLedgerExact(results);
        }).value();
        assertThat(Objects.requireNonNull(outcome)).isInstanceOf(RunOutcome.Abandoned.class);
        assertThat(outcome.cancelled()).as("attempts the close cancelled").isNotEmpty();
        assertThat(computing.unstopped).as("handlers that ran their full course").hasValue(0);
        assertNoThreadsLeft(pool);
    }
}
