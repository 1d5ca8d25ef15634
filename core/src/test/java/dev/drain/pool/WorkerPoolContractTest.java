package dev.drain.pool;

import static dev.drain.pool.Workloads.assertLedgerExact;
import static dev.drain.pool.Workloads.assertNoThreadsLeft;
import static dev.drain.pool.Workloads.drain;
import static dev.drain.pool.Workloads.result;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.drain.pool.Workloads.Attempts;
import dev.drain.pool.Workloads.CountingSource;
import dev.drain.pool.Workloads.Gate;
import dev.drain.pool.Workloads.RecordingSink;
import dev.drain.support.Bounds;
import dev.drain.support.Call;
import dev.drain.support.Spawner;
import dev.drain.support.ThreadKind;
import dev.drain.support.ThreadDump;
import dev.drain.support.Waits;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The pool's contract, point by point (WP-1 … WP-16 in {@code specs/worker-pool.md}), on both
 * intakes. Every test ends by checking WP-10: no thread of the pool is left, by the pool's own
 * count and by a JSON thread dump.
 */
@ParameterizedClass
@EnumSource(WorkerPool.IntakeKind.class)
class WorkerPoolContractTest {
    /** The item timeout of the tests that time out: short, so escalation takes well under a second. */
    static final Duration TIMEOUT = Duration.ofMillis(100);

    private final WorkerPool.IntakeKind intake;

    @RegisterExtension
    final Spawner spawn = new Spawner();

    WorkerPoolContractTest(WorkerPool.IntakeKind intake) {
        this.intake = intake;
    }

    private WorkerPool.Builder<Integer, String> pool(Handler<Integer, String> handler) {
        return WorkerPool.<Integer, String>builder(handler).intake(intake);
    }

    private static Set<String> results(int from, int to) {
        Set<String> expected = new HashSet<>();
        IntStream.range(from, to).forEach(i -> expected.add(result(i)));
        return expected;
    }

    // ---- WP-1 Bounded intake -------------------------------------------------------------------------

    /** WP-1: with every worker blocked, the producer pulls exactly queueSize + workers + 1 items and no more. */
    @Test
    void sourceStopsAtTheBound() throws Exception {
        Gate gate = new Gate();
        WorkerPool<Integer, String> pool = pool(Workloads.behind(gate)).workers(2).queueSize(3).build();
        CountingSource source = CountingSource.endless();
        try (Results<Integer, String> results = pool.run(source)) {
            gate.awaitArrivals(2);
            Waits.until("the queue is full and the producer holds one more",
                    () -> results.stats().accepted() == 6 && source.pulled() == 6);
            pool.requestStop();
            gate.open();
            assertThat(drain(results)).hasSize(6);
            assertThat(results.stats().maxLead()).isEqualTo(3 + 2 + 1);
        }
        assertThat(source.pulled()).isEqualTo(6);
        assertNoThreadsLeft(pool);
    }

    /** WP-1: over a long run the lead never exceeds queueSize + workers + 1. */
    @Test
    void leadStaysWithinTheBound() {
        WorkerPool<Integer, String> pool = pool(item -> {
            Thread.onSpinWait();
            return result(item);
        }).workers(3).queueSize(2).build();
        try (Results<Integer, String> results = pool.run(CountingSource.of(2_000))) {
            assertThat(drain(results)).hasSize(2_000);
            assertThat(results.stats().maxLead()).isBetween(1L, 2L + 3 + 1);
        }
        assertNoThreadsLeft(pool);
    }

    // ---- WP-2 Exactly once ---------------------------------------------------------------------------

    /** WP-2: every item is handled once and every result delivered once. */
    @Test
    void everyItemHandledAndDeliveredOnce() {
        Attempts attempts = new Attempts();
        WorkerPool<Integer, String> pool = pool(item -> {
            attempts.next(item);
            return result(item);
        }).workers(8).queueSize(4).build();
        try (Results<Integer, String> results = pool.run(CountingSource.of(500))) {
            List<String> got = drain(results);
            assertThat(got).hasSize(500).doesNotHaveDuplicates();
            assertThat(new HashSet<>(got)).isEqualTo(results(0, 500));
            assertThat(results.stats().succeeded()).isEqualTo(500);
        }
        assertThat(attempts.all()).hasSize(500).allSatisfy((item, n) -> assertThat(n).isOne());
        assertNoThreadsLeft(pool);
    }

    /** WP-2: results arrive in completion order, not in source order. */
    @Test
    void resultsArriveInCompletionOrder() throws Exception {
        Gate gate = new Gate();
        WorkerPool<Integer, String> pool = pool(item -> {
            if (item == 0) {
                gate.pass();
            }
            return result(item);
        }).workers(2).queueSize(1).build();
        try (Results<Integer, String> results = pool.run(List.of(0, 1))) {
            assertThat(results.next()).isEqualTo(result(1));
            gate.open();
            assertThat(results.next()).isEqualTo(result(0));
            assertThat(results.hasNext()).isFalse();
        }
        assertNoThreadsLeft(pool);
    }

    // ---- WP-3 Per-item timeout -----------------------------------------------------------------------

    /** WP-3: an attempt that outlives itemTimeout fails with TimeoutException and is not left running. */
    @Test
    void attemptThatOutlivesTheTimeoutFails() {
        WorkerPool<Integer, String> pool = pool(Workloads.untilInterrupted()).workers(1).queueSize(1)
                .itemTimeout(TIMEOUT).build();
        try (Results<Integer, String> results = pool.run(List.of(7))) {
            PoolFailure failure = catchThrowableOfType(PoolFailure.class, results::hasNext);
            assertThat(failure.failures()).singleElement().satisfies(f -> {
                assertThat(f.item()).isEqualTo(7);
                assertThat(f.attempts()).isOne();
                assertThat(f.cause()).isInstanceOf(TimeoutException.class);
            });
            assertThat(results.stats().timedOut()).isOne();
            assertThat(results.stats().escalations()).isZero();
        }
        assertNoThreadsLeft(pool);
    }

    /** WP-3: an attempt that returns wakes its worker at once; its result does not wait for the deadline (an hour here), which only the watchdog would serve. */
    @Test
    void aResultDoesNotWaitForItsDeadline() {
        WorkerPool<Integer, String> pool = pool(Workloads.echo()).workers(1).queueSize(1)
                .itemTimeout(Duration.ofHours(1)).build();
        Call<List<String>> consumer = spawn.call("consumer", () -> {
            try (Results<Integer, String> results = pool.run(List.of(1, 2))) {
                return drain(results);
            }
        });
        assertThat(consumer.value()).as("delivered within the test's bound").containsExactly(result(1), result(2));
        assertNoThreadsLeft(pool);
    }

    /** WP-3: an itemTimeout too long for nanoseconds (ChronoUnit.FOREVER) is one that never comes: the run completes, nothing times out. */
    @Test
    void aTimeoutTooLongForNanosecondsNeverComes() {
        WorkerPool<Integer, String> pool = pool(Workloads.echo()).workers(2).queueSize(1)
                .itemTimeout(java.time.temporal.ChronoUnit.FOREVER.getDuration()).build();
        try (Results<Integer, String> results = pool.run(List.of(1, 2, 3))) {
            assertThat(drain(results)).containsExactlyInAnyOrder(result(1), result(2), result(3));
            assertThat(results.stats().timedOut()).isZero();
        }
        assertNoThreadsLeft(pool);
    }

    /** WP-3, WP-5 (timeout-retry): a timed-out attempt is retried when TimeoutException is retryable. */
    @Test
    void timeoutIsRetriedWhenRetryable() {
        Attempts attempts = new Attempts();
        WorkerPool<Integer, String> pool = pool(item -> {
            if (attempts.next(item) == 1) {
                new CountDownLatch(1).await(); // the first attempt hangs until interrupted
            }
            return result(item);
        }).workers(1).queueSize(1).itemTimeout(TIMEOUT).retryable(TimeoutException.class).maxRetries(1).build();
        try (Results<Integer, String> results = pool.run(List.of(3))) {
            assertThat(drain(results)).containsExactly(result(3));
            assertThat(results.stats().timedOut()).isOne();
            assertThat(results.stats().retried()).isOne();
        }
        assertThat(attempts.of(3)).isEqualTo(2);
        assertNoThreadsLeft(pool);
    }

    // ---- WP-4 Escalating cancellation ----------------------------------------------------------------

    /** WP-4: a handler that swallows one interrupt is stopped by the second, and the escalation is reported. */
    @Test
    void swallowingOneInterruptIsStoppedByTheSecond() {
        AtomicInteger interrupts = new AtomicInteger();
        RecordingSink sink = new RecordingSink(false);
        WorkerPool<Integer, String> pool = pool(Workloads.swallowing(1, interrupts, new CountDownLatch(1)))
                .workers(1).queueSize(1).itemTimeout(TIMEOUT).metrics(sink).build();
        try (Results<Integer, String> results = pool.run(List.of(1))) {
            PoolFailure failure = catchThrowableOfType(PoolFailure.class, results::hasNext);
            assertThat(failure.failures()).singleElement()
                    .satisfies(f -> assertThat(f.cause()).isInstanceOf(TimeoutException.class));
            assertThat(results.stats().escalations()).isOne();
        }
        assertThat(interrupts).hasValue(2);
        assertThat(sink.named(MetricsEvent.ATTEMPT_ESCALATED)).singleElement().asString().contains("round=2");
        assertNoThreadsLeft(pool);
    }

    /** WP-4: a handler that swallows two interrupts is stopped by the third. */
    @Test
    void swallowingTwoInterruptsIsStoppedByTheThird() {
        AtomicInteger interrupts = new AtomicInteger();
        WorkerPool<Integer, String> pool = pool(Workloads.swallowing(2, interrupts, new CountDownLatch(1)))
                .workers(1).queueSize(1).itemTimeout(TIMEOUT).build();
        try (Results<Integer, String> results = pool.run(List.of(1))) {
            assertThatThrownBy(results::hasNext).isInstanceOf(PoolFailure.class);
            assertThat(results.stats().escalations()).isEqualTo(2);
        }
        assertThat(interrupts).hasValue(3);
        assertNoThreadsLeft(pool);
    }

    /**
     * WP-4: a handler that survives all three rounds is reported as stuck at once, while it still
     * runs, and the run ends when it finally returns (the one documented limit).
     */
    @Test
    void survivingThreeRoundsIsReportedAsStuck() {
        AtomicInteger interrupts = new AtomicInteger();
        CountDownLatch release = new CountDownLatch(1);
        RecordingSink sink = new RecordingSink(false);
        WorkerPool<Integer, String> pool = pool(Workloads.swallowing(Integer.MAX_VALUE, interrupts, release))
                .workers(1).queueSize(1).itemTimeout(TIMEOUT).metrics(sink).build();
        try (Results<Integer, String> results = pool.run(List.of(9))) {
            try {
                Waits.until("the attempt is reported stuck", () -> sink.count(MetricsEvent.ATTEMPT_STUCK) == 1);
                assertThat(results.stats().failed()).isOne();
                assertThat(pool.liveThreads()).as("the stuck handler still runs").isPositive();
            } finally {
                release.countDown(); // without it, close() would wait for the handler forever: the limit
            }
            PoolFailure failure = catchThrowableOfType(PoolFailure.class, results::hasNext);
            assertThat(failure.failures()).singleElement()
                    .satisfies(f -> assertThat(f.cause()).isInstanceOf(StuckAttempt.class));
            assertThat(results.stats().escalations()).isEqualTo(2);
        }
        assertThat(interrupts).hasValue(3);
        assertNoThreadsLeft(pool);
    }

    /**
     * WP-4, WP-6: a stuck attempt's item fails for good, so, like any permanent failure, it stops
     * the intake: the source is read no further once the handler finally returns.
     */
    @Test
    void aStuckAttemptStopsTheIntake() {
        AtomicInteger interrupts = new AtomicInteger();
        CountDownLatch release = new CountDownLatch(1);
        Handler<Integer, String> stuck = Workloads.swallowing(Integer.MAX_VALUE, interrupts, release);
        RecordingSink sink = new RecordingSink(false);
        CountingSource source = CountingSource.of(1_000);
        WorkerPool<Integer, String> pool = pool(item -> item == 0 ? stuck.handle(item) : result(item))
                .workers(1).queueSize(2).itemTimeout(TIMEOUT).metrics(sink).build();
        try (Results<Integer, String> results = pool.run(source)) {
            try {
                Waits.until("the attempt is reported stuck", () -> sink.count(MetricsEvent.ATTEMPT_STUCK) == 1);
            } finally {
                release.countDown(); // the stuck handler returns; the worker is free to take more
            }
            PoolFailure failure = catchThrowableOfType(PoolFailure.class, () -> drain(results));
            assertThat(failure.failures()).singleElement().satisfies(f -> assertThat(f.item()).isEqualTo(0));
        }
        assertThat(source.pulled()).as("the items pulled while the worker was stuck, and no more")
                .isLessThanOrEqualTo(2 + 1 + 1);
        assertNoThreadsLeft(pool);
    }

    // ---- WP-5 Retry policy ---------------------------------------------------------------------------

    /** WP-5 (retry): a retryable failure is retried, with the attempt number in the context, until it succeeds. */
    @Test
    void retryableFailureIsRetriedUntilItSucceeds() {
        List<Integer> seen = new CopyOnWriteArrayList<>();
        WorkerPool<Integer, String> pool = pool(item -> {
            int attempt = ItemContext.current().attempt();
            seen.add(attempt);
            if (attempt < 3) {
                throw new IOException("transient, attempt " + attempt);
            }
            return result(item);
        }).workers(1).queueSize(1).retryable(IOException.class).maxRetries(2).build();
        try (Results<Integer, String> results = pool.run(List.of(4))) {
            assertThat(drain(results)).containsExactly(result(4));
            assertThat(results.stats().retried()).isEqualTo(2);
        }
        assertThat(seen).containsExactly(1, 2, 3);
        assertNoThreadsLeft(pool);
    }

    /** WP-5: a retryable failure is attempted at most 1 + maxRetries times, then fails permanently. */
    @Test
    void retriesAreBounded() {
        Attempts attempts = new Attempts();
        WorkerPool<Integer, String> pool = pool(item -> {
            attempts.next(item);
            throw new IOException("always");
        }).workers(1).queueSize(1).retryable(IOException.class).maxRetries(2).build();
        try (Results<Integer, String> results = pool.run(List.of(5))) {
            PoolFailure failure = catchThrowableOfType(PoolFailure.class, results::hasNext);
            assertThat(failure.failures()).singleElement().satisfies(f -> {
                assertThat(f.attempts()).isEqualTo(3);
                assertThat(f.cause()).isInstanceOf(IOException.class);
            });
        }
        assertThat(attempts.of(5)).isEqualTo(3);
        assertNoThreadsLeft(pool);
    }

    /** WP-5: a failure that is not of a retryable type is not retried. */
    @Test
    void otherFailuresAreNotRetried() {
        Attempts attempts = new Attempts();
        WorkerPool<Integer, String> pool = pool(item -> {
            attempts.next(item);
            throw new IllegalArgumentException("bad item");
        }).workers(1).queueSize(1).retryable(IOException.class).maxRetries(5).build();
        try (Results<Integer, String> results = pool.run(List.of(6))) {
            assertThatThrownBy(results::hasNext).isInstanceOf(PoolFailure.class);
        }
        assertThat(attempts.of(6)).isOne();
        assertNoThreadsLeft(pool);
    }

    // ---- WP-6 Permanent failures ---------------------------------------------------------------------

    /**
     * WP-6 (permanent-failures): a permanent failure stops intake, the queued work drains, and the
     * run throws one PoolFailure holding exactly the failures.
     */
    @Test
    void permanentFailureStopsIntakeDrainsAndThrowsExactlyTheFailures() {
        CountingSource source = CountingSource.endless();
        AtomicInteger pulledWhenItFailed = new AtomicInteger(-1);
        MetricsSink sink = (event, detail) -> { // the pool reports item.failed once intake has stopped
            if (event == MetricsEvent.ITEM_FAILED) {
                pulledWhenItFailed.compareAndSet(-1, source.pulled());
            }
        };
        WorkerPool<Integer, String> pool = pool(item -> {
            if (item == 5) {
                throw new IllegalStateException("item 5 is broken");
            }
            return result(item);
        }).workers(2).queueSize(3).metrics(sink).build();
        List<String> got = new ArrayList<>();
        try (Results<Integer, String> results = pool.run(source)) {
            PoolFailure failure = catchThrowableOfType(PoolFailure.class, () -> results.forEachRemaining(got::add));
            assertThat(failure.failures()).singleElement().satisfies(f -> {
                assertThat(f.item()).isEqualTo(5);
                assertThat(f.cause()).isInstanceOf(IllegalStateException.class).hasMessage("item 5 is broken");
            });
        }
        int pulled = source.pulled();
        assertThat(pulled).as("intake stopped: at most the item being pulled at that moment came after")
                .isLessThanOrEqualTo(pulledWhenItFailed.get() + 1);
        Set<String> expected = results(0, pulled);
        expected.remove(result(5));
        assertThat(new HashSet<>(got)).as("every other pulled item was handled").isEqualTo(expected);
        assertNoThreadsLeft(pool);
    }

    /** WP-6: the PoolFailure holds only the handlers' failures, never an interrupt or a cancellation. */
    @Test
    void poolFailureHoldsOnlyItemFailures() {
        WorkerPool<Integer, String> pool = pool(item -> {
            if (item == 0) {
                new CountDownLatch(1).await(); // times out, and gets interrupted
            }
            throw new IOException("item " + item);
        }).workers(2).queueSize(2).itemTimeout(TIMEOUT).build();
        try (Results<Integer, String> results = pool.run(List.of(0, 1))) {
            PoolFailure failure = catchThrowableOfType(PoolFailure.class, results::hasNext);
            assertThat(failure.failures()).hasSize(2).allSatisfy(f -> assertThat(f.cause())
                    .isInstanceOfAny(IOException.class, TimeoutException.class)
                    .isNotInstanceOfAny(InterruptedException.class, CancellationException.class));
        }
        assertNoThreadsLeft(pool);
    }

    // ---- WP-7 requestStop ----------------------------------------------------------------------------

    /**
     * WP-7 (request-stop): requestStop mid-stream, called from two threads at once, ends the run
     * normally with every pulled item handled once.
     */
    @Test
    void requestStopFromTwoThreadsEndsTheRunNormally() throws Exception {
        CountingSource source = CountingSource.endless();
        WorkerPool<Integer, String> pool = pool(Workloads.echo()).workers(3).queueSize(4).build();
        CyclicBarrier together = new CyclicBarrier(2);
        List<String> got = new ArrayList<>();
        try (Results<Integer, String> results = pool.run(source)) {
            for (int i = 0; i < 20; i++) {
                got.add(results.next());
            }
            List<Call<Void>> stops = List.of(
                    spawn.run("stop-1", () -> { together.await(Bounds.WAIT.toNanos(), TimeUnit.NANOSECONDS); pool.requestStop(); }),
                    spawn.run("stop-2", () -> { together.await(Bounds.WAIT.toNanos(), TimeUnit.NANOSECONDS); pool.requestStop(); }));
            results.forEachRemaining(got::add); // ends without throwing
            stops.forEach(Call::value);
            assertThat(results.outcome()).contains(new RunOutcome.Completed<Integer>(true));
        }
        assertThat(got).hasSize(source.pulled()).doesNotHaveDuplicates();
        assertThat(new HashSet<>(got)).isEqualTo(results(0, source.pulled()));
        assertNoThreadsLeft(pool);
    }

    /** WP-7: requestStop returns at once even while every worker is blocked in a handler. */
    @Test
    void requestStopReturnsAtOnce() throws Exception {
        Gate gate = new Gate();
        WorkerPool<Integer, String> pool = pool(Workloads.behind(gate)).workers(2).queueSize(2).build();
        try (Results<Integer, String> results = pool.run(CountingSource.of(10))) {
            gate.awaitArrivals(2);
            spawn.run("stopper", pool::requestStop).value(); // bounded: fails if it blocks
            assertThat(results.stats().succeeded()).isZero();
            gate.open();
            assertThat(drain(results)).hasSizeBetween(2, 2 + 2 + 1);
        }
        assertNoThreadsLeft(pool);
    }

    /** WP-7: a stop requested before the run starts the run stopped: nothing is pulled. */
    @Test
    void requestStopBeforeRunPullsNothing() {
        CountingSource source = CountingSource.of(10);
        WorkerPool<Integer, String> pool = pool(Workloads.echo()).build();
        pool.requestStop();
        try (Results<Integer, String> results = pool.run(source)) {
            assertThat(results.hasNext()).isFalse();
            assertThat(results.outcome()).contains(new RunOutcome.Completed<Integer>(true));
        }
        assertThat(source.pulled()).isZero();
        assertNoThreadsLeft(pool);
    }

    /**
     * WP-7, WP-2, WP-21 (decision 0026): a source that calls requestStop() from its own next() still
     * has the item that call returns handled, by a worker, and nothing more is pulled.
     */
    @Test
    void aSourceThatStopsTheRunFromNextHasThatItemHandled() {
        AtomicReference<WorkerPool<Integer, String>> self = new AtomicReference<>();
        Iterator<Integer> stopping = Workloads.endlessCalling(n -> {
            if (n == 2) {
                Objects.requireNonNull(self.get()).requestStop();
            }
        });
        RecordingSink sink = new RecordingSink(false);
        WorkerPool<Integer, String> pool = pool(Workloads.echo()).workers(1).queueSize(4).metrics(sink).build();
        self.set(pool);
        try (Results<Integer, String> results = pool.run(stopping)) {
            assertThat(drain(results)).containsExactlyInAnyOrder(result(0), result(1), result(2));
            assertLedgerExact(results);
            assertThat(results.stats().pulled()).isEqualTo(3);
            assertThat(results.outcome()).contains(new RunOutcome.Completed<Integer>(true));
        }
        assertThat(sink.named(MetricsEvent.ATTEMPT_STARTED)).as("item 2 is handled by the one worker")
                .contains("attempt.started item=2 attempt=1 worker=0");
        assertNoThreadsLeft(pool);
    }

    /**
     * WP-21, WP-7 (decision 0026): after requestStop(), the item the producer holds before a full
     * intake waits for room and goes to a worker: no second handler starts while the one worker is
     * busy, and the item is handled once.
     */
    @Test
    void aStopLeavesTheHeldItemToAWorker() throws Exception {
        Gate gate = new Gate();
        RecordingSink sink = new RecordingSink(false);
        WorkerPool<Integer, String> pool = pool(Workloads.behind(gate)).workers(1).queueSize(1).metrics(sink).build();
        String put = intake == WorkerPool.IntakeKind.SHUTDOWN_QUEUE ? "ShutdownQueue.put(" : "LinkedBlockingQueue.put(";
        try (Results<Integer, String> results = pool.run(CountingSource.endless())) {
            gate.awaitArrivals(1);
            Waits.until("the producer holds item 2 before a full intake", () -> results.stats().pulled() == 3);
            pool.requestStop();
            Waits.until("the producer waits, after the stop, for room for item 2",
                    () -> results.stats().pulled() == 3 && ThreadDump.someThreadIn(pool.name() + "-producer-", put));
            assertThat(sink.named(MetricsEvent.ATTEMPT_STARTED)).as("one handler at a time, while the worker is busy")
                    .containsExactly("attempt.started item=0 attempt=1 worker=0");
            gate.open();
            assertThat(drain(results)).containsExactlyInAnyOrder(result(0), result(1), result(2));
            assertLedgerExact(results);
            assertThat(results.outcome()).contains(new RunOutcome.Completed<Integer>(true));
        }
        assertThat(sink.named(MetricsEvent.ATTEMPT_STARTED)).containsExactly("attempt.started item=0 attempt=1 worker=0",
                "attempt.started item=1 attempt=1 worker=0", "attempt.started item=2 attempt=1 worker=0");
        assertNoThreadsLeft(pool);
    }

    // ---- WP-8 The metrics sink may fail --------------------------------------------------------------

    /** WP-8 (metrics-failing): a sink that throws on every call changes nothing but the count of its failures. */
    @Test
    void failingSinkChangesNothing() {
        RecordingSink sink = new RecordingSink(true);
        WorkerPool<Integer, String> pool = pool(Workloads.echo()).workers(4).queueSize(4).metrics(sink).build();
        try (Results<Integer, String> results = pool.run(CountingSource.of(100))) {
            assertThat(new HashSet<>(drain(results))).isEqualTo(results(0, 100));
            assertThat(results.stats().metricsRaised()).isEqualTo(sink.size()).isPositive();
        }
        assertThat(sink.count(MetricsEvent.ATTEMPT_STARTED)).isEqualTo(100);
        assertNoThreadsLeft(pool);
    }

    // ---- WP-9 Context isolation ----------------------------------------------------------------------

    private static final ScopedValue<Integer> MINE = ScopedValue.newInstance();
    private static final ThreadLocal<Integer> LOCAL = new ThreadLocal<>();

    /**
     * WP-9 (context-isolation): two items in flight at once each see only their own context, their
     * own ScopedValue binding and their own ThreadLocal.
     */
    @Test
    void concurrentItemsSeeOnlyTheirOwnContext() {
        CyclicBarrier rendezvous = new CyclicBarrier(2);
        WorkerPool<Integer, String> pool = pool(item -> {
            LOCAL.set(item);
            return ScopedValue.where(MINE, item).call(() -> {
                rendezvous.await(Bounds.WAIT.toNanos(), TimeUnit.NANOSECONDS); // both are in flight now
                ItemContext<?> context = ItemContext.current();
                if (!context.item().equals(item) || !MINE.get().equals(item) || !item.equals(LOCAL.get())) {
                    throw new AssertionError("item " + item + " saw " + context + ", " + MINE.get() + ", " + LOCAL.get());
                }
                return result(item);
            });
        }).workers(2).queueSize(2).build();
        try (Results<Integer, String> results = pool.run(List.of(1, 2))) {
            assertThat(drain(results)).containsExactlyInAnyOrder(result(1), result(2));
        }
        assertThat(ItemContext.find()).as("no context outside a handler").isEmpty();
        assertThatThrownBy(ItemContext::current).isInstanceOf(NoSuchElementException.class);
        assertNoThreadsLeft(pool);
    }

    /**
     * WP-9: a handler that returns with a scope it opened still open fails with
     * StructureViolationException, as any ScopedValue call does, after that scope was closed.
     */
    @Test
    @SuppressWarnings("preview") // StructuredTaskScope and StructureViolationException are preview APIs in JDK 25
    void aHandlerThatLeavesAScopeOpenFails() {
        WorkerPool<Integer, String> pool = pool(item -> {
            var forgotten = java.util.concurrent.StructuredTaskScope.open();
            forgotten.fork(() -> item);
            return result(item); // without join() and close()
        }).workers(1).queueSize(1).build();
        try (Results<Integer, String> results = pool.run(List.of(1))) {
            PoolFailure failure = catchThrowableOfType(PoolFailure.class, () -> drain(results));
            assertThat(failure.failures()).singleElement().satisfies(f -> assertThat(f.cause())
                    .isInstanceOf(java.util.concurrent.StructureViolationException.class));
        }
        assertNoThreadsLeft(pool);
    }

    /** WP-9: a retry runs with a fresh context: the ThreadLocal the failed attempt set is gone. */
    @Test
    void retryDoesNotSeeThePreviousAttemptsThreadLocal() {
        List<String> seen = new CopyOnWriteArrayList<>();
        WorkerPool<Integer, String> pool = pool(item -> {
            seen.add(ItemContext.current().attempt() + ":" + LOCAL.get());
            LOCAL.set(item);
            if (ItemContext.current().attempt() == 1) {
                throw new IOException("retry me");
            }
            return result(item);
        }).workers(1).queueSize(1).retryable(IOException.class).maxRetries(1).build();
        try (Results<Integer, String> results = pool.run(List.of(8))) {
            assertThat(drain(results)).containsExactly(result(8));
        }
        assertThat(seen).containsExactly("1:null", "2:null");
        assertNoThreadsLeft(pool);
    }

    // ---- WP-12 Abort ---------------------------------------------------------------------------------

    /** WP-12 (abort): abort drops and reports the queued items, cancels the in-flight ones, and ends in PoolAborted. */
    @Test
    void abortDropsQueuedItemsAndCancelsInFlightOnes() throws Exception {
        Gate gate = new Gate(); // never opened: the handlers stop only by interrupt
        CountingSource source = CountingSource.endless();
        WorkerPool<Integer, String> pool = pool(Workloads.behind(gate)).workers(2).queueSize(3)
                .itemTimeout(Bounds.WAIT).build();
        try (Results<Integer, String> results = pool.run(source)) {
            gate.awaitArrivals(2);
            Waits.until("the queue is full", () -> results.stats().accepted() == 6 && source.pulled() == 6);
            pool.abort();
            PoolAborted aborted = catchThrowableOfType(PoolAborted.class, results::hasNext);
            assertThat(aborted.cancelled()).hasSize(2);
            Set<Object> settled = new HashSet<>(aborted.discarded());
            settled.addAll(aborted.cancelled());
            assertThat(settled).as("every pulled item is discarded or cancelled, once")
                    .hasSize(source.pulled()).isEqualTo(new HashSet<Object>(IntStream.range(0, source.pulled()).boxed().toList()));
            assertThat(aborted.discarded().size() + aborted.cancelled().size()).isEqualTo(source.pulled());
        }
        assertNoThreadsLeft(pool);
    }

    /** WP-12: results produced before an abort are still delivered; the iteration then ends in PoolAborted. */
    @Test
    void abortKeepsTheResultsAlreadyProduced() throws Exception {
        Gate gate = new Gate();
        WorkerPool<Integer, String> pool = pool(item -> {
            if (item >= 2) {
                gate.pass();
            }
            return result(item);
        }).workers(1).queueSize(1).itemTimeout(Bounds.WAIT).build();
        List<String> got = new ArrayList<>();
        try (Results<Integer, String> results = pool.run(CountingSource.of(5))) {
            got.add(results.next());
            got.add(results.next());
            gate.awaitArrivals(1);
            pool.abort();
            assertThatThrownBy(() -> results.forEachRemaining(got::add)).isInstanceOf(PoolAborted.class);
        }
        assertThat(got).containsExactly(result(0), result(1));
        assertNoThreadsLeft(pool);
    }

    /** WP-12: abort returns at once, twice, from two threads, while every handler is blocked. */
    @Test
    void abortIsIdempotentAndReturnsAtOnce() throws Exception {
        Gate gate = new Gate();
        RecordingSink sink = new RecordingSink(false);
        WorkerPool<Integer, String> pool = pool(Workloads.behind(gate)).workers(2).queueSize(2)
                .itemTimeout(Bounds.WAIT).metrics(sink).build();
        try (Results<Integer, String> results = pool.run(CountingSource.endless())) {
            gate.awaitArrivals(2);
            Call<Void> first = spawn.run("abort-1", pool::abort);
            Call<Void> second = spawn.run("abort-2", pool::abort);
            first.value();
            second.value();
            assertThatThrownBy(results::hasNext).isInstanceOf(PoolAborted.class);
        }
        assertThat(sink.count(MetricsEvent.POOL_ABORT)).isOne();
        assertNoThreadsLeft(pool);
    }

    /** WP-12: an abort after the run has ended does nothing. */
    @Test
    void abortAfterTheEndDoesNothing() {
        WorkerPool<Integer, String> pool = pool(Workloads.echo()).build();
        try (Results<Integer, String> results = pool.run(List.of(1, 2))) {
            assertThat(drain(results)).hasSize(2);
            pool.abort();
            assertThat(results.outcome()).contains(new RunOutcome.Completed<Integer>(false));
            assertThat(results.hasNext()).isFalse();
        }
        assertNoThreadsLeft(pool);
    }

    // ---- WP-13 Abandon -------------------------------------------------------------------------------

    /** WP-13 (abandon): closing the results early cancels everything and returns only when every thread has finished. */
    @Test
    void closingEarlyCancelsAndWaits() throws Exception {
        Gate gate = new Gate();
        WorkerPool<Integer, String> pool = pool(Workloads.behind(gate)).workers(3).queueSize(2)
                .itemTimeout(Bounds.WAIT).build();
        Results<Integer, String> results = pool.run(CountingSource.endless());
        gate.awaitArrivals(3);
        results.close();
        assertNoThreadsLeft(pool);
        if (!(results.outcome().orElseThrow() instanceof RunOutcome.Abandoned<Integer> abandoned)) {
            throw new AssertionError("not abandoned: " + results.outcome());
        }
        assertThat(abandoned.interrupted()).isFalse();
        assertThat(abandoned.cancelled()).hasSize(3);
        assertThat(results.hasNext()).isFalse();
    }

    /** WP-13, WP-4: closing early while a handler swallows an interrupt escalates, and still waits for it. */
    @Test
    void closingEarlyEscalatesAStubbornHandler() {
        AtomicInteger interrupts = new AtomicInteger();
        Handler<Integer, String> swallowing = Workloads.swallowing(1, interrupts, new CountDownLatch(1));
        CountDownLatch handling = new CountDownLatch(1);
        WorkerPool<Integer, String> pool = pool(item -> {
            handling.countDown();
            return swallowing.handle(item);
        }).workers(1).queueSize(1).itemTimeout(TIMEOUT).build();
        Results<Integer, String> results = pool.run(List.of(1));
        // the handler itself, not only its item in flight: an attempt cancelled before its thread began never runs (WP-3)
        Waits.until("the handler runs", () -> handling.getCount() == 0);
        results.close();
        assertThat(interrupts).hasValue(2);
        assertThat(results.stats().escalations()).isOne();
        assertNoThreadsLeft(pool);
    }

    // ---- WP-14 An interrupted consumer ---------------------------------------------------------------

    /**
     * WP-14 (caller-interrupted): a consumer interrupted while it waits for results abandons the
     * run, keeps its interrupt status, and gets a CancellationException.
     */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void interruptedConsumerAbandonsTheRun(ThreadKind consumerThread) throws Exception {
        Gate gate = new Gate();
        WorkerPool<Integer, String> pool = pool(Workloads.behind(gate)).workers(2).queueSize(2)
                .itemTimeout(Bounds.WAIT).build();
        Call<RunOutcome<Integer>> consumer = spawn.use(consumerThread).call("consumer", () -> {
            try (Results<Integer, String> results = pool.run(CountingSource.endless())) {
                CancellationException e = catchThrowableOfType(CancellationException.class, results::hasNext);
                assertThat(e).hasCauseInstanceOf(InterruptedException.class);
                assertThat(Thread.currentThread().isInterrupted()).as("interrupt status kept").isTrue();
                assertNoThreadsLeft(pool); // hasNext threw only once every thread had finished
                return results.outcome().orElseThrow();
            }
        });
        gate.awaitArrivals(2);
        Waits.untilParked(consumer.thread());
        consumer.thread().interrupt();
        assertThat(consumer.value()).isInstanceOfSatisfying(RunOutcome.Abandoned.class,
                abandoned -> assertThat(abandoned.interrupted()).isTrue());
        assertNoThreadsLeft(pool);
    }

    // ---- WP-16 Configuration and lifecycle -----------------------------------------------------------

    /** WP-16: build() rejects an invalid configuration with one message naming every invalid setting. */
    @Test
    @SuppressWarnings("NullAway") // a null handler on purpose
    void invalidConfigurationNamesEverySetting() {
        assertThatThrownBy(() -> WorkerPool.<Integer, String>builder(null).workers(0).queueSize(-1)
                .itemTimeout(Duration.ZERO).maxRetries(-1).name(" ").build())
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContainingAll("handler", "workers", "queueSize", "itemTimeout", "maxRetries", "name");
    }

    /** WP-16: a pool runs once. */
    @Test
    void aPoolRunsOnce() {
        WorkerPool<Integer, String> pool = pool(Workloads.echo()).build();
        try (Results<Integer, String> results = pool.run(List.of(1))) {
            assertThat(drain(results)).hasSize(1);
        }
        assertThatThrownBy(() -> pool.run(List.of(2))).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("runs once");
        assertNoThreadsLeft(pool);
    }

    /** WP-16: a source that throws ends the run after the queued work drains, and the iteration rethrows it. */
    @Test
    void sourceFailureDrainsThenRethrows() {
        WorkerPool<Integer, String> pool = pool(Workloads.echo()).workers(2).queueSize(2).build();
        List<String> got = new ArrayList<>();
        try (Results<Integer, String> results = pool.run(IntStream.range(0, 10).boxed().map(i -> {
            if (i == 5) {
                throw new IllegalStateException("the source broke at 5");
            }
            return i;
        }))) {
            assertThatThrownBy(() -> results.forEachRemaining(got::add))
                    .isInstanceOf(IllegalStateException.class).hasMessage("the source broke at 5");
            assertThat(results.outcome().orElseThrow()).isInstanceOf(RunOutcome.SourceFailed.class);
        }
        assertThat(new HashSet<>(got)).isEqualTo(results(0, 5));
        assertNoThreadsLeft(pool);
    }

    /** WP-16: a handler that returns null fails that attempt with NullPointerException. */
    @Test
    @SuppressWarnings("NullAway") // a null result on purpose
    void nullResultFailsTheAttempt() {
        WorkerPool<Integer, String> pool = pool(item -> null).build();
        try (Results<Integer, String> results = pool.run(List.of(1))) {
            PoolFailure failure = catchThrowableOfType(PoolFailure.class, results::hasNext);
            assertThat(failure.failures()).singleElement()
                    .satisfies(f -> assertThat(f.cause()).isInstanceOf(NullPointerException.class));
        }
        assertNoThreadsLeft(pool);
    }

    // ---- WP-15 Observability -------------------------------------------------------------------------

    /** WP-15: a run reports one accepted, one started and one succeeded event per item, then drained. */
    @Test
    void eventsTellTheStoryOfTheRun() {
        RecordingSink sink = new RecordingSink(false);
        WorkerPool<Integer, String> pool = pool(Workloads.echo()).workers(2).queueSize(2).metrics(sink).build();
        try (Results<Integer, String> results = pool.run(CountingSource.of(20))) {
            assertThat(drain(results)).hasSize(20);
        }
        assertThat(sink.count(MetricsEvent.ITEM_ACCEPTED)).isEqualTo(20);
        assertThat(sink.count(MetricsEvent.ATTEMPT_STARTED)).isEqualTo(20);
        assertThat(sink.count(MetricsEvent.ATTEMPT_SUCCEEDED)).isEqualTo(20);
        assertThat(sink.named(MetricsEvent.POOL_DRAINED)).singleElement().asString().contains("outcome=Completed");
        assertNoThreadsLeft(pool);
    }
}
