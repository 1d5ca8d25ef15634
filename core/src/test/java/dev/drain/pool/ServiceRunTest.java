package dev.drain.pool;

import static dev.drain.pool.Workloads.assertLedgerExact;
import static dev.drain.pool.Workloads.assertNoThreadsLeft;
import static org.assertj.core.api.Assertions.assertThat;

import dev.drain.pool.SettlementTest.RecordingSettler;
import dev.drain.support.Call;
import dev.drain.support.Spawner;
import dev.drain.support.ThreadKind;
import dev.drain.support.Waits;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * WP-23, WP-25: a pool run as a service. A run that goes on past its bad items
 * ({@link WorkerPool.OnFailure#CONTINUE}) settles each as failed, counts it, keeps the first few,
 * and handles every other item in the same run; a side-effect pool ({@link WorkerPool#forEach})
 * has no null trap and makes progress whether or not anyone reads its results; {@code drain()}
 * runs a pool to its end in one call and returns every outcome as a value. On both intakes, with
 * owners of both kinds.
 */
@ParameterizedClass
@EnumSource(WorkerPool.IntakeKind.class)
class ServiceRunTest {
    private final WorkerPool.IntakeKind intake;

    @RegisterExtension
    final Spawner spawn = new Spawner();

    ServiceRunTest(WorkerPool.IntakeKind intake) {
        this.intake = intake;
    }

    /** Fails every tenth item for good: a malformed job. */
    private static void failEveryTenth(int item) {
        if (item % 10 == 9) {
            throw new IllegalArgumentException("item " + item + " is malformed");
        }
    }

    /** The items the store was told failed, in the order it heard them. */
    private static List<Integer> deadLetters(RecordingSettler settler) {
        return settler.offered().stream().<Integer>mapMulti((s, out) -> {
            if (s instanceof Settlement.Failed<Integer> f) {
                out.accept(f.item());
            }
        }).toList();
    }

    private static long succeededSettlements(RecordingSettler settler) {
        return settler.offered().stream().filter(s -> s instanceof Settlement.Succeeded<Integer>).count();
    }

    /**
     * WP-23: under {@code CONTINUE} a permanent failure does not stop the intake: 200 items, every
     * tenth malformed, one run; every item is handled, the 20 bad ones are settled as failed (dead
     * letters), the 180 others succeed and are delivered, and the run ends {@code Completed}
     * naming the failures, without throwing. Under the seed's rule the same run stops at the first
     * (WP-6).
     */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void aRunThatContinuesHandlesEveryItemPastItsFailures(ThreadKind kind) {
        RecordingSettler settler = new RecordingSettler();
        WorkerPool<Integer, String> pool = WorkerPool.<Integer, String>builder(item -> {
            failEveryTenth(item);
            return Workloads.result(item);
        }).intake(intake).workers(4).queueSize(2).onFailure(WorkerPool.OnFailure.CONTINUE).settler(settler).build();
        Call<RunOutcome<Integer>> owner = spawn.use(kind).call("owner", () -> {
            try (Results<Integer, String> results = pool.run(Workloads.CountingSource.of(200))) {
                assertThat(Workloads.drain(results)).hasSize(180); // no PoolFailure at the end
                Workloads.assertEveryResultDelivered(results);
                assertThat(results.stats().failed()).isEqualTo(20);
                return assertLedgerExact(results);
            }
        });
        RunOutcome<Integer> outcome = Objects.requireNonNull(owner.value());
        List<Integer> bad = IntStream.range(0, 200).filter(i -> i % 10 == 9).boxed().toList();
        assertThat(outcome).isInstanceOf(RunOutcome.Completed.class);
        assertThat(outcome.failures()).extracting(ItemFailure::item).containsExactlyInAnyOrderElementsOf(bad);
        assertThat(deadLetters(settler)).as("each bad item dead-lettered once").containsExactlyInAnyOrderElementsOf(bad);
        assertThat(succeededSettlements(settler)).isEqualTo(180);
        assertNoThreadsLeft(pool);
    }

    /**
     * WP-23: a run of any length keeps a bounded list: with {@code failuresKept(5)} and 50 items
     * that all fail on one worker, the outcome keeps the first five, in order, while the books
     * count all 50 and the store hears all 50.
     */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void onlyTheFirstFailuresAreKeptAndEveryOneIsCounted(ThreadKind kind) {
        RecordingSettler settler = new RecordingSettler();
        WorkerPool<Integer, String> pool = WorkerPool.<Integer, String>builder(item -> {
            throw new IllegalArgumentException("item " + item + " is malformed");
        }).intake(intake).workers(1).onFailure(WorkerPool.OnFailure.CONTINUE).failuresKept(5).settler(settler).build();
        Call<RunOutcome<Integer>> owner = spawn.use(kind).call("owner", () -> {
            try (Results<Integer, String> results = pool.run(Workloads.CountingSource.of(50))) {
                assertThat(Workloads.drain(results)).isEmpty();
                assertThat(results.stats().failed()).isEqualTo(50);
                return assertLedgerExact(results, 5);
            }
        });
        RunOutcome<Integer> outcome = Objects.requireNonNull(owner.value());
        assertThat(outcome.failures()).extracting(ItemFailure::item).containsExactly(0, 1, 2, 3, 4);
        assertThat(deadLetters(settler)).hasSize(50);
        assertNoThreadsLeft(pool);
    }

    /**
     * WP-25: a side effect that returns is a success (no null trap): a {@code forEach} pool
     * drained over 100 items does the work 100 times, settles 100 successes, delivers nothing,
     * and {@code drain()} returns {@code Completed}.
     */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void aSideEffectThatReturnsIsASuccess(ThreadKind kind) {
        AtomicInteger done = new AtomicInteger();
        RecordingSettler settler = new RecordingSettler();
        WorkerPool<Integer, Void> pool = WorkerPool.<Integer>forEach(item -> done.incrementAndGet())
                .intake(intake).workers(4).settler(settler).build();
        Call<RunOutcome<Integer>> owner = spawn.use(kind).call("owner", () -> pool.drain(Workloads.CountingSource.of(100)));
        assertThat(owner.value()).isEqualTo(new RunOutcome.Completed<Integer>(false));
        assertThat(done).hasValue(100);
        assertThat(succeededSettlements(settler)).isEqualTo(100);
        assertThat(deadLetters(settler)).isEmpty();
        assertNoThreadsLeft(pool);
    }

    /**
     * WP-25: a side-effect run makes progress while nobody reads its results. The owner runs 64
     * items through one worker and an outbox of one, and only waits (it never calls
     * {@code hasNext()}): every item is handled and the run ends by itself; closing it then ends
     * it {@code Completed}, with nothing abandoned. (A {@code builder} pool would stall here with
     * its outbox full, and close would abandon the rest.)
     */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void aRunNobodyReadsMakesProgress(ThreadKind kind) {
        AtomicInteger done = new AtomicInteger();
        WorkerPool<Integer, Void> pool = WorkerPool.<Integer>forEach(item -> done.incrementAndGet())
                .intake(intake).workers(1).queueSize(1).build();
        Call<RunOutcome<Integer>> owner = spawn.use(kind).call("owner", () -> {
            try (Results<Integer, Void> results = pool.run(Workloads.CountingSource.of(64))) {
                Waits.until("the run ends while nobody reads", () -> results.outcome().isPresent());
                assertThat(results.stats().succeeded()).isEqualTo(64);
                assertThat(results.stats().delivered()).isZero();
                return assertLedgerExact(results);
            }
        });
        assertThat(owner.value()).isEqualTo(new RunOutcome.Completed<Integer>(false));
        assertThat(done).hasValue(64);
        assertNoThreadsLeft(pool);
    }

    /**
     * WP-23, WP-25: {@code forEach} goes on past its failures by default, and {@code builder}
     * keeps the seed's rule; each says so in its settings.
     */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void forEachContinuesAndBuilderStopsByDefault(ThreadKind kind) {
        WorkerPool<Integer, Void> service = WorkerPool.<Integer>forEach(ServiceRunTest::failEveryTenth).intake(intake).build();
        assertThat(service.settings()).endsWith(", onFailure=CONTINUE, failuresKept=100, results=none");
        Call<RunOutcome<Integer>> owner = spawn.use(kind).call("owner", () -> service.drain(Workloads.CountingSource.of(30)));
        assertThat(Objects.requireNonNull(owner.value()).failures()).extracting(ItemFailure::item)
                .containsExactlyInAnyOrder(9, 19, 29);
        WorkerPool<Integer, String> batch = WorkerPool.<Integer, String>builder(Workloads.echo()).intake(intake).build();
        assertThat(batch.settings()).doesNotContain("onFailure");
        assertNoThreadsLeft(service);
    }

    /**
     * WP-25: {@code drain()} returns every ending as a value: a run under the seed's rule ends
     * {@code Failed} (its iteration would throw {@link PoolFailure}), and the results it read and
     * dropped count as delivered.
     */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void drainReturnsAFailureAsAValue(ThreadKind kind) {
        WorkerPool<Integer, String> pool = WorkerPool.<Integer, String>builder(item -> {
            if (item == 3) {
                throw new IllegalArgumentException("item 3 is malformed");
            }
            return Workloads.result(item);
        }).intake(intake).workers(1).queueSize(1).build();
        Call<RunOutcome<Integer>> owner = spawn.use(kind).call("owner", () -> pool.drain(Workloads.CountingSource.endless()));
        RunOutcome<Integer> outcome = Objects.requireNonNull(owner.value());
        assertThat(outcome).isInstanceOf(RunOutcome.Failed.class);
        assertThat(outcome.failures()).extracting(ItemFailure::item).containsExactly(3);
        assertNoThreadsLeft(pool);
    }

    /**
     * WP-3: each attempt's deadline reaches its handler, for a driver's own timeout: on every
     * attempt the time left is positive and at most {@code itemTimeout}, and a retry gets a fresh
     * deadline, later than the first's.
     */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void eachAttemptsDeadlineReachesItsHandler(ThreadKind kind) {
        java.time.Duration timeout = java.time.Duration.ofSeconds(30);
        java.util.Map<Integer, java.time.Instant> deadlines = new java.util.concurrent.ConcurrentHashMap<>();
        WorkerPool<Integer, Void> pool = WorkerPool.<Integer>forEach(item -> {
            ItemContext<?> context = ItemContext.current();
            assertThat(context.remaining()).isPositive().isLessThanOrEqualTo(timeout);
            deadlines.put(context.attempt(), context.deadline());
            if (context.attempt() == 1) {
                Thread.sleep(2); // the retry's deadline is later by at least this much
                throw new java.io.IOException("a flaky backend, once");
            }
        }).intake(intake).workers(1).itemTimeout(timeout).retryable(java.io.IOException.class).maxRetries(1).build();
        Call<RunOutcome<Integer>> owner = spawn.use(kind).call("owner", () -> pool.drain(Workloads.CountingSource.of(1)));
        assertThat(owner.value()).isEqualTo(new RunOutcome.Completed<Integer>(false));
        assertThat(deadlines).containsOnlyKeys(1, 2);
        assertThat(deadlines.get(2)).isAfter(deadlines.get(1));
        assertNoThreadsLeft(pool);
    }

    /** WP-3: with a timeout too long to count, the time left still converts to a driver's timeout. */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void theTimeLeftConvertsToADriversTimeoutWhateverTheTimeout(ThreadKind kind) {
        AtomicInteger converted = new AtomicInteger();
        WorkerPool<Integer, Void> pool = WorkerPool.<Integer>forEach(item -> {
            java.time.Duration left = ItemContext.current().remaining();
            long _ = left.toNanos() + java.time.Instant.now().plus(left).getEpochSecond();
            converted.incrementAndGet();
        }).intake(intake).itemTimeout(java.time.temporal.ChronoUnit.FOREVER.getDuration()).build();
        Call<RunOutcome<Integer>> owner = spawn.use(kind).call("owner", () -> pool.drain(Workloads.CountingSource.of(2)));
        assertThat(owner.value()).isEqualTo(new RunOutcome.Completed<Integer>(false));
        assertThat(converted).hasValue(2);
        assertNoThreadsLeft(pool);
    }

    /**
     * WP-23, WP-12: an abort of a run that went on past 50 failures, keeping none, says in its
     * {@link PoolAborted} how many items failed, not how many it kept.
     */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void anAbortSaysHowManyItemsFailedNotHowManyWereKept(ThreadKind kind) {
        WorkerPool<Integer, Void> pool = WorkerPool.<Integer>forEach(item -> {
            if (item < 50) {
                throw new IllegalArgumentException("item " + item + " is malformed");
            }
            new CountDownLatch(1).await(); // until the abort
        }).intake(intake).workers(2).failuresKept(0).build();
        Call<String> owner = spawn.use(kind).call("owner", () -> {
            try (Results<Integer, Void> results = pool.run(Workloads.CountingSource.endless())) {
                Waits.until("50 items failed", () -> results.stats().failed() == 50);
                pool.abort();
                try {
                    Workloads.drain(results);
                    return "no PoolAborted";
                } catch (PoolAborted aborted) {
                    return aborted.getMessage();
                }
            }
        });
        assertThat(owner.value()).contains("50 items failed (the first 0 kept)");
        assertNoThreadsLeft(pool);
    }

    /**
     * WP-25, WP-14: an owner interrupted while {@code drain()} waits abandons the run; every
     * thread of the run ends, and {@code drain()} returns {@code Abandoned} with the interrupt
     * status set.
     */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void anInterruptedDrainReturnsAbandonedWithTheInterruptKept(ThreadKind kind) {
        Workloads.Gate gate = new Workloads.Gate();
        WorkerPool<Integer, Void> pool = WorkerPool.<Integer>forEach(item -> gate.pass()).intake(intake).workers(2).build();
        Call<RunOutcome<Integer>> owner = spawn.use(kind).call("owner", () -> pool.drain(Workloads.CountingSource.endless()));
        try {
            gate.awaitArrivals(2);
        } catch (InterruptedException e) {
            throw new AssertionError(e);
        }
        owner.thread().interrupt();
        RunOutcome<Integer> outcome = Objects.requireNonNull(owner.value());
        assertThat(outcome).isInstanceOf(RunOutcome.Abandoned.class);
        assertThat(((RunOutcome.Abandoned<Integer>) outcome).interrupted()).isTrue();
        assertThat(owner.interruptStatusAtEnd()).isTrue();
        assertThat(outcome.cancelled()).hasSize(2);
        assertNoThreadsLeft(pool);
    }
}
