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
import java.util.List;
import java.util.Objects;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * WP-24: a graceful stop with a deadline. {@code requestStop(within)} stops the intake at once and
 * lets the work drain; if the run has not ended when {@code within} has passed, it is aborted
 * (attempts cancelled, queued items dropped, every unfinished item released to the settler), and
 * its outcome says the deadline did it. Never earlier than the deadline; the earliest deadline
 * asked for holds. On both intakes, with owners of both kinds.
 */
@ParameterizedClass
@EnumSource(WorkerPool.IntakeKind.class)
class StopDeadlineTest {
    private final WorkerPool.IntakeKind intake;

    @RegisterExtension
    final Spawner spawn = new Spawner();

    StopDeadlineTest(WorkerPool.IntakeKind intake) {
        this.intake = intake;
    }

    /** The deadline the tests give a stop whose work cannot end by itself. */
    private static final Duration DEADLINE = Duration.ofMillis(200);

    /** A pool of two workers whose handlers wait at {@code gate}, and a queue of two. */
    private WorkerPool<Integer, String> gated(Workloads.Gate gate, RecordingSettler settler) {
        return WorkerPool.<Integer, String>builder(Workloads.behind(gate)).intake(intake).workers(2).queueSize(2)
                .settler(settler).build();
    }

    /** A run whose two workers are held at {@code gate}, owned by {@code owner}. */
    private record Held(Workloads.Gate gate, WorkerPool<Integer, String> pool, Call<RunOutcome<Integer>> owner) {}

    /** {@return a run started on an owner of {@code kind}, once both its workers are held at its gate} */
    private Held held(ThreadKind kind, RecordingSettler settler) throws InterruptedException {
        Workloads.Gate gate = new Workloads.Gate();
        WorkerPool<Integer, String> pool = gated(gate, settler);
        Call<RunOutcome<Integer>> owner = owner(kind, pool);
        gate.awaitArrivals(2);
        return new Held(gate, pool, owner);
    }

    /** {@return whether {@code outcome} is an abort, and one at a stop's deadline} */
    private static boolean abortedAtTheDeadline(RunOutcome<Integer> outcome) {
        assertThat(outcome).isInstanceOf(RunOutcome.Aborted.class);
        return ((RunOutcome.Aborted<Integer>) outcome).deadlinePassed();
    }

    /** Iterates the run to its end; {@return the outcome}, whatever the end threw */
    private Call<RunOutcome<Integer>> owner(ThreadKind kind, WorkerPool<Integer, String> pool) {
        return spawn.use(kind).call("owner", () -> {
            try (Results<Integer, String> results = pool.run(Workloads.CountingSource.endless())) {
                return Workloads.drainPastAnAbort(results);
            }
        });
    }

    /**
     * WP-24: handlers that wait for ever, a stop with a deadline: the run is aborted at the
     * deadline, not before; the outcome is {@code Aborted} with {@code deadlinePassed}, its two
     * in-flight items cancelled and its queued ones discarded, each released to the settler once.
     */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void aStopPastItsDeadlineIsAborted(ThreadKind kind) throws InterruptedException {
        RecordingSettler settler = new RecordingSettler();
        Held run = held(kind, settler);
        WorkerPool<Integer, String> pool = run.pool();
        Call<RunOutcome<Integer>> owner = run.owner();
        long asked = System.nanoTime();
        pool.requestStop(DEADLINE);
        RunOutcome<Integer> outcome = Objects.requireNonNull(owner.value());
        assertThat(Duration.ofNanos(System.nanoTime() - asked)).as("the stop lasted until its deadline")
                .isGreaterThanOrEqualTo(DEADLINE);
        assertThat(abortedAtTheDeadline(outcome)).isTrue();
        assertThat(outcome.cancelled()).hasSize(2);
        assertThat(settler.offered()).as("every item pulled, released once")
                .hasSize(outcome.cancelled().size() + outcome.discarded().size())
                .allMatch(s -> s instanceof Settlement.Released<Integer>);
        assertNoThreadsLeft(pool);
    }

    /** WP-24: a stop whose work drains within the deadline ends normally: {@code Completed(stopRequested)}. */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void aStopThatDrainsInTimeCompletes(ThreadKind kind) throws InterruptedException {
        Held run = held(kind, new RecordingSettler());
        Workloads.Gate gate = run.gate();
        WorkerPool<Integer, String> pool = run.pool();
        Call<RunOutcome<Integer>> owner = run.owner();
        pool.requestStop(Bounds.WAIT.multipliedBy(2));
        gate.open();
        assertThat(owner.value()).isEqualTo(new RunOutcome.Completed<Integer>(true));
        assertNoThreadsLeft(pool);
    }

    /**
     * WP-24: the earliest deadline holds: a stop with a deadline longer than any wait of the test,
     * then one of {@link #DEADLINE}: aborted at the second; and a later, longer one does not move it.
     */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void theEarliestDeadlineHolds(ThreadKind kind) throws InterruptedException {
        Held run = held(kind, new RecordingSettler());
        WorkerPool<Integer, String> pool = run.pool();
        Call<RunOutcome<Integer>> owner = run.owner();
        pool.requestStop(Bounds.WAIT.multipliedBy(2));
        pool.requestStop(DEADLINE);
        pool.requestStop(Bounds.WAIT.multipliedBy(3));
        assertThat(abortedAtTheDeadline(Objects.requireNonNull(owner.value()))).isTrue();
        assertNoThreadsLeft(pool);
    }

    /**
     * WP-24: a deadline asked for before the run counts from the call; one that has passed when
     * the run starts aborts it at once, and nothing is pulled. A zero deadline is an abort said to
     * be the deadline's.
     */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void aPassedDeadlineBeforeTheRunAbortsItAtOnce(ThreadKind kind) {
        WorkerPool<Integer, String> pool = gated(new Workloads.Gate(), new RecordingSettler());
        pool.requestStop(Duration.ZERO);
        Call<RunOutcome<Integer>> owner = owner(kind, pool);
        assertThat(owner.value()).isEqualTo(new RunOutcome.Aborted<Integer>(List.of(), List.of(), List.of(), true));
        assertNoThreadsLeft(pool);
    }

    /**
     * WP-24: a deadline asked for before the run that has passed when the run starts aborts it,
     * every time (never a race with the run's own end): twenty runs, each with a deadline of 1 ms
     * that has passed before {@code run()}.
     */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void aDeadlinePassedBeforeTheRunStartsAbortsItEveryTime(ThreadKind kind) {
        for (int i = 0; i < 20; i++) {
            WorkerPool<Integer, String> pool = gated(new Workloads.Gate(), new RecordingSettler());
            long asked = System.nanoTime();
            pool.requestStop(Duration.ofMillis(1));
            Waits.until("the deadline passed", () -> System.nanoTime() - asked > Duration.ofMillis(1).toNanos());
            assertThat(owner(kind, pool).value()).as("run %s", i)
                    .isEqualTo(new RunOutcome.Aborted<Integer>(List.of(), List.of(), List.of(), true));
            assertNoThreadsLeft(pool);
        }
    }

    /** WP-24: an {@code abort()} before the run, then a passed deadline: the run is the abort's ({@code deadlinePassed} false). */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void anAbortBeforeAPassedDeadlineIsTheAborts(ThreadKind kind) {
        WorkerPool<Integer, String> pool = gated(new Workloads.Gate(), new RecordingSettler());
        pool.abort();
        pool.requestStop(Duration.ZERO);
        assertThat(owner(kind, pool).value()).isEqualTo(new RunOutcome.Aborted<Integer>(List.of(), List.of(), List.of(), false));
        assertNoThreadsLeft(pool);
    }

    /** WP-24: an {@code abort()} before the deadline is an abort, not the deadline's: {@code deadlinePassed} is false. */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void anAbortBeforeTheDeadlineIsTheAborts(ThreadKind kind) throws InterruptedException {
        Held run = held(kind, new RecordingSettler());
        WorkerPool<Integer, String> pool = run.pool();
        Call<RunOutcome<Integer>> owner = run.owner();
        pool.requestStop(Bounds.WAIT.multipliedBy(2));
        pool.abort();
        assertThat(abortedAtTheDeadline(Objects.requireNonNull(owner.value()))).isFalse();
        assertNoThreadsLeft(pool);
    }
}
