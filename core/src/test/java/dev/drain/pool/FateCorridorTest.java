package dev.drain.pool;

import static dev.drain.pool.Workloads.assertNoThreadsLeft;
import static org.assertj.core.api.Assertions.assertThat;

import dev.drain.pool.SettlementTest.RecordingSettler;
import dev.drain.support.Bounds;
import dev.drain.support.Call;
import dev.drain.support.Spawner;
import dev.drain.support.ThreadKind;
import dev.drain.support.Waits;
import java.time.Duration;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * WP-6, WP-22: an item's fate takes one corridor, which records it (the books, its settlement, its
 * event) and returns; only then does the worker wait for the store's room. So a store that does not
 * answer never holds back what a fate means to the run (a permanent failure stops the intake at
 * once), and the store hears the fates in the order the books recorded them. On both intakes, with
 * owners of both kinds.
 */
@ParameterizedClass
@EnumSource(WorkerPool.IntakeKind.class)
class FateCorridorTest {
    private final WorkerPool.IntakeKind intake;

    @RegisterExtension
    final Spawner spawn = new Spawner();

    FateCorridorTest(WorkerPool.IntakeKind intake) {
        this.intake = intake;
    }

    /** The phase a pool's {@code toString} ends with, for example {@code "STOPPING]"}. */
    private static boolean inPhase(WorkerPool<?, ?> pool, Lifecycle.Phase phase) {
        return pool.toString().endsWith(", " + phase + "]");
    }

    /**
     * WP-6, WP-22: a permanent failure stops the intake at once, even while the store answers
     * nothing and the backlog is full: the failing worker records the fate first and waits for room
     * after. One worker, batches of one (a backlog of 4): items 0–3 succeed and fill it, item 4
     * throws, and the run is STOPPING while the store still holds its first batch.
     */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void aFailureStopsTheIntakeBeforeTheStoreHasRoom(ThreadKind kind) {
        CountDownLatch answer = new CountDownLatch(1);
        AtomicBoolean answered = new AtomicBoolean();
        // Held until the test opens it, and longer than any of the test's waits: the intake must
        // stop while the store has answered nothing.
        Settler<Integer> settler = batch -> {
            if (!answer.await(2 * Bounds.WAIT.toNanos(), TimeUnit.NANOSECONDS)) {
                throw new IllegalStateException("the test never opened the store");
            }
            answered.set(true);
        };
        CountDownLatch failed = new CountDownLatch(1);
        WorkerPool<Integer, String> pool = WorkerPool.<Integer, String>builder(item -> {
            if (item == 4) {
                failed.countDown();
                throw new IllegalArgumentException("item 4 is malformed");
            }
            return Workloads.result(item);
        }).intake(intake).workers(1).queueSize(1).settler(settler).settleBatch(1).build();
        Call<RunOutcome<Integer>> owner = spawn.use(kind).call("owner", () -> runToTheEnd(pool, Workloads.CountingSource.endless()));
        try {
            assertThat(awaitQuietly(failed)).as("item 4's handler threw").isTrue();
            Waits.until("the intake stops while the store holds its first batch", () -> inPhase(pool, Lifecycle.Phase.STOPPING));
            assertThat(answered).as("the store has answered").isFalse();
        } finally {
            answer.countDown();
        }
        RunOutcome<Integer> outcome = java.util.Objects.requireNonNull(owner.value());
        assertThat(outcome.failures()).extracting(ItemFailure::item).containsExactly(4);
        assertNoThreadsLeft(pool);
    }

    /**
     * WP-22: the store hears the failures in the order the books recorded them. Two workers,
     * batches of one, the store's first call held: items 0–3 succeed and fill the backlog; item 4
     * then fails, and only after that is item 5, which ignores every interrupt, reported stuck. The
     * outcome's failures are [4, 5], and so is the order of the store's dead letters.
     */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void theStoreHearsFailuresInTheOrderOfTheBooks(ThreadKind kind) {
        CountDownLatch answer = new CountDownLatch(1);
        RecordingSettler settler = RecordingSettler.answeringOnceOpen(answer);
        CountDownLatch bothStarted = new CountDownLatch(2);
        CountDownLatch fourFailed = new CountDownLatch(1);
        CountDownLatch releaseStuck = new CountDownLatch(1);
        AtomicInteger interrupts = new AtomicInteger();
        Duration timeout = Duration.ofMillis(100L * Bounds.FACTOR);
        Workloads.RecordingSink sink = new Workloads.RecordingSink(false);
        WorkerPool<Integer, String> pool = WorkerPool.<Integer, String>builder(item -> {
            if (item == 4 || item == 5) {
                bothStarted.countDown();
                awaitQuietly(bothStarted); // both workers are in items 4 and 5: items 0–3 are recorded
            }
            if (item == 4) {
                fourFailed.countDown();
                throw new IllegalArgumentException("item 4 is malformed");
            }
            if (item == 5) {
                awaitQuietly(fourFailed);
                ignoreInterruptsUntil(releaseStuck, interrupts);
            }
            return Workloads.result(item);
        }).intake(intake).workers(2).queueSize(1).itemTimeout(timeout).metrics(sink).settler(settler).settleBatch(1).build();
        Call<RunOutcome<Integer>> owner = spawn.use(kind).call("owner", () -> runToTheEnd(pool, Workloads.CountingSource.of(6)));
        try {
            // The watchdog records a stuck item's fate, then its events: once the sink has the
            // event, item 5's settlement has been offered.
            Waits.until("item 5 is reported stuck", () -> sink.count(MetricsEvent.ATTEMPT_STUCK) == 1);
            assertThat(interrupts.get()).as("interrupts item 5 ignored").isEqualTo(Watchdog.INTERRUPT_ROUNDS);
        } finally {
            answer.countDown();
            releaseStuck.countDown();
        }
        RunOutcome<Integer> outcome = java.util.Objects.requireNonNull(owner.value());
        assertThat(outcome.failures()).extracting(ItemFailure::item).containsExactly(4, 5);
        List<Integer> deadLetters = settler.offered().stream()
                .<Integer>mapMulti((s, out) -> {
                    if (s instanceof Settlement.Failed<Integer> f) {
                        out.accept(f.item());
                    }
                }).toList();
        assertThat(deadLetters).as("the store's dead letters, in the order it heard them").containsExactly(4, 5);
        assertNoThreadsLeft(pool);
    }

    /** Iterates the run to its end, which throws the run's {@link PoolFailure}; {@return the outcome} */
    private static RunOutcome<Integer> runToTheEnd(WorkerPool<Integer, String> pool, Iterator<Integer> source) {
        try (Results<Integer, String> results = pool.run(source)) {
            try {
                Workloads.drain(results);
            } catch (PoolFailure expected) {
                // the run's permanent failures: the outcome says which
            }
            return Workloads.assertLedgerExact(results);
        }
    }

    /**
     * WP-22: a store that answers on a thread of its own and fails ({@code runAsync} of a step
     * that throws, which completes its stage with a {@code CompletionException} around what was
     * thrown) is reported with what it threw: the run ends {@code Unsettled}, its cause the store's
     * own exception.
     */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void aStoreThatFailsOnItsOwnThreadIsReportedWithItsOwnException(ThreadKind kind) {
        IllegalStateException down = new IllegalStateException("the store is down");
        try (ExecutorService storeThreads = Executors.newVirtualThreadPerTaskExecutor()) {
            Settler<Integer> store = new Settler<>() {
                @Override
                public void settle(List<Settlement<Integer>> batch) {
                    throw new AssertionError("unreachable: submit is overridden");
                }

                @Override
                public CompletionStage<?> submit(List<Settlement<Integer>> batch) {
                    return CompletableFuture.runAsync(() -> {
                        throw down;
                    }, storeThreads);
                }
            };
            WorkerPool<Integer, String> pool = WorkerPool.<Integer, String>builder(Workloads.echo()).intake(intake).settler(store)
                    .build();
            Call<RunOutcome<Integer>> owner = spawn.use(kind).call("owner", () -> pool.drain(Workloads.CountingSource.of(3)));
            assertThat(owner.value()).isInstanceOfSatisfying(RunOutcome.Unsettled.class,
                    unsettled -> assertThat(unsettled.cause()).isSameAs(down));
            assertNoThreadsLeft(pool);
        }
    }

    /** Waits for {@code latch} (bounded), ignoring interrupts; {@return whether it opened} */
    private static boolean awaitQuietly(CountDownLatch latch) {
        long deadline = System.nanoTime() + Bounds.WAIT.toNanos();
        while (true) {
            try {
                return latch.await(deadline - System.nanoTime(), TimeUnit.NANOSECONDS);
            } catch (InterruptedException e) {
                // a stubborn handler: the test decides when it ends
            }
        }
    }

    /** Ignores every interrupt (counting them) until {@code release} opens: an attempt that outlives every round. */
    private static void ignoreInterruptsUntil(CountDownLatch release, AtomicInteger interrupts) {
        long deadline = System.nanoTime() + Bounds.WAIT.toNanos();
        while (release.getCount() > 0 && System.nanoTime() - deadline < 0) {
            try {
                boolean _ = release.await(deadline - System.nanoTime(), TimeUnit.NANOSECONDS);
            } catch (InterruptedException e) {
                interrupts.incrementAndGet();
            }
        }
    }
}
