package dev.drain.pool;

import static dev.drain.pool.Workloads.assertNoThreadsLeft;
import static dev.drain.pool.Workloads.drain;
import static dev.drain.pool.Workloads.result;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.drain.measure.JvmThreads;
import dev.drain.pool.Workloads.CountingSource;
import dev.drain.pool.Workloads.Gate;
import dev.drain.support.Call;
import dev.drain.support.Spawner;
import dev.drain.support.ThreadKind;
import dev.drain.support.Waits;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * WP-17: the run is structured at its boundary. The thread that calls {@code run()} owns the
 * results as it owns a scope it opened: it alone iterates and closes; every other thread, the
 * pool's own included, is refused with a {@link WrongThreadException} that says what to call
 * instead. The caller's {@link ScopedValue} bindings reach every handler and every subtask a
 * handler forks, and a JSON thread dump shows the run's tree under the caller. Each test runs its
 * owner on a platform and on a virtual thread, on both intakes.
 */
@ParameterizedClass
@EnumSource(WorkerPool.IntakeKind.class)
class OwnershipTest {
    private static final ScopedValue<String> REQUEST = ScopedValue.newInstance();

    private final WorkerPool.IntakeKind intake;

    @RegisterExtension
    final Spawner spawn = new Spawner();

    OwnershipTest(WorkerPool.IntakeKind intake) {
        this.intake = intake;
    }

    private WorkerPool.Builder<Integer, String> pool(Handler<Integer, String> handler) {
        return WorkerPool.<Integer, String>builder(handler).intake(intake);
    }

    /** WP-17: close() from another thread while the owner waits in hasNext() is refused, and the owner's run goes on to its normal end. */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void closeFromAnotherThreadIsRefusedWhileTheOwnerWaits(ThreadKind kind) throws Exception {
        Gate gate = new Gate();
        WorkerPool<Integer, String> pool = pool(Workloads.behind(gate)).workers(2).queueSize(2).build();
        AtomicReference<Results<Integer, String>> shared = new AtomicReference<>();
        CountDownLatch running = new CountDownLatch(1);
        Call<List<String>> owner = spawn.use(kind).call("owner", () -> {
            try (Results<Integer, String> results = pool.run(CountingSource.of(4))) {
                shared.set(results);
                running.countDown();
                return drain(results); // waits in hasNext() until the gate opens
            }
        });
        Waits.until("the run has started", () -> running.getCount() == 0);
        gate.awaitArrivals(2);
        Waits.untilParked(owner.thread());
        Results<Integer, String> results = shared.get();
        WrongThreadException refused = catchThrowableOfType(WrongThreadException.class, results::close);
        assertThat(refused).hasMessageContainingAll("close()", "these results belong to", owner.thread().getName(),
                "requestStop()", "abort()");
        gate.open();
        assertThat(owner.value()).hasSize(4);
        assertThat(results.outcome()).contains(new RunOutcome.Completed<Integer>(false));
        assertNoThreadsLeft(pool);
    }

    /** WP-17: hasNext() and next() from a thread that is not the owner throw WrongThreadException and take nothing. */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void iterationFromAnotherThreadIsRefused(ThreadKind kind) {
        WorkerPool<Integer, String> pool = pool(Workloads.echo()).workers(1).queueSize(1).build();
        try (Results<Integer, String> results = pool.run(List.of(1))) {
            spawn.use(kind).run("intruder", () -> {
                assertThat(catchThrowableOfType(WrongThreadException.class, results::hasNext)).hasMessageContaining("hasNext()");
                assertThat(catchThrowableOfType(WrongThreadException.class, results::next)).hasMessageContaining("next()");
            }).value();
            assertThat(drain(results)).containsExactly(result(1));
        }
        assertNoThreadsLeft(pool);
    }

    /** WP-17: a handler that closes its own run gets WrongThreadException, which fails its item, and the run ends instead of deadlocking. */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void handlerClosingItsOwnRunIsRefused(ThreadKind kind) {
        AtomicReference<Results<Integer, String>> self = new AtomicReference<>();
        CountDownLatch published = new CountDownLatch(1);
        WorkerPool<Integer, String> pool = pool(item -> {
            published.await();
            self.get().close();
            return result(item);
        }).workers(1).queueSize(1).build();
        Call<PoolFailure> owner = spawn.use(kind).call("owner", () -> {
            try (Results<Integer, String> results = pool.run(List.of(1))) {
                self.set(results);
                published.countDown();
                return catchThrowableOfType(PoolFailure.class, results::hasNext);
            }
        });
        assertThat(Objects.requireNonNull(owner.value(), "the run's end").failures()).singleElement()
                .satisfies(f -> assertThat(f.cause()).isInstanceOf(WrongThreadException.class));
        assertNoThreadsLeft(pool);
    }

    /** WP-17, WP-7, WP-12: requestStop() and abort() work from any thread, a handler's included. */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void handlersMayStopAndAbortTheirRun(ThreadKind kind) {
        AtomicReference<WorkerPool<Integer, String>> self = new AtomicReference<>();
        WorkerPool<Integer, String> pool = pool(item -> {
            if (item == 3) {
                self.get().requestStop();
                self.get().requestStop();
            }
            return result(item);
        }).workers(1).queueSize(1).build();
        self.set(pool);
        Call<List<String>> owner = spawn.use(kind).call("owner", () -> {
            try (Results<Integer, String> results = pool.run(CountingSource.endless())) {
                List<String> got = drain(results);
                assertThat(results.outcome()).contains(new RunOutcome.Completed<Integer>(true));
                return got;
            }
        });
        assertThat(owner.value()).contains(result(3)).hasSizeLessThanOrEqualTo(3 + 1 + 1 + 1);
        assertNoThreadsLeft(pool);
    }

    /** WP-17, WP-9: a ScopedValue the caller binds around the run reaches every handler and every subtask a handler forks. */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    @SuppressWarnings("preview") // the handler forks with StructuredTaskScope, as a user's handler would
    void callersBindingsReachHandlersAndTheirSubtasks(ThreadKind kind) {
        Map<Integer, String> seen = new ConcurrentHashMap<>();
        WorkerPool<Integer, String> pool = pool(item -> {
            try (var scope = java.util.concurrent.StructuredTaskScope.open()) {
                var forked = scope.fork(() -> REQUEST.orElse("unbound") + "/" + ItemContext.current().item());
                scope.join();
                seen.put(item, REQUEST.orElse("unbound") + " " + forked.get());
            }
            return result(item);
        }).workers(2).queueSize(2).build();
        spawn.use(kind).run("owner", () -> ScopedValue.where(REQUEST, "request-42").run(() -> {
            try (Results<Integer, String> results = pool.run(List.of(1, 2, 3))) {
                assertThat(drain(results)).hasSize(3);
            }
        })).value();
        assertThat(seen).containsOnly(Map.entry(1, "request-42 request-42/1"), Map.entry(2, "request-42 request-42/2"),
                Map.entry(3, "request-42 request-42/3"));
        assertNoThreadsLeft(pool);
    }

    /** WP-17: results opened inside a ScopedValue binding cannot escape it: the binding's end refuses with StructureViolationException, and the run is still ended and waited for. */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    @SuppressWarnings("preview") // StructureViolationException is part of the preview API in JDK 25
    void resultsCannotEscapeTheBindingAroundRun(ThreadKind kind) {
        WorkerPool<Integer, String> pool = pool(Workloads.echo()).workers(1).queueSize(1).build();
        spawn.use(kind).run("owner", () -> {
            var escaped = catchThrowableOfType(java.util.concurrent.StructureViolationException.class,
                    () -> ScopedValue.where(REQUEST, "r").call(() -> pool.run(List.of(1))));
            assertThat(escaped).isNotNull();
        }).value();
        Waits.until("the escaped run's threads end", () -> pool.liveThreads() == 0);
        assertNoThreadsLeft(pool);
    }

    /** WP-17: a JSON thread dump shows the run's tree under its owner: attempt scope → workers' scope (the driver's) → the run's scope (the owner's) → the owner's container. */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void threadDumpShowsTheRunUnderItsOwner(ThreadKind kind) throws Exception {
        String name = "tree-" + intake + "-" + kind;
        Gate gate = new Gate();
        WorkerPool<Integer, String> pool = pool(Workloads.behind(gate)).workers(1).queueSize(1).name(name).build();
        AtomicReference<List<JvmThreads.Container>> chain = new AtomicReference<>(List.of());
        Call<Void> owner = spawn.use(kind).run("owner", () -> {
            try (Results<Integer, String> results = pool.run(List.of(1))) {
                gate.awaitArrivals(1);
                chain.set(JvmThreads.dump().chainOf(name + "-attempt-"));
                gate.open();
                drain(results);
            }
        });
        owner.value();
        assertThat(chain.get()).extracting(JvmThreads.Container::name).as("the attempt's thread, up to the root")
                .containsExactly(name + "-attempt", name + "-workers", name, "<root>");
        JvmThreads.Container run = chain.get().get(2);
        assertThat(run.owner()).as("the run's scope is owned by the thread that called run()")
                .isEqualTo(owner.thread().threadId());
        assertThat(run.threads()).extracting(JvmThreads.DumpedThread::name).as("the run's scope holds the driver and the watchdog")
                .hasSize(2).anyMatch(n -> n.startsWith(name + "-driver-")).anyMatch(n -> n.startsWith(name + "-watchdog-"));
        assertThat(chain.get().get(1).owner()).as("the workers' scope is owned by the driver")
                .isEqualTo(run.threads().stream().filter(t -> t.name().startsWith(name + "-driver-")).findFirst()
                        .orElseThrow().tid());
        assertNoThreadsLeft(pool);
    }

    /**
     * WP-10, WP-17: an attempt's scope is closed when the attempt ends: a dump taken in a worker's
     * third attempt shows one attempt scope, holding that attempt's thread.
     */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void anAttemptsScopeIsClosedWhenItEnds(ThreadKind kind) throws Exception {
        String name = "closed-" + intake + "-" + kind;
        AtomicReference<List<JvmThreads.Container>> scopes = new AtomicReference<>(List.of());
        WorkerPool<Integer, String> pool = pool(item -> {
            if (item == 2) {
                scopes.set(JvmThreads.dump().containers().stream().filter(c -> c.name().equals(name + "-attempt")).toList());
            }
            return result(item);
        }).workers(1).queueSize(1).name(name).build();
        Call<List<String>> owner = spawn.use(kind).call("owner", () -> {
            try (Results<Integer, String> results = pool.run(List.of(0, 1, 2))) {
                return drain(results);
            }
        });
        assertThat(owner.value()).hasSize(3);
        assertThat(scopes.get()).as("the attempt scopes open during the third attempt").singleElement()
                .satisfies(scope -> assertThat(scope.threads()).hasSize(1));
        assertNoThreadsLeft(pool);
    }
}
