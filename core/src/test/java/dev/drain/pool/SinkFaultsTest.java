package dev.drain.pool;

import static dev.drain.pool.Workloads.assertEveryResultDelivered;
import static dev.drain.pool.Workloads.assertLedgerExact;
import static dev.drain.pool.Workloads.assertNoThreadsLeft;
import static dev.drain.pool.Workloads.drain;
import static dev.drain.pool.Workloads.result;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.drain.pool.Workloads.CountingSource;
import dev.drain.support.Bounds;
import dev.drain.support.Call;
import dev.drain.support.Spawner;
import dev.drain.support.ThreadKind;
import dev.drain.support.Waits;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.AbstractQueuedSynchronizer;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * WP-8, WP-18: the metrics sink is user code and may throw anything, swallow or set interrupts,
 * and call back into the pool. Its {@code Exception}s and {@code Error}s are counted and change
 * nothing else; a {@link VirtualMachineError} ends the run as {@link RunOutcome.Crashed}. On both
 * intakes; where another thread matters, on platform and virtual threads.
 */
@ParameterizedClass
@EnumSource(WorkerPool.IntakeKind.class)
class SinkFaultsTest {
    private final WorkerPool.IntakeKind intake;

    @RegisterExtension
    final Spawner spawn = new Spawner();

    SinkFaultsTest(WorkerPool.IntakeKind intake) {
        this.intake = intake;
    }

    private WorkerPool<Integer, String> pool(MetricsSink sink) {
        return WorkerPool.<Integer, String>builder(Workloads.echo()).intake(intake).workers(3).queueSize(2)
                .metrics(sink).build();
    }

    /** Runs {@code items} items through {@code pool} to the end and checks the books; {@return the results} */
    private static List<String> runToTheEnd(WorkerPool<Integer, String> pool, int items) {
        try (Results<Integer, String> results = pool.run(CountingSource.of(items))) {
            List<String> got = drain(results);
            assertLedgerExact(results);
            assertEveryResultDelivered(results); // the consumer read to the end
            assertThat(results.outcome()).contains(new RunOutcome.Completed<Integer>(false));
            return got;
        }
    }

    /** WP-8, WP-18: a sink that throws InterruptedException, with no interrupt, when an attempt starts loses no item and the run completes. */
    @Test
    void interruptedExceptionWithoutAnInterruptLosesNothing() {
        AtomicInteger thrown = new AtomicInteger();
        WorkerPool<Integer, String> pool = pool((event, detail) -> {
            if (event == MetricsEvent.ATTEMPT_STARTED) {
                thrown.incrementAndGet();
                throw new InterruptedException("the sink's own, not the pool's");
            }
        });
        assertThat(runToTheEnd(pool, 6)).hasSize(6);
        assertThat(thrown).hasValue(6);
        assertNoThreadsLeft(pool);
    }

    /** WP-8, WP-18: a sink that sets its thread's interrupt status on every event changes nothing. */
    @Test
    void settingTheInterruptStatusChangesNothing() {
        WorkerPool<Integer, String> pool = pool((event, detail) -> Thread.currentThread().interrupt());
        assertThat(runToTheEnd(pool, 50)).hasSize(50);
        assertNoThreadsLeft(pool);
    }

    /** WP-8, WP-18: a sink that throws an Error on the last event of the run is counted, and the iteration still ends. */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void errorAtTheEndIsCountedAndTheRunEnds(ThreadKind kind) {
        WorkerPool<Integer, String> pool = pool((event, detail) -> {
            if (event == MetricsEvent.POOL_DRAINED) {
                throw new AssertionError("the sink's own bug");
            }
        });
        Call<List<String>> owner = spawn.use(kind).call("owner", () -> runToTheEnd(pool, 5));
        assertThat(owner.value()).hasSize(5);
        assertNoThreadsLeft(pool);
    }

    /** WP-8, WP-18: a sink that throws an Error or an Exception on every call changes nothing but the count. */
    @Test
    void errorsAndExceptionsOnEveryCallAreCounted() {
        AtomicInteger calls = new AtomicInteger();
        WorkerPool<Integer, String> pool = pool((event, detail) -> {
            if (calls.incrementAndGet() % 2 == 0) {
                throw new LinkageError("an Error from the sink");
            }
            throw new Exception("an Exception from the sink");
        });
        try (Results<Integer, String> results = pool.run(CountingSource.of(20))) {
            assertThat(drain(results)).hasSize(20);
            assertLedgerExact(results);
            assertEveryResultDelivered(results); // the consumer read to the end
            assertThat(results.stats().metricsRaised()).isEqualTo(calls.get()).isPositive();
        }
        assertNoThreadsLeft(pool);
    }

    /** WP-18: a VirtualMachineError from the sink ends the run as Crashed, the iteration throws it, and the books are exact. */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void virtualMachineErrorEndsTheRun(ThreadKind kind) {
        StackOverflowError overflow = new StackOverflowError("the sink recursed");
        WorkerPool<Integer, String> pool = pool((event, detail) -> {
            if (event == MetricsEvent.ATTEMPT_SUCCEEDED && detail.startsWith("item=3 ")) {
                throw overflow;
            }
        });
        Call<RunOutcome<Integer>> owner = spawn.use(kind).call("owner", () -> {
            try (Results<Integer, String> results = pool.run(CountingSource.endless())) {
                StackOverflowError thrown = catchThrowableOfType(StackOverflowError.class, () -> drain(results));
                assertThat(thrown).isSameAs(overflow);
                assertThat(catchThrowableOfType(StackOverflowError.class, results::hasNext)).as("again").isSameAs(overflow);
                assertEveryResultDelivered(results);
                return assertLedgerExact(results);
            }
        });
        assertThat(owner.value()).isInstanceOfSatisfying(RunOutcome.Crashed.class,
                crashed -> assertThat(crashed.cause()).isSameAs(overflow));
        assertNoThreadsLeft(pool);
    }

    /** WP-17, WP-18: a sink that calls close() on the results is refused (counted), and the run goes on. */
    @Test
    void sinkClosingTheResultsIsRefused() {
        AtomicReference<@Nullable Results<Integer, String>> self = new AtomicReference<>();
        AtomicReference<@Nullable Throwable> refused = new AtomicReference<>();
        WorkerPool<Integer, String> pool = pool((event, detail) -> {
            Results<Integer, String> results = self.get();
            if (event == MetricsEvent.ATTEMPT_STARTED && results != null) {
                try {
                    results.close();
                } catch (WrongThreadException e) {
                    refused.compareAndSet(null, e);
                    throw e;
                }
            }
        });
        try (Results<Integer, String> results = pool.run(CountingSource.of(10))) {
            self.set(results);
            assertThat(drain(results)).hasSize(10);
            assertLedgerExact(results);
            assertEveryResultDelivered(results); // the consumer read to the end
        }
        assertThat(refused.get()).isInstanceOf(WrongThreadException.class);
        assertNoThreadsLeft(pool);
    }

    /** WP-12, WP-18: a sink may abort the run it reports on; the run ends as aborted with exact books. */
    @Test
    void sinkMayAbortTheRun() {
        AtomicReference<WorkerPool<Integer, String>> self = new AtomicReference<>();
        WorkerPool<Integer, String> pool = pool((event, detail) -> {
            if (event == MetricsEvent.ATTEMPT_SUCCEEDED && detail.startsWith("item=" + 4 + " ")) {
                self.get().abort();
            }
        });
        self.set(pool);
        try (Results<Integer, String> results = pool.run(CountingSource.endless())) {
            List<String> got = new java.util.ArrayList<>();
            assertThat(catchThrowableOfType(PoolAborted.class, () -> results.forEachRemaining(got::add))).isNotNull();
            assertThat(got).contains(result(4));
            assertThat(assertLedgerExact(results)).isInstanceOf(RunOutcome.Aborted.class);
            assertEveryResultDelivered(results); // the consumer read to the end
        }
        assertNoThreadsLeft(pool);
    }

    /** WP-8, WP-18: a VirtualMachineError from a sink that is behind still ends the run as Crashed: the outcome waits for the backlog. */
    @Test
    void virtualMachineErrorFromASinkThatIsBehindCrashesTheRun() {
        StackOverflowError overflow = new StackOverflowError("the sink recursed");
        AtomicInteger seen = new AtomicInteger();
        WorkerPool<Integer, String> pool = pool((event, detail) -> {
            if (seen.incrementAndGet() < 40) {
                java.util.concurrent.locks.LockSupport.parkNanos(2_000_000); // a slow sink: the run ends before it is done
            }
            if (event == MetricsEvent.ATTEMPT_SUCCEEDED && detail.startsWith("item=1 ")) {
                throw overflow;
            }
        });
        try (Results<Integer, String> results = pool.run(CountingSource.of(3))) {
            assertThat(catchThrowable(() -> drain(results))).as("the outcome is %s", results.outcome()).isSameAs(overflow);
            assertThat(assertLedgerExact(results)).isInstanceOf(RunOutcome.Crashed.class);
        }
        assertNoThreadsLeft(pool);
    }

    /**
     * WP-18, WP-12: a VirtualMachineError from the sink while the run is stopping cancels the run
     * as an abort does: what the intake holds is discarded, the running attempt is cancelled, and
     * the run ends Crashed with exact books.
     */
    @Test
    void virtualMachineErrorWhileStoppingCancelsTheRun() {
        OutOfMemoryError fatal = new OutOfMemoryError("the sink, on the stop");
        CountDownLatch started = new CountDownLatch(1);
        WorkerPool<Integer, String> pool = WorkerPool.<Integer, String>builder(item -> {
            started.countDown();
            boolean _ = new CountDownLatch(1).await(Bounds.WAIT.toNanos(), TimeUnit.NANOSECONDS); // until cancelled
            return result(item);
        }).intake(intake).workers(1).queueSize(2).metrics((event, detail) -> {
            if (event == MetricsEvent.POOL_STOP_REQUESTED) {
                throw fatal;
            }
        }).build();
        try (Results<Integer, String> results = pool.run(CountingSource.endless())) {
            Waits.until("the first attempt runs and two more items are pulled",
                    () -> started.getCount() == 0 && results.stats().pulled() >= 3);
            pool.requestStop();
            assertThat(catchThrowable(() -> drain(results))).isSameAs(fatal);
            RunOutcome<Integer> outcome = assertLedgerExact(results);
            assertThat(outcome).isInstanceOfSatisfying(RunOutcome.Crashed.class,
                    crashed -> assertThat(crashed.cause()).isSameAs(fatal));
            assertThat(outcome.cancelled()).as("cancelled").containsExactly(0);
            assertThat(outcome.discarded()).as("discarded").isNotEmpty();
        }
        assertNoThreadsLeft(pool);
    }

    /**
     * WP-8: a sink that falls behind slows the pool instead of filling the heap: with the sink
     * blocked, the producer comes to wait for room in the sink's backlog, having pulled no more
     * than {@code Reporter.BACKLOG + 1} items (each item's {@code item.accepted} holds room until it
     * is delivered), though its intake has room for four times as many.
     */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void aBlockedSinkHoldsThePoolToTheBacklog(ThreadKind kind) {
        CountDownLatch release = new CountDownLatch(1);
        WorkerPool<Integer, String> pool = WorkerPool.<Integer, String>builder(Workloads.echo()).intake(intake)
                .workers(3).queueSize(4 * Reporter.BACKLOG).metrics((event, detail) -> {
                    boolean _ = release.await(Bounds.WAIT.toNanos(), TimeUnit.NANOSECONDS); // blocked until released
                }).build();
        AtomicReference<@Nullable Thread> producer = new AtomicReference<>();
        AtomicInteger pulled = new AtomicInteger();
        Iterator<Integer> source = Workloads.endlessCalling(item -> {
            producer.set(Thread.currentThread());
            pulled.incrementAndGet();
        });
        Call<RunOutcome<Integer>> owner = spawn.use(kind).call("owner", () -> {
            try (Results<Integer, String> results = pool.run(source)) {
                drain(results);
                assertEveryResultDelivered(results); // the consumer read to the end
                return assertLedgerExact(results);
            }
        });
        try {
            // The intake never fills (it has room for 4 backlogs), so a producer waiting on a
            // condition waits for room in the backlog; any other park of it is on a lock.
            Waits.until("the producer waits on a condition", () -> {
                Thread thread = producer.get();
                return thread != null && thread.getState() == Thread.State.WAITING
                        && LockSupport.getBlocker(thread) instanceof AbstractQueuedSynchronizer.ConditionObject;
            });
            assertThat(pulled.get()).as("items pulled with the sink blocked").isLessThanOrEqualTo(Reporter.BACKLOG + 1);
        } finally {
            release.countDown();
            pool.requestStop();
        }
        assertThat(owner.value()).isEqualTo(new RunOutcome.Completed<Integer>(true));
        assertNoThreadsLeft(pool);
    }
}
