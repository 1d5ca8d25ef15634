package dev.drain.pool;

import static dev.drain.pool.Workloads.assertEveryResultDelivered;
import static dev.drain.pool.Workloads.assertLedgerExact;
import static dev.drain.pool.Workloads.assertNoThreadsLeft;
import static dev.drain.pool.Workloads.drain;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.drain.pool.Workloads.CountingSource;
import dev.drain.support.Bounds;
import dev.drain.support.Call;
import dev.drain.support.PoolWarnings;
import dev.drain.support.Spawner;
import dev.drain.support.ThreadKind;
import dev.drain.support.Waits;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicReference;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * WP-20: when the JDK closes a run's scope under it (its owner ends without closing the results,
 * closes an earlier run's results first, or leaves the {@link ScopedValue} binding they were opened
 * in), the run ends itself, as an abandon with its books exact, instead of keeping its owner (and,
 * at a thread's exit, the JVM) waiting for ever; and an abort frees a run whose consumer does not
 * read. Each endless run here would block on its full outbox if nothing ended it. On both intakes
 * and both kinds of owner thread.
 */
@ParameterizedClass
@EnumSource(WorkerPool.IntakeKind.class)
class OwnerScopeClosedTest {
    private final WorkerPool.IntakeKind intake;

    @RegisterExtension
    final Spawner spawn = new Spawner();

    @RegisterExtension
    final PoolWarnings warnings = new PoolWarnings();

    OwnerScopeClosedTest(WorkerPool.IntakeKind intake) {
        this.intake = intake;
    }

    private WorkerPool<Integer, String> pool(String name) {
        return WorkerPool.<Integer, String>builder(Workloads.echo()).intake(intake).workers(2).queueSize(2).name(name).build();
    }

    private static RunOutcome<Integer> outcomeOf(AtomicReference<@Nullable Results<Integer, String>> left) {
        Results<Integer, String> results = Objects.requireNonNull(left.get(), "the owner ran the pool");
        Waits.until("the run has ended", () -> results.outcome().isPresent());
        return assertLedgerExact(results);
    }

    /**
     * WP-20: an owner that takes one result and ends without closing the results ends, and the run
     * ends with it as abandoned (the owner's scope closed), with a warning naming the run and the owner.
     */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void aForgottenCloseEndsTheRunWhenItsOwnerEnds(ThreadKind kind) {
        WorkerPool<Integer, String> pool = pool("forgotten-" + kind);
        AtomicReference<@Nullable Results<Integer, String>> left = new AtomicReference<>();
        Call<String> owner = spawn.use(kind).call("forgetful-owner", () -> {
            Results<Integer, String> results = pool.run(CountingSource.endless());
            left.set(results);
            return results.next(); // and never closes them
        });
        assertThat(owner.value()).as("the one result taken").startsWith("r"); // bounded: the owner's thread ends
        assertThat(outcomeOf(left)).isInstanceOfSatisfying(RunOutcome.Abandoned.class,
                abandoned -> assertThat(abandoned.reason()).isEqualTo(RunOutcome.Abandoned.Reason.SCOPE_CLOSED));
        assertThat(warnings.abandonments()).singleElement().asString()
                .contains("run forgotten-" + kind + " abandoned", "thread \"forgetful-owner\"", "close()");
        assertNoThreadsLeft(pool);
    }

    /**
     * WP-20, WP-17: closing the results of an earlier run first ends the later run, which the JDK
     * then closes, and throws StructureViolationException, as the JDK's scopes do; the later run's
     * results can still be closed, and both runs' books are exact.
     */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    @SuppressWarnings("preview") // StructureViolationException is a preview API in JDK 25
    void closingAnEarlierRunFirstEndsTheLaterOneAndThrows(ThreadKind kind) {
        WorkerPool<Integer, String> outer = pool("outer-" + kind);
        WorkerPool<Integer, String> inner = pool("inner-" + kind);
        List<RunOutcome<Integer>> outcomes = Objects.requireNonNull(spawn.use(kind).call("owner", () -> {
            Results<Integer, String> first = outer.run(CountingSource.endless());
            Results<Integer, String> second = inner.run(CountingSource.endless());
            first.next();
            second.next();
            assertThatThrownBy(first::close).isInstanceOf(java.util.concurrent.StructureViolationException.class);
            assertThat(second.hasNext()).as("the later run, ended under its consumer").isFalse();
            second.close();
            return List.of(assertLedgerExact(first), assertLedgerExact(second));
        }).value());
        assertThat(outcomes).allSatisfy(outcome -> assertThat(outcome).isInstanceOf(RunOutcome.Abandoned.class));
        assertThat(((RunOutcome.Abandoned<Integer>) outcomes.get(0)).reason()).isEqualTo(RunOutcome.Abandoned.Reason.RESULTS_CLOSED);
        assertThat(((RunOutcome.Abandoned<Integer>) outcomes.get(1)).reason()).isEqualTo(RunOutcome.Abandoned.Reason.SCOPE_CLOSED);
        assertNoThreadsLeft(outer);
        assertNoThreadsLeft(inner);
    }

    /**
     * WP-20, WP-17: results that escape the ScopedValue binding they were opened in end their run
     * when the binding ends, and the binding's call throws StructureViolationException.
     */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    @SuppressWarnings("preview") // StructureViolationException is a preview API in JDK 25
    void resultsThatEscapeABindingEndTheirRun(ThreadKind kind) {
        ScopedValue<String> request = ScopedValue.newInstance();
        WorkerPool<Integer, String> pool = pool("escaped-" + kind);
        AtomicReference<@Nullable Results<Integer, String>> left = new AtomicReference<>();
        spawn.use(kind).run("owner", () -> assertThatThrownBy(() -> ScopedValue.where(request, "r-1").call(() -> {
            Results<Integer, String> results = pool.run(CountingSource.endless());
            left.set(results);
            results.next();
            return results; // escapes the binding, unclosed
        })).isInstanceOf(java.util.concurrent.StructureViolationException.class)).value();
        assertThat(outcomeOf(left)).isInstanceOfSatisfying(RunOutcome.Abandoned.class,
                abandoned -> assertThat(abandoned.reason()).isEqualTo(RunOutcome.Abandoned.Reason.SCOPE_CLOSED));
        assertThat(warnings.abandonments()).singleElement().asString().contains("run escaped-" + kind + " abandoned");
        assertNoThreadsLeft(pool);
    }

    /**
     * WP-20: an owner that closes an enclosing scope with its run's results still open ends the
     * run, which the JDK then closes by force, and the enclosing scope's close throws
     * StructureViolationException; only the watchdog's look at the owner, parked in that forced
     * close, can see it, since the owner neither ends nor touches the results.
     */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    @SuppressWarnings("preview") // StructuredTaskScope and StructureViolationException are preview APIs in JDK 25
    void closingAnEnclosingScopeEndsTheRunLeftOpenInIt(ThreadKind kind) {
        WorkerPool<Integer, String> pool = pool("enclosed-" + kind);
        AtomicReference<@Nullable Results<Integer, String>> left = new AtomicReference<>();
        spawn.use(kind).run("owner", () -> assertThatThrownBy(() -> {
            try (var enclosing = java.util.concurrent.StructuredTaskScope.open()) {
                Results<Integer, String> results = pool.run(CountingSource.endless());
                left.set(results);
                results.next();
                enclosing.join();
            } // leaves the enclosing scope with the run's results open
        }).isInstanceOf(java.util.concurrent.StructureViolationException.class)).value();
        assertThat(outcomeOf(left)).isInstanceOfSatisfying(RunOutcome.Abandoned.class,
                abandoned -> assertThat(abandoned.reason()).isEqualTo(RunOutcome.Abandoned.Reason.SCOPE_CLOSED));
        assertThat(warnings.abandonments()).singleElement().asString().contains("run enclosed-" + kind + " abandoned");
        assertNoThreadsLeft(pool);
    }

    /**
     * WP-20: a scope the owner opens inside a ScopedValue binding made after run(), and leaves
     * open, is closed by force when the binding ends (which throws StructureViolationException at
     * the owner), and that close is not the run's: the run goes on, and every result comes. The
     * forced close is held open for five of the watchdog's looks at the owner.
     */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    @SuppressWarnings("preview") // StructuredTaskScope and StructureViolationException are preview APIs in JDK 25
    void anUnrelatedScopesForcedCloseLeavesTheRunAlone(ThreadKind kind) {
        ScopedValue<String> key = ScopedValue.newInstance();
        WorkerPool<Integer, String> pool = pool("unrelated-" + kind);
        List<String> results = Objects.requireNonNull(spawn.use(kind).call("owner", () -> {
            try (Results<Integer, String> run = pool.run(CountingSource.of(120))) {
                java.util.ArrayList<String> got = new java.util.ArrayList<>(List.of(run.next()));
                assertThatThrownBy(() -> ScopedValue.where(key, "x").run(() -> {
                    var inner = java.util.concurrent.StructuredTaskScope.open();
                    // a window, not a synchronization: the watchdog looks every OWNER_CHECK_MILLIS
                    inner.fork(() -> new java.util.concurrent.CountDownLatch(1).await(
                            5 * Watchdog.OWNER_CHECK_MILLIS, java.util.concurrent.TimeUnit.MILLISECONDS));
                })).isInstanceOf(java.util.concurrent.StructureViolationException.class);
                got.addAll(drain(run));
                assertThat(assertLedgerExact(run)).isInstanceOf(RunOutcome.Completed.class);
                return got;
            }
        }).value());
        assertThat(results).hasSize(120);
        assertThat(warnings.abandonments()).as("no run was abandoned").isEmpty();
        assertNoThreadsLeft(pool);
    }

    /**
     * WP-12: abort() from another thread frees a run whose consumer reads nothing: every thread of
     * the run ends without it, and the results produced are still there for it, then PoolAborted.
     */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void anAbortFreesARunWhoseConsumerDoesNotRead(ThreadKind kind) throws Exception {
        WorkerPool<Integer, String> pool = pool("unread-" + kind);
        java.util.concurrent.CountDownLatch freed = new java.util.concurrent.CountDownLatch(1);
        Call<Void> owner = spawn.use(kind).run("owner", () -> {
            try (Results<Integer, String> results = pool.run(CountingSource.endless())) {
                results.next();
                Waits.until("the workers wait for room in the outbox", () -> results.stats().succeeded() >= 2 + 2);
                spawn.use(ThreadKind.PLATFORM).run("aborter", pool::abort).value();
                Waits.until("every thread of the run has ended, though nobody reads", () -> pool.liveThreads() == 0);
                freed.countDown();
                assertThat(catchThrowableOfType(PoolAborted.class, () -> drain(results))).isNotNull();
                assertLedgerExact(results);
                assertEveryResultDelivered(results);
            }
        });
        owner.value();
        assertThat(freed.await(Bounds.WAIT.toNanos(), java.util.concurrent.TimeUnit.NANOSECONDS)).isTrue();
        assertNoThreadsLeft(pool);
    }
}
