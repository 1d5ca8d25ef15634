package dev.drain.pool;

import static dev.drain.pool.Workloads.assertLedgerExact;
import static dev.drain.pool.Workloads.assertNoThreadsLeft;
import static org.assertj.core.api.Assertions.assertThat;

import dev.drain.pool.Workloads.CountingSource;
import dev.drain.support.Call;
import dev.drain.support.PoolWarnings;
import dev.drain.support.Spawner;
import dev.drain.support.ThreadKind;
import dev.drain.support.Waits;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicReference;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * WP-20, decision 0054: the JDK's forced closes that reach a run left open, in shapes
 * {@link OwnerScopeClosedTest} and {@link BoundaryTest} do not take: a {@code ScopedValue} binding
 * made while a scope is open (so that its end is a forced close by the binding, not the close of
 * every scope), and owners whose stack is deeper than a stack trace shows
 * ({@code MaxJavaStackTraceDepth}, 1,024 frames). Each ends its run as an abandon; none hangs.
 */
@SuppressWarnings("preview") // StructuredTaskScope and StructureViolationException are preview APIs in JDK 25
class ForcedCloseTest {
    @RegisterExtension
    final Spawner spawn = new Spawner();

    @RegisterExtension
    final PoolWarnings warnings = new PoolWarnings();

    private static WorkerPool<Integer, String> pool(String name) {
        return WorkerPool.<Integer, String>builder(Workloads.echo()).workers(2).queueSize(2).name(name).build();
    }

    /** How deep the owner's stack is when it calls run(): more than the JVM's MaxJavaStackTraceDepth (1,024 by default). */
    private static final int DEEP = 1_200;

    private static <V> V atDepth(int frames, Call.Body<V> body) throws Exception {
        return frames == 0 ? Objects.requireNonNull(body.run()) : atDepth(frames - 1, body);
    }

    /**
     * WP-20 ("a ScopedValue binding reaches the run's scope only if it was made before run()
     * (exact)"; "a forgotten close() never hangs"): results that escape the binding they were
     * opened in end their run when the binding ends, also when the owner's stack is deeper than
     * the JVM keeps in a stack trace (a scope is open before the binding, so its end is the JDK's
     * forced close by the binding). The stack read is cut to its innermost frames, so frames
     * counted from the thread's first are not the frames they were; the binding must still be
     * seen to enclose the run, and the binding's end must not wait for a consumer that is gone.
     * (If it hangs, the test aborts the run after the bound, to leave no thread.)
     */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void resultsThatEscapeABindingOnADeepStackEndTheirRun(ThreadKind kind) {
        resultsThatEscapeABindingMadeWithAScopeOpenEndTheirRun(kind, DEEP);
    }

    /**
     * WP-20: the same on a shallow stack, as evidence that the shape itself is handled: a binding
     * made while a scope is open (so that its end is the JDK's forced close by the binding, not the
     * close of every scope), around run(), with results that escape it.
     */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void resultsThatEscapeABindingMadeWithAScopeOpenEndTheirRun(ThreadKind kind) {
        resultsThatEscapeABindingMadeWithAScopeOpenEndTheirRun(kind, 0);
    }

    private void resultsThatEscapeABindingMadeWithAScopeOpenEndTheirRun(ThreadKind kind, int depth) {
        ScopedValue<String> key = ScopedValue.newInstance();
        WorkerPool<Integer, String> pool = pool("escaped-at-" + depth + "-" + kind);
        AtomicReference<@Nullable Results<Integer, String>> left = new AtomicReference<>();
        Call<Throwable> owner = spawn.use(kind).call("deep-owner", () -> atDepth(depth, () -> {
            try (var before = java.util.concurrent.StructuredTaskScope.open()) { // a scope open before the binding
                try {
                    ScopedValue.where(key, "x").call(() -> {
                        Results<Integer, String> results = pool.run(CountingSource.endless());
                        left.set(results);
                        results.next();
                        return results; // escapes the binding, unclosed
                    });
                    return new AssertionError("the binding ended without a StructureViolationException");
                } catch (Throwable e) {
                    before.join();
                    return e;
                }
            }
        }));
        assertTheForcedCloseEndedTheRun("the binding's end has returned to the owner", owner, pool, left);
    }

    /**
     * WP-20 ("the close of another scope reaches it only if the frame that closes it was already
     * running when run() was called"): an enclosing scope closed, with the run's results left open
     * in it, by the very frame that opened it and called run(), on a stack deeper than the JVM
     * keeps in a stack trace. The close reaches the run; it must end, not hang.
     */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void closingAnEnclosingScopeOnADeepStackEndsTheRun(ThreadKind kind) {
        WorkerPool<Integer, String> pool = pool("deep-enclosed-" + kind);
        AtomicReference<@Nullable Results<Integer, String>> left = new AtomicReference<>();
        Call<Throwable> owner = spawn.use(kind).call("deep-owner", () -> atDepth(DEEP, () -> {
            try (var enclosing = java.util.concurrent.StructuredTaskScope.open()) {
                Results<Integer, String> results = pool.run(CountingSource.endless());
                left.set(results);
                results.next();
                enclosing.join();
            } catch (Throwable e) {
                return e;
            }
            return new AssertionError("the enclosing scope closed without a StructureViolationException");
        }));
        assertTheForcedCloseEndedTheRun("the enclosing scope's close has returned to the owner", owner, pool, left);
    }

    /**
     * Waits until {@code owner} has come back from the forced close (else aborts the run, which it
     * waits for, so that no thread is left), and checks that the JDK threw at it and that the run,
     * whose results are in {@code left}, ended as an abandon with its ledger exact and no thread left.
     */
    private static void assertTheForcedCloseEndedTheRun(String what, Call<Throwable> owner, WorkerPool<Integer, String> pool,
                                                        AtomicReference<@Nullable Results<Integer, String>> left) {
        try {
            Waits.until(what, owner::isDone);
        } finally {
            if (!owner.isDone()) {
                pool.abort(); // the forced close waits for the run: free it, so that no thread is left
            }
        }
        assertThat(owner.value()).isInstanceOf(java.util.concurrent.StructureViolationException.class);
        Results<Integer, String> results = Objects.requireNonNull(left.get());
        assertThat(assertLedgerExact(results)).isInstanceOfSatisfying(RunOutcome.Abandoned.class,
                abandoned -> assertThat(abandoned.reason()).isEqualTo(RunOutcome.Abandoned.Reason.SCOPE_CLOSED));
        assertNoThreadsLeft(pool);
    }
}
