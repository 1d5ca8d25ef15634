package dev.drain.pool;

import static dev.drain.pool.Workloads.assertLedgerExact;
import static dev.drain.pool.Workloads.assertNoThreadsLeft;
import static dev.drain.pool.Workloads.drain;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.drain.pool.Workloads.CountingSource;
import dev.drain.pool.Workloads.Gate;
import dev.drain.pool.Workloads.RecordingSink;
import dev.drain.support.Bounds;
import dev.drain.support.Call;
import dev.drain.support.Spawner;
import dev.drain.support.ThreadKind;
import dev.drain.support.Waits;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * WP-22: every item a run pulls is settled exactly once, with the fate its books recorded, on a
 * thread of the run's own; a graceful stop ends only once every settlement is answered, an abort
 * never waits for the store, a slow store slows the pool, and a failing store is never ignored.
 * On both intakes; where another thread matters, on platform and virtual threads.
 */
@ParameterizedClass
@EnumSource(WorkerPool.IntakeKind.class)
class SettlementTest {
    private final WorkerPool.IntakeKind intake;

    @RegisterExtension
    final Spawner spawn = new Spawner();

    SettlementTest(WorkerPool.IntakeKind intake) {
        this.intake = intake;
    }

    /** A settler that keeps every batch it is given and the threads it ran on; {@code behaviour} may block or throw. */
    static final class RecordingSettler implements Settler<Integer> {
        /** What one call does after the batch is recorded; {@code call} counts from 1. */
        @FunctionalInterface
        interface Behaviour {
            void after(int call) throws Exception;
        }

        private final ConcurrentLinkedQueue<Settlement<Integer>> offered = new ConcurrentLinkedQueue<>();
        private final ConcurrentLinkedQueue<String> threads = new ConcurrentLinkedQueue<>();
        private final ConcurrentLinkedQueue<Integer> batchSizes = new ConcurrentLinkedQueue<>();
        private final AtomicInteger calls = new AtomicInteger();
        private final Behaviour behaviour;

        RecordingSettler(Behaviour behaviour) {
            this.behaviour = behaviour;
        }

        RecordingSettler() {
            this(call -> { });
        }

        /** A store that answers no call until {@code answer} opens (bounded: it gives up after {@link Bounds#WAIT}). */
        static RecordingSettler answeringOnceOpen(CountDownLatch answer) {
            return new RecordingSettler(call -> {
                boolean _ = answer.await(Bounds.WAIT.toNanos(), TimeUnit.NANOSECONDS);
            });
        }

        @Override
        public void settle(List<Settlement<Integer>> batch) throws Exception {
            offered.addAll(batch);
            batchSizes.add(batch.size());
            threads.add(Thread.currentThread().getName());
            behaviour.after(calls.incrementAndGet());
        }

        List<Settlement<Integer>> offered() {
            return List.copyOf(offered);
        }
    }

    private WorkerPool.Builder<Integer, String> builder(Handler<Integer, String> handler, Settler<Integer> settler) {
        return WorkerPool.<Integer, String>builder(handler).intake(intake).workers(3).queueSize(2).settleBatch(4)
                .settler(settler);
    }

    /**
     * WP-22: the settlements are the books: one per item pulled, each item once; the acknowledged
     * ones are the successes, the dead letters are the outcome's failures, the released ones its
     * discarded and cancelled items; together with the unsettled, they are what was offered.
     */
    private static RunOutcome<Integer> assertSettledAsTheBooks(Results<Integer, ?> results, RecordingSettler settler) {
        RunOutcome<Integer> outcome = assertLedgerExact(results);
        PoolStats stats = results.stats();
        List<Settlement<Integer>> every = new ArrayList<>(settler.offered());
        for (Settlement<Integer> s : outcome.unsettled()) {
            if (!every.contains(s)) {
                every.add(s); // unsettled without a call: after a fatal error of the settler
            }
        }
        assertThat(every).as("one settlement per item pulled").hasSize((int) stats.pulled());
        assertThat(every.stream().map(Settlement::item).distinct().count()).as("each item settled once")
                .isEqualTo(stats.pulled());
        assertThat(every.stream().filter(s -> s instanceof Settlement.Succeeded<Integer>).count())
                .as("acknowledged as succeeded").isEqualTo(stats.succeeded());
        assertThat(every.stream().<ItemFailure<Integer>>mapMulti((s, out) -> {
            if (s instanceof Settlement.Failed<Integer> f) {
                out.accept(f.failure());
            }
        }).toList()).as("dead letters").containsExactlyInAnyOrderElementsOf(outcome.failures());
        assertThat(WorkerPoolProperties.released(every, Settlement.Why.DISCARDED)).as("released as discarded")
                .containsExactlyInAnyOrderElementsOf(outcome.discarded());
        assertThat(WorkerPoolProperties.released(every, Settlement.Why.CANCELLED)).as("released as cancelled")
                .containsExactlyInAnyOrderElementsOf(outcome.cancelled());
        return outcome;
    }

    /** WP-22: a run that completes acknowledges every item once, in batches of at most settleBatch, on the run's settler thread. */
    @Test
    void aCompletedRunAcknowledgesEveryItemOnce() {
        RecordingSettler settler = new RecordingSettler();
        WorkerPool<Integer, String> pool = builder(Workloads.echo(), settler).name("settle-completed").build();
        try (Results<Integer, String> results = pool.run(CountingSource.of(100))) {
            assertThat(drain(results)).hasSize(100);
            assertThat(assertSettledAsTheBooks(results, settler)).isEqualTo(new RunOutcome.Completed<Integer>(false));
        }
        assertThat(settler.offered()).allMatch(s -> s instanceof Settlement.Succeeded<Integer>);
        assertThat(settler.batchSizes).allMatch(n -> n >= 1 && n <= 4);
        assertThat(settler.threads).allMatch(name -> name.startsWith("settle-completed-settler-"));
        assertNoThreadsLeft(pool);
    }

    /** WP-22, WP-6: a permanent failure is settled as a dead letter carrying its ItemFailure, and the others as they ended. */
    @Test
    void aPermanentFailureIsADeadLetter() {
        RecordingSettler settler = new RecordingSettler();
        WorkerPool<Integer, String> pool = builder(item -> {
            if (item == 5) {
                throw new IOException("item 5 can never be handled");
            }
            return Workloads.result(item);
        }, settler).build();
        try (Results<Integer, String> results = pool.run(CountingSource.of(20))) {
            assertThat(catchThrowable(() -> drain(results))).isInstanceOf(PoolFailure.class);
            RunOutcome<Integer> outcome = assertSettledAsTheBooks(results, settler);
            assertThat(outcome).isInstanceOf(RunOutcome.Failed.class);
            assertThat(settler.offered()).filteredOn(s -> s instanceof Settlement.Failed<Integer>)
                    .singleElement().extracting(Settlement::item).isEqualTo(5);
        }
        assertNoThreadsLeft(pool);
    }

    /** WP-22, WP-12: an abort releases what it discarded and cancelled, and acknowledges what succeeded before it. */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void anAbortReleasesWhatItLeftUndone(ThreadKind kind) throws InterruptedException {
        RecordingSettler settler = new RecordingSettler();
        Gate gate = new Gate();
        AtomicInteger handled = new AtomicInteger();
        WorkerPool<Integer, String> pool = builder(item -> {
            if (handled.incrementAndGet() > 6) {
                gate.pass(); // the seventh and later attempts wait for the abort
            }
            return Workloads.result(item);
        }, settler).build();
        Call<RunOutcome<Integer>> owner = spawn.use(kind).call("owner", () -> {
            try (Results<Integer, String> results = pool.run(CountingSource.endless())) {
                assertThat(catchThrowable(() -> drain(results))).isInstanceOf(PoolAborted.class);
                return assertSettledAsTheBooks(results, settler);
            }
        });
        gate.awaitArrivals(3);
        pool.abort();
        RunOutcome<Integer> outcome = Objects.requireNonNull(owner.value());
        assertThat(outcome).isInstanceOf(RunOutcome.Aborted.class);
        assertThat(outcome.cancelled()).hasSize(3);
        assertNoThreadsLeft(pool);
    }

    /** WP-22, WP-13: results closed early release the items the abandon dropped and cancelled. */
    @Test
    void anAbandonReleasesWhatItDropped() throws InterruptedException {
        RecordingSettler settler = new RecordingSettler();
        Gate gate = new Gate();
        WorkerPool<Integer, String> pool = builder(Workloads.behind(gate), settler).build();
        Results<Integer, String> results = pool.run(CountingSource.endless());
        try (results) {
            gate.awaitArrivals(3);
        }
        RunOutcome<Integer> outcome = assertSettledAsTheBooks(results, settler);
        assertThat(outcome).isInstanceOf(RunOutcome.Abandoned.class);
        assertThat(outcome.cancelled()).hasSize(3);
        assertThat(settler.offered()).isNotEmpty().allMatch(s -> s instanceof Settlement.Released<Integer>);
        assertNoThreadsLeft(pool);
    }

    /** WP-22, WP-7: a graceful stop ends only once the store has answered for everything that completed. */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void aStopEndsOnlyOnceEverySuccessIsAcknowledged(ThreadKind kind) {
        CountDownLatch answer = new CountDownLatch(1);
        RecordingSettler settler = RecordingSettler.answeringOnceOpen(answer);
        WorkerPool<Integer, String> pool = builder(Workloads.echo(), settler).build();
        int items = 10; // fewer than the backlog (4 × 4): no worker waits for the store
        AtomicReference<@Nullable Results<Integer, String>> running = new AtomicReference<>();
        Call<RunOutcome<Integer>> owner = spawn.use(kind).call("owner", () -> {
            try (Results<Integer, String> results = pool.run(untilStopped(items))) {
                running.set(results);
                drain(results);
                return assertSettledAsTheBooks(results, settler);
            }
        });
        try {
            Waits.until("every item was handled and the settler called", () -> {
                Results<Integer, String> results = running.get();
                return results != null && results.stats().succeeded() == items && settler.calls.get() > 0;
            });
            pool.requestStop();
            Results<Integer, String> results = Objects.requireNonNull(running.get());
            // the driver (waiting for the store), the watchdog (stopped after the end) and the settler
            Waits.until("the run's other threads have finished", () -> results.stats().liveThreads() == 3);
            Waits.untilParked(owner.thread());
            assertThat(results.outcome()).as("the outcome while the store has not answered").isEmpty();
        } finally {
            answer.countDown();
        }
        assertThat(owner.value()).isEqualTo(new RunOutcome.Completed<Integer>(true));
        assertThat(settler.offered()).hasSize(items).allMatch(s -> s instanceof Settlement.Succeeded<Integer>);
        assertNoThreadsLeft(pool);
    }

    /** The items 0 … {@code items − 1}, then a wait inside {@code hasNext()} that only a stop's interrupt ends. */
    private static Iterator<Integer> untilStopped(int items) {
        return new Iterator<>() {
            private int next;

            @Override
            public boolean hasNext() {
                if (next < items) {
                    return true;
                }
                try {
                    boolean _ = new CountDownLatch(1).await(Bounds.WAIT.toNanos(), TimeUnit.NANOSECONDS);
                    throw new AssertionError("the stop never interrupted the source");
                } catch (InterruptedException e) {
                    throw Workloads.<RuntimeException>sneaky(e); // the stop's interrupt (WP-7)
                }
            }

            @Override
            public Integer next() {
                return next++;
            }
        };
    }

    /** WP-22, WP-12: abort() returns at once while the store has not answered, and the run ends once it has. */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void anAbortDoesNotWaitForTheStore(ThreadKind kind) {
        CountDownLatch answer = new CountDownLatch(1);
        java.util.concurrent.atomic.AtomicBoolean inCall = new java.util.concurrent.atomic.AtomicBoolean();
        RecordingSettler settler = new RecordingSettler(call -> {
            inCall.set(true);
            boolean _ = answer.await(Bounds.WAIT.toNanos(), TimeUnit.NANOSECONDS); // gives up after WAIT
            inCall.set(false);
        });
        WorkerPool<Integer, String> pool = builder(Workloads.echo(), settler).build();
        Call<RunOutcome<Integer>> owner = spawn.use(kind).call("owner", () -> {
            try (Results<Integer, String> results = pool.run(CountingSource.endless())) {
                assertThat(catchThrowable(() -> drain(results))).isInstanceOf(PoolAborted.class);
                return assertSettledAsTheBooks(results, settler);
            }
        });
        try {
            Waits.until("the settler is inside its first call", inCall::get);
            Call<Void> aborting = spawn.use(kind).run("abort", pool::abort);
            aborting.value();
            assertThat(inCall).as("the store's call, still unanswered when abort() returned").isTrue();
        } finally {
            answer.countDown();
        }
        assertThat(owner.value()).isInstanceOf(RunOutcome.Aborted.class);
        assertNoThreadsLeft(pool);
    }

    /**
     * What a store that does not answer lets the producer pull: the backlog (4 batches of 2), one
     * item per worker, the queue, and the producer's own.
     */
    private static final int HELD = 2 * Settling.BACKLOG_BATCHES + 3 + 2 + 1;

    /** An endless source that counts its pulls and remembers the thread that pulls: the producer. */
    private static final class WatchedSource {
        final AtomicReference<@Nullable Thread> producer = new AtomicReference<>();
        final AtomicInteger pulled = new AtomicInteger();
        final Iterator<Integer> items = Workloads.endlessCalling(item -> {
            producer.set(Thread.currentThread());
            pulled.incrementAndGet();
        });

        /** {@return whether the producer waits, with at least {@link #HELD} items pulled} */
        boolean producerWaits() {
            return producerWaitsWith(HELD);
        }

        /** {@return whether the producer waits, with at least {@code items} pulled} */
        boolean producerWaitsWith(int items) {
            Thread thread = producer.get();
            return pulled.get() >= items && thread != null && thread.getState() == Thread.State.WAITING;
        }
    }

    /**
     * A run of a pool of three workers and settlement batches of 2 over a {@link WatchedSource},
     * whose store answers no call until {@link #answer} opens; its owner, a thread of {@code kind},
     * iterates the results with {@code iterate}, then checks that the store heard the books.
     */
    private final class BlockedStoreRun {
        final CountDownLatch answer = new CountDownLatch(1);
        final RecordingSettler settler = RecordingSettler.answeringOnceOpen(answer);
        final WorkerPool<Integer, String> pool = builder(Workloads.echo(), settler).settleBatch(2).build();
        final WatchedSource source = new WatchedSource();
        final Call<RunOutcome<Integer>> owner;

        BlockedStoreRun(ThreadKind kind, Consumer<Results<Integer, String>> iterate) {
            owner = spawn.use(kind).call("owner", () -> {
                try (Results<Integer, String> results = pool.run(source.items)) {
                    iterate.accept(results);
                    return assertSettledAsTheBooks(results, settler);
                }
            });
        }
    }

    /**
     * WP-22, WP-1: a store that does not answer holds the pool: the workers wait while 4 ×
     * settleBatch settlements are outstanding, so the source is exactly that backlog, the
     * workers' items, the queue and the producer's item ahead.
     */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void aBlockedStoreHoldsThePoolToTheBacklog(ThreadKind kind) {
        BlockedStoreRun run = new BlockedStoreRun(kind, Workloads::drain);
        try {
            Waits.until("the producer waits with " + HELD + " items pulled", run.source::producerWaits);
            assertThat(run.source.pulled.get()).as("items pulled with the store blocked").isEqualTo(HELD);
        } finally {
            run.answer.countDown();
            run.pool.requestStop();
        }
        assertThat(run.owner.value()).isEqualTo(new RunOutcome.Completed<Integer>(true));
        assertNoThreadsLeft(run.pool);
    }

    /**
     * WP-22, WP-23: a store that does not answer holds a pool that goes on past its failures too:
     * a worker records a permanent failure, then waits for the store's room, so the source is
     * never further ahead than the backlog (4 batches of 2), one more failure per worker but the
     * one that filled it (each recorded its failure before it looked for room), the queue and the
     * producer's own item. Looked at once the run is still: the producer waits, and every item
     * pulled but the queue's and the producer's is decided, twice in a row with the same count.
     */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void aBlockedStoreHoldsAPoolWhoseItemsAllFail(ThreadKind kind) {
        CountDownLatch answer = new CountDownLatch(1);
        RecordingSettler settler = RecordingSettler.answeringOnceOpen(answer);
        WorkerPool<Integer, String> pool = builder(item -> {
            throw new IllegalArgumentException("item " + item + " is malformed");
        }, settler).settleBatch(2).onFailure(WorkerPool.OnFailure.CONTINUE).build();
        WatchedSource source = new WatchedSource();
        int bound = 2 * Settling.BACKLOG_BATCHES + (3 - 1) + 2 + 1;
        AtomicReference<@Nullable Results<Integer, String>> running = new AtomicReference<>();
        Call<RunOutcome<Integer>> owner = spawn.use(kind).call("owner", () -> {
            try (Results<Integer, String> results = pool.run(source.items)) {
                running.set(results);
                drain(results);
                return assertSettledAsTheBooks(results, settler);
            }
        });
        try {
            long[] lastStill = {-1};
            Waits.until("the run is still, with the store blocked", () -> {
                Results<Integer, String> results = running.get();
                long pulled = source.pulled.get();
                boolean still = results != null && source.producerWaitsWith(1) && results.stats().failed() == pulled - 3;
                boolean twice = still && lastStill[0] == pulled;
                lastStill[0] = still ? pulled : -1;
                return twice;
            });
            assertThat(source.pulled.get()).as("items pulled with the store blocked").isLessThanOrEqualTo(bound);
        } finally {
            pool.requestStop(); // first: the run ends with the few items it holds, fewer failures than the outcome keeps (failuresKept)
            answer.countDown();
        }
        assertThat(owner.value()).isInstanceOfSatisfying(RunOutcome.Completed.class, c -> assertThat(c.stopRequested()).isTrue());
        assertNoThreadsLeft(pool);
    }

    /**
     * WP-22: a store that fails one batch stops the intake; the run ends as Unsettled naming
     * exactly that batch, the later batches are still acknowledged, the iteration throws
     * PoolUnsettled with the store's exception, and the sink hears of it once.
     */
    @Test
    void aFailedBatchIsNamedAndStopsTheIntake() {
        IOException down = new IOException("the store is down");
        List<Settlement<Integer>> firstBatch = new ArrayList<>();
        AtomicReference<@Nullable RecordingSettler> self = new AtomicReference<>();
        RecordingSettler settler = new RecordingSettler(call -> {
            if (call == 1) {
                firstBatch.addAll(Objects.requireNonNull(self.get()).offered());
                throw down;
            }
        });
        self.set(settler);
        RecordingSink sink = new RecordingSink(false);
        WorkerPool<Integer, String> pool = builder(Workloads.echo(), settler).metrics(sink).build();
        try (Results<Integer, String> results = pool.run(CountingSource.endless())) {
            Throwable thrown = catchThrowable(() -> drain(results));
            assertThat(thrown).isInstanceOf(PoolUnsettled.class).hasCause(down);
            RunOutcome<Integer> outcome = assertSettledAsTheBooks(results, settler);
            RunOutcome.Unsettled<Integer> unsettled = (RunOutcome.Unsettled<Integer>) outcome;
            assertThat(unsettled.ended()).isEqualTo(new RunOutcome.Completed<Integer>(false));
            assertThat(unsettled.unsettled()).isNotEmpty().isEqualTo(firstBatch);
            assertThat(unsettled.cause()).isSameAs(down);
            assertThat(((PoolUnsettled) thrown).unsettled()).isEqualTo(firstBatch);
        }
        assertThat(sink.named(MetricsEvent.SETTLEMENT_FAILED)).as("the sink hears of it once, with the batch's size and the cause")
                .singleElement().asString().contains("batch=" + firstBatch.size()).contains("the store is down");
        assertNoThreadsLeft(pool);
    }

    /**
     * WP-22, WP-6: a store that fails in a run that failed too: the iteration throws
     * PoolUnsettled, with the run's own PoolFailure suppressed in it, and the Unsettled outcome
     * answers for the failures of the run it wraps.
     */
    @Test
    void aFailedStoreInAFailedRunKeepsTheRunsOwnException() {
        IOException down = new IOException("the store is down");
        RecordingSettler settler = new RecordingSettler(call -> {
            if (call == 1) {
                throw down;
            }
        });
        WorkerPool<Integer, String> pool = builder(item -> {
            if (item == 0) {
                throw new IllegalStateException("item 0 can never be handled");
            }
            return Workloads.result(item);
        }, settler).build();
        try (Results<Integer, String> results = pool.run(CountingSource.of(10))) {
            Throwable thrown = catchThrowable(() -> drain(results));
            RunOutcome<Integer> outcome = assertSettledAsTheBooks(results, settler);
            RunOutcome.Unsettled<Integer> unsettled = (RunOutcome.Unsettled<Integer>) outcome;
            assertThat(unsettled.ended()).isInstanceOf(RunOutcome.Failed.class);
            assertThat(unsettled.failures()).as("the failures of the run it wraps").isEqualTo(unsettled.ended().failures())
                    .extracting(ItemFailure::item).containsExactly(0);
            assertThat(thrown).isInstanceOf(PoolUnsettled.class).hasCause(down);
            assertThat(thrown.getSuppressed()).as("the run's own exception, suppressed in PoolUnsettled").singleElement()
                    .isInstanceOfSatisfying(PoolFailure.class, f -> assertThat(f.failures()).isEqualTo(unsettled.failures()));
        }
        assertNoThreadsLeft(pool);
    }

    /**
     * WP-22: no batch is larger than settleBatch, however many settlements queue up while the
     * store does not answer.
     */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void noBatchIsLargerThanSettleBatch(ThreadKind kind) {
        BlockedStoreRun run = new BlockedStoreRun(kind, Workloads::drain);
        try {
            Waits.until("the producer waits with " + HELD + " items pulled", run.source::producerWaits);
        } finally {
            run.answer.countDown();
            run.pool.requestStop();
        }
        assertThat(run.owner.value()).isEqualTo(new RunOutcome.Completed<Integer>(true));
        assertThat(List.copyOf(run.settler.batchSizes)).as("the sizes of the batches").isNotEmpty()
                .allSatisfy(size -> assertThat(size).isBetween(1, 2)).contains(2);
        assertNoThreadsLeft(run.pool);
    }

    /**
     * WP-22, WP-12: an abort frees at once the workers that wait for the store's room: while the
     * store has still not answered, the producer and every worker end, and only the driver (which
     * waits for the store, as a run ends only once every settlement is answered), the settler
     * thread and the watchdog are left.
     */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void anAbortFreesTheWorkersWaitingForTheStore(ThreadKind kind) {
        BlockedStoreRun run = new BlockedStoreRun(kind,
                results -> assertThat(catchThrowable(() -> drain(results))).isInstanceOf(PoolAborted.class));
        try {
            // a thread is counted from its first step to its last: the settler thread from before the
            // store's first call, and the last attempt until it has ended, after its worker went on
            Waits.until("the producer waits with " + HELD + " items pulled, and the pool's threads are the driver,"
                    + " the watchdog, the settler thread, the producer and three workers",
                    () -> run.source.producerWaits() && run.settler.calls.get() == 1 && run.pool.liveThreads() == 7);
            run.pool.abort();
            Waits.until("only the driver, the watchdog and the settler thread are left while the store has not answered",
                    () -> run.pool.liveThreads() == 3);
            assertThat(run.answer.getCount()).as("the store, still unanswered").isOne();
        } finally {
            run.answer.countDown();
        }
        assertThat(run.owner.value()).isInstanceOf(RunOutcome.Aborted.class);
        assertNoThreadsLeft(run.pool);
    }

    /**
     * WP-22, WP-18: a VirtualMachineError from the store crashes the run; every settlement is
     * then unsettled, the settler is not called again, and the iteration throws the error itself.
     */
    @Test
    void aFatalErrorOfTheStoreCrashesTheRunAndSettlesNothing() {
        InternalError fatal = new InternalError("the store's own");
        RecordingSettler settler = new RecordingSettler(call -> {
            throw fatal;
        });
        WorkerPool<Integer, String> pool = builder(Workloads.echo(), settler).build();
        try (Results<Integer, String> results = pool.run(CountingSource.endless())) {
            assertThat(catchThrowable(() -> drain(results))).isSameAs(fatal);
            RunOutcome<Integer> outcome = assertSettledAsTheBooks(results, settler);
            RunOutcome.Unsettled<Integer> unsettled = (RunOutcome.Unsettled<Integer>) outcome;
            assertThat(unsettled.ended()).isInstanceOf(RunOutcome.Crashed.class);
            assertThat(((RunOutcome.Crashed<Integer>) unsettled.ended()).cause()).isSameAs(fatal);
            assertThat(unsettled.unsettled()).hasSize((int) results.stats().pulled());
        }
        assertThat(settler.calls).hasValue(1);
        assertNoThreadsLeft(pool);
    }

    /**
     * WP-22, WP-18, WP-8: a fatal error of the store on the batch with the last item (often
     * while the driver already waits for it) still crashes the run, and the sink hears of it
     * before the run is drained.
     */
    @Test
    void aFatalErrorOnTheLastBatchStillCrashesTheRun() {
        InternalError fatal = new InternalError("the store's own, on the last batch");
        List<Integer> seen = new java.util.concurrent.CopyOnWriteArrayList<>();
        RecordingSettler settler = new RecordingSettler(call -> { });
        Settler<Integer> lastFails = batch -> {
            settler.settle(batch);
            batch.forEach(s -> seen.add(s.item()));
            if (seen.contains(9)) {
                throw fatal;
            }
        };
        RecordingSink sink = new RecordingSink(false);
        WorkerPool<Integer, String> pool = builder(Workloads.echo(), lastFails).metrics(sink).build();
        try (Results<Integer, String> results = pool.run(CountingSource.of(10))) {
            assertThat(catchThrowable(() -> drain(results))).isSameAs(fatal);
            RunOutcome.Unsettled<Integer> outcome = (RunOutcome.Unsettled<Integer>) assertSettledAsTheBooks(results, settler);
            assertThat(outcome.ended()).isInstanceOf(RunOutcome.Crashed.class);
        }
        assertThat(sink.startingWith("settlement.failed", "pool.drained")).hasSize(2)
                .first().asString().startsWith("settlement.failed");
        assertNoThreadsLeft(pool);
    }

    /** WP-22: a store that fails every call leaves everything unsettled, and the run still ends, not as a success. */
    @Test
    void aStoreThatAlwaysFailsLeavesEverythingUnsettled() {
        RecordingSettler settler = new RecordingSettler(call -> {
            throw new AssertionError("call " + call + " failed");
        });
        WorkerPool<Integer, String> pool = builder(Workloads.echo(), settler).build();
        try (Results<Integer, String> results = pool.run(CountingSource.endless())) {
            assertThat(catchThrowable(() -> drain(results))).isInstanceOf(PoolUnsettled.class);
            RunOutcome<Integer> outcome = assertSettledAsTheBooks(results, settler);
            assertThat(outcome.unsettled()).containsExactlyInAnyOrderElementsOf(settler.offered());
            assertThat(((RunOutcome.Unsettled<Integer>) outcome).cause().getSuppressed())
                    .hasSize(settler.calls.get() - 1);
        }
        assertNoThreadsLeft(pool);
    }

    /** WP-22, WP-12: a settler that calls abort() on its own thread aborts the run, and every fate is still settled once. */
    @Test
    void aSettlerMayAbortTheRunFromItsOwnThread() {
        AtomicReference<@Nullable WorkerPool<Integer, String>> self = new AtomicReference<>();
        RecordingSettler settler = new RecordingSettler(call -> Objects.requireNonNull(self.get()).abort());
        WorkerPool<Integer, String> pool = builder(Workloads.echo(), settler).build();
        self.set(pool);
        try (Results<Integer, String> results = pool.run(CountingSource.endless())) {
            assertThat(catchThrowable(() -> drain(results))).isInstanceOf(PoolAborted.class);
            assertThat(assertSettledAsTheBooks(results, settler)).isInstanceOf(RunOutcome.Aborted.class);
            assertThat(results.outcome().orElseThrow().unsettled()).isEmpty();
        }
        assertNoThreadsLeft(pool);
    }

    /** WP-22, WP-16: settleBatch is refused out of its range, and without a settler, naming both settings. */
    @Test
    void settleBatchIsChecked() {
        assertThatThrownBy(() -> WorkerPool.<Integer, String>builder(Workloads.echo()).settleBatch(8).build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("settleBatch is 8")
                .hasMessageContaining("settler(");
        assertThatThrownBy(() -> builder(Workloads.echo(), new RecordingSettler()).settleBatch(0).build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("settleBatch must be between 1");
        assertThatThrownBy(() -> builder(Workloads.echo(), new RecordingSettler())
                .settleBatch(WorkerPool.Builder.MAX_SETTLE_BATCH + 1).build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("settleBatch must be between 1");
    }

    /** WP-22, WP-16: settleBatch's bounds themselves, 1 and MAX_SETTLE_BATCH, are accepted. */
    @Test
    void settleBatchAcceptsItsBounds() {
        assertThat(builder(Workloads.echo(), new RecordingSettler()).settleBatch(1).build().settings()).contains("settler=yes");
        assertThat(builder(Workloads.echo(), new RecordingSettler()).settleBatch(WorkerPool.Builder.MAX_SETTLE_BATCH).build()
                .settings()).contains("settler=yes");
    }

    /** WP-22, WP-11: an Unsettled outcome answers for the items of the run it wraps: its failures, discarded and cancelled. */
    @Test
    void anUnsettledOutcomeAnswersForTheRunItWraps() {
        ItemFailure<Integer> failure = new ItemFailure<>(3, 1, new IOException("item 3"));
        RunOutcome<Integer> aborted = new RunOutcome.Aborted<>(List.of(1), List.of(2), List.of(failure));
        RunOutcome.Unsettled<Integer> unsettled = new RunOutcome.Unsettled<>(aborted,
                List.of(new Settlement.Succeeded<>(4)), new IOException("the store is down"));
        assertThat(unsettled.discarded()).containsExactly(1);
        assertThat(unsettled.cancelled()).containsExactly(2);
        assertThat(unsettled.failures()).containsExactly(failure);
    }

    /** WP-22, WP-11: an Unsettled outcome is never empty and never wraps another. */
    @Test
    void anUnsettledOutcomeIsWellFormed() {
        RunOutcome<Integer> completed = new RunOutcome.Completed<>(false);
        List<Settlement<Integer>> one = List.of(new Settlement.Succeeded<>(1));
        assertThatThrownBy(() -> new RunOutcome.Unsettled<>(completed, List.of(), new IOException()))
                .isInstanceOf(IllegalArgumentException.class);
        RunOutcome.Unsettled<Integer> unsettled = new RunOutcome.Unsettled<>(completed, one, new IOException());
        assertThatThrownBy(() -> new RunOutcome.Unsettled<>(unsettled, one, new IOException()))
                .isInstanceOf(IllegalArgumentException.class);
        Set<Integer> items = new HashSet<>();
        unsettled.unsettled().forEach(s -> items.add(s.item()));
        assertThat(items).containsExactly(1);
    }
}
