package dev.drain.pool;

import static dev.drain.pool.Workloads.assertNoThreadsLeft;
import static org.assertj.core.api.Assertions.assertThat;

import dev.drain.pool.SettlementTest.RecordingSettler;
import dev.drain.support.Bounds;
import dev.drain.support.Call;
import dev.drain.support.PoolWarnings;
import dev.drain.support.Spawner;
import dev.drain.support.ThreadKind;
import dev.drain.support.Waits;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CountDownLatch;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * WP-26: what a run logs on {@code System.getLogger("dev.drain.pool")}, which the JDK routes to
 * {@code java.util.logging} here (so {@code ERROR} is {@code SEVERE}): what nobody else is told, at
 * the level a service expects, and never what is thrown to the reader above {@code DEBUG}. A
 * logger that throws changes nothing. On both intakes, with owners of both kinds.
 */
@ParameterizedClass
@EnumSource(WorkerPool.IntakeKind.class)
class PoolLogTest {
    private final WorkerPool.IntakeKind intake;

    @RegisterExtension
    final Spawner spawn = new Spawner();

    @RegisterExtension
    final PoolWarnings log = new PoolWarnings();

    PoolLogTest(WorkerPool.IntakeKind intake) {
        this.intake = intake;
    }

    /** The records of run {@code pool} at {@code level}. */
    private List<LogRecord> recordsOf(WorkerPool<?, ?> pool, Level level) {
        return log.records().stream().filter(r -> r.getLevel().equals(level))
                .filter(r -> r.getMessage().startsWith("drain: run " + pool.name() + " ")
                        || r.getMessage().startsWith("drain: run " + pool.name() + ":")).toList();
    }

    /** A pool of two workers whose handlers wait at {@code gate}, named {@code name} and this test's intake. */
    private WorkerPool<Integer, String> gatedPool(Workloads.Gate gate, String name) {
        return WorkerPool.<Integer, String>builder(Workloads.behind(gate)).intake(intake).workers(2)
                .name(name + "-" + intake).build();
    }

    /** Drains {@code pool} over an endless source on an owner of {@code kind}, once both its workers wait at {@code gate}. */
    private Call<RunOutcome<Integer>> drainedOnceBothWait(ThreadKind kind, WorkerPool<Integer, String> pool,
                                                          Workloads.Gate gate) throws InterruptedException {
        Call<RunOutcome<Integer>> owner = spawn.use(kind).call("owner", () -> pool.drain(Workloads.CountingSource.endless()));
        gate.awaitArrivals(2);
        return owner;
    }

    private static void malformedAbove(int item, int limit) {
        if (item >= limit) {
            throw new IllegalArgumentException("item " + item + " is malformed");
        }
    }

    /**
     * WP-26: in a run that goes on past its failures, each permanent failure is logged once at
     * {@code ERROR}, naming the item, with its cause (so its stack trace).
     */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void aFailureTheRunGoesOnPastIsLoggedWithItsStackTrace(ThreadKind kind) {
        WorkerPool<Integer, Void> pool = WorkerPool.<Integer>forEach(item -> malformedAbove(item, 17))
                .intake(intake).name("logged-" + intake + "-" + kind).build();
        Call<RunOutcome<Integer>> owner = spawn.use(kind).call("owner", () -> pool.drain(Workloads.CountingSource.of(20)));
        assertThat(Objects.requireNonNull(owner.value()).failures()).hasSize(3);
        List<LogRecord> errors = recordsOf(pool, Level.SEVERE);
        assertThat(errors).hasSize(3).allSatisfy(r -> assertThat(r.getThrown()).isInstanceOf(IllegalArgumentException.class));
        assertThat(errors).extracting(LogRecord::getMessage).anySatisfy(m -> assertThat(m).contains("item 18 failed for good"));
        assertNoThreadsLeft(pool);
    }

    /**
     * WP-26: under the seed's rule a failure is thrown to the reader in a {@link PoolFailure}, so
     * it is not logged at {@code INFO} or above (no log-and-throw), and a run that ends without a
     * stop logs nothing there either.
     */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void aFailureThrownToTheReaderIsNotLoggedAboveDebug(ThreadKind kind) {
        WorkerPool<Integer, Void> pool = WorkerPool.<Integer>forEach(item -> malformedAbove(item, 17))
                .onFailure(WorkerPool.OnFailure.STOP).intake(intake).name("thrown-" + intake + "-" + kind).build();
        Call<RunOutcome<Integer>> owner = spawn.use(kind).call("owner", () -> pool.drain(Workloads.CountingSource.of(20)));
        assertThat(owner.value()).isInstanceOf(RunOutcome.Failed.class);
        assertThat(log.records()).filteredOn(r -> r.getMessage().contains(pool.name())).isEmpty();
        assertNoThreadsLeft(pool);
    }

    /**
     * WP-26: a graceful stop is logged at {@code INFO} once the intake has stopped, and again as the
     * run ends, with its counts.
     */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void aGracefulStopIsLoggedWithItsCounts(ThreadKind kind) throws InterruptedException {
        Workloads.Gate gate = new Workloads.Gate();
        WorkerPool<Integer, String> pool = gatedPool(gate, "stopped-" + kind);
        Call<RunOutcome<Integer>> owner = drainedOnceBothWait(kind, pool, gate);
        pool.requestStop(Bounds.WAIT.multipliedBy(2));
        gate.open();
        assertThat(owner.value()).isEqualTo(new RunOutcome.Completed<Integer>(true));
        List<String> lines = recordsOf(pool, Level.INFO).stream().map(LogRecord::getMessage).toList();
        assertThat(lines).satisfiesExactly(m -> assertThat(m).contains("stopping: intake stopped after"),
                m -> assertThat(m).contains("ended Completed (stopped): pulled=").contains("failed=0"));
        String pulled = lines.get(1).replaceFirst(".*pulled=(\\d+).*", "$1");
        assertThat(lines.getFirst()).as("the items pulled when the intake stopped: every item the run pulled")
                .contains("intake stopped after " + pulled + " items");
        assertNoThreadsLeft(pool);
    }

    /** WP-26: a stop whose deadline passes ends with a {@code WARNING} that says so, with the counts. */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void aDeadlineAbortIsAWarning(ThreadKind kind) throws InterruptedException {
        Workloads.Gate gate = new Workloads.Gate();
        WorkerPool<Integer, String> pool = gatedPool(gate, "deadline-" + kind);
        Call<RunOutcome<Integer>> owner = drainedOnceBothWait(kind, pool, gate);
        pool.requestStop(Duration.ofMillis(100));
        assertThat(owner.value()).isInstanceOf(RunOutcome.Aborted.class);
        assertThat(recordsOf(pool, Level.WARNING)).extracting(LogRecord::getMessage).singleElement().asString()
                .contains("ended Aborted (the stop's deadline passed): pulled=").contains("cancelled=2");
        assertNoThreadsLeft(pool);
    }

    /**
     * WP-26, WP-4: an attempt that outlives every round is logged at {@code WARNING} from the
     * watchdog, which never runs user code: the line names the worker and the attempt, not the
     * item (whose {@code toString} is user code).
     */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void aStuckAttemptIsLoggedWithoutUserText(ThreadKind kind) {
        CountDownLatch release = new CountDownLatch(1);
        java.util.concurrent.atomic.AtomicInteger interrupts = new java.util.concurrent.atomic.AtomicInteger();
        WorkerPool<Integer, String> pool = WorkerPool.<Integer, String>builder(
                        Workloads.swallowing(Integer.MAX_VALUE, interrupts, release))
                .intake(intake).workers(1).itemTimeout(Duration.ofMillis(20L * Bounds.FACTOR))
                .name("stuck-" + intake + "-" + kind).build();
        Call<RunOutcome<Integer>> owner = spawn.use(kind).call("owner", () -> pool.drain(Workloads.CountingSource.of(1)));
        try {
            Waits.until("the attempt is reported stuck", () -> !recordsOf(pool, Level.WARNING).isEmpty());
        } finally {
            release.countDown();
        }
        assertThat(owner.value()).isInstanceOf(RunOutcome.Failed.class);
        assertThat(recordsOf(pool, Level.WARNING)).extracting(LogRecord::getMessage).singleElement().asString()
                .contains("worker 0's attempt 1 outlived 3 interrupt rounds").doesNotContain("item=");
        assertNoThreadsLeft(pool);
    }

    /**
     * WP-26, WP-18: a logger that throws on every record changes nothing: each of the ten failures
     * is logged at {@code ERROR}, and still recorded and settled, and the run ends as it would have.
     */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void aLoggerThatThrowsChangesNothing(ThreadKind kind) {
        Logger jul = Logger.getLogger(PoolLog.NAME);
        Handler throwing = new Handler() {
            @Override
            public void publish(LogRecord record) {
                throw new IllegalStateException("this log handler always fails");
            }

            @Override
            public void flush() { }

            @Override
            public void close() { }
        };
        jul.addHandler(throwing);
        try {
            RecordingSettler settler = new RecordingSettler();
            WorkerPool<Integer, Void> pool = WorkerPool.<Integer>forEach(item -> malformedAbove(item, 10))
                    .intake(intake).settler(settler).build();
            Call<RunOutcome<Integer>> owner = spawn.use(kind).call("owner", () -> pool.drain(Workloads.CountingSource.of(20)));
            RunOutcome<Integer> outcome = Objects.requireNonNull(owner.value());
            assertThat(outcome).isInstanceOf(RunOutcome.Completed.class);
            assertThat(outcome.failures()).extracting(ItemFailure::item).containsExactlyInAnyOrder(10, 11, 12, 13, 14, 15,
                    16, 17, 18, 19);
            assertThat(settler.offered()).as("one settlement per item").hasSize(20);
            assertNoThreadsLeft(pool);
        } finally {
            jul.removeHandler(throwing);
        }
    }

    /**
     * WP-26: a retry is logged at {@code DEBUG} with its cause, once per retry, and the permanent
     * failure that follows says how many attempts it took (one, or several) and that the run goes on.
     */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void retriesAreLoggedAtDebugAndAFailureCountsItsAttempts(ThreadKind kind) {
        Logger jul = Logger.getLogger(PoolLog.NAME);
        Level before = jul.getLevel();
        jul.setLevel(Level.FINE);
        try {
            WorkerPool<Integer, Void> pool = WorkerPool.<Integer>forEach(item -> {
                if (item == 0) {
                    throw new java.io.IOException("item 0's backend is down");
                }
                malformedAbove(item, 1);
            }).retryable(java.io.IOException.class).maxRetries(2).intake(intake).workers(1)
                    .name("retried-" + intake + "-" + kind).build();
            Call<RunOutcome<Integer>> owner = spawn.use(kind).call("owner", () -> pool.drain(Workloads.CountingSource.of(2)));
            assertThat(Objects.requireNonNull(owner.value()).failures()).hasSize(2);
            assertThat(recordsOf(pool, Level.FINE)).extracting(LogRecord::getMessage)
                    .filteredOn(m -> m.contains("failed, retrying:")).hasSize(2)
                    .allSatisfy(m -> assertThat(m).contains("item 0's backend is down"));
            assertThat(recordsOf(pool, Level.SEVERE)).extracting(LogRecord::getMessage).containsExactlyInAnyOrder(
                    "drain: run " + pool.name() + ": item 0 failed for good after 3 attempts; settled as failed, the run goes on",
                    "drain: run " + pool.name() + ": item 1 failed for good after 1 attempt; settled as failed, the run goes on");
            assertNoThreadsLeft(pool);
        } finally {
            jul.setLevel(before);
        }
    }
}
