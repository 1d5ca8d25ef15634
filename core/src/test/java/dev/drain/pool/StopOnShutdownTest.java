package dev.drain.pool;

import static dev.drain.pool.Workloads.assertNoThreadsLeft;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.drain.pool.SettlementTest.RecordingSettler;
import dev.drain.support.Bounds;
import dev.drain.support.Call;
import dev.drain.support.ChildJvm;
import dev.drain.support.Spawner;
import dev.drain.support.ThreadKind;
import dev.drain.support.Waits;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * WP-27: the JVM's shutdown as a graceful stop with a deadline. In this JVM, the hook's body runs
 * on a thread of the test's ({@link StopOnShutdown#onShutdown()}); in a JVM of its own,
 * {@link ServiceMain} gets a real SIGTERM, and its witness file says what was done and what was
 * acknowledged. On both intakes, with owners of both kinds in this JVM.
 */
@ParameterizedClass
@EnumSource(WorkerPool.IntakeKind.class)
class StopOnShutdownTest {
    private final WorkerPool.IntakeKind intake;

    @RegisterExtension
    final Spawner spawn = new Spawner();

    @TempDir
    Path dir;

    StopOnShutdownTest(WorkerPool.IntakeKind intake) {
        this.intake = intake;
    }

    /** {@return the hook of {@code shutdown}, run on a platform thread of the test's, once it has stopped {@code pool}'s run} */
    private Call<Void> hookStopping(StopOnShutdown shutdown, WorkerPool<?, ?> pool) {
        Call<Void> hook = spawn.use(ThreadKind.PLATFORM).run("hook", shutdown::onShutdown);
        Waits.until("the hook stops the run", () -> pool.toString().endsWith(", STOPPING]"));
        return hook;
    }

    /** {@return a pool of two workers, on this test's intake, whose handlers wait at {@code gate}} */
    private WorkerPool<Integer, Void> gated(Workloads.Gate gate) {
        return WorkerPool.<Integer>forEach(item -> gate.pass()).intake(intake).workers(2).build();
    }

    /** Drains {@code pool} over an endless source through {@code shutdown}, on an owner of {@code kind}, once both its workers wait at {@code gate}. */
    private Call<RunOutcome<Integer>> drainedUntilBothWait(ThreadKind kind, StopOnShutdown shutdown, WorkerPool<Integer, Void> pool,
                                                          Workloads.Gate gate) throws InterruptedException {
        Call<RunOutcome<Integer>> owner = spawn.use(kind).call("owner", () -> shutdown.drain(pool, Workloads.CountingSource.endless()));
        gate.awaitArrivals(2);
        return owner;
    }

    /**
     * WP-27: the hook stops the run being drained and holds its thread until the run has ended,
     * every success acknowledged by the store, and the registration is closed: the hook has not
     * returned while handlers are held, nor after the run ended {@code Completed(stopRequested)}
     * while the registration was open; it returns once it is closed.
     */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void theHookStopsTheRunAndHoldsUntilItsEnd(ThreadKind kind) throws InterruptedException {
        Workloads.Gate gate = new Workloads.Gate();
        RecordingSettler settler = new RecordingSettler();
        WorkerPool<Integer, Void> pool = WorkerPool.<Integer>forEach(item -> gate.pass()).intake(intake).workers(2)
                .settler(settler).build();
        StopOnShutdown shutdown = StopOnShutdown.install(Bounds.WAIT.multipliedBy(2));
        try {
            Call<RunOutcome<Integer>> owner = drainedUntilBothWait(kind, shutdown, pool, gate);
            Call<Void> hook = hookStopping(shutdown, pool);
            assertThat(hook.isDone()).as("the hook returned while the run's handlers were held").isFalse();
            gate.open();
            assertThat(owner.value()).isEqualTo(new RunOutcome.Completed<Integer>(true));
            assertThat(settler.offered()).as("every success acknowledged when the run ended")
                    .allMatch(s -> s instanceof Settlement.Succeeded<Integer>).isNotEmpty();
            assertThat(shutdown.received()).isTrue();
            assertThat(hook.isDone()).as("the hook returned before the registration was closed").isFalse();
            shutdown.close();
            hook.value();
        } finally {
            shutdown.close();
        }
        assertNoThreadsLeft(pool);
    }

    /**
     * WP-27, WP-24: a handler that ignores every interrupt cannot hold the hook past
     * {@code deadline + grace}: the run is aborted at the deadline, and the hook returns while
     * that attempt still runs; the run then ends {@code Aborted} with {@code deadlinePassed} once
     * the handler lets go.
     */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void aStubbornHandlerCannotHoldTheHookPastDeadlinePlusGrace(ThreadKind kind) throws InterruptedException {
        CountDownLatch release = new CountDownLatch(1);
        CountDownLatch started = new CountDownLatch(1);
        AtomicInteger interrupts = new AtomicInteger();
        Handler<Integer, String> stubborn = Workloads.swallowing(Integer.MAX_VALUE, interrupts, release);
        WorkerPool<Integer, String> pool = WorkerPool.<Integer, String>builder(item -> {
            started.countDown();
            return stubborn.handle(item);
        }).intake(intake).workers(1).itemTimeout(Bounds.WAIT.multipliedBy(2)).build();
        Duration deadline = Duration.ofMillis(100);
        Duration grace = Duration.ofMillis(100);
        try (StopOnShutdown shutdown = StopOnShutdown.install(deadline, grace)) {
            Call<RunOutcome<Integer>> owner = spawn.use(kind).call("owner",
                    () -> shutdown.drain(pool, Workloads.CountingSource.of(1)));
            assertThat(started.await(Bounds.WAIT.toNanos(), TimeUnit.NANOSECONDS)).as("the item's attempt runs").isTrue();
            long asked = System.nanoTime();
            spawn.use(ThreadKind.PLATFORM).run("hook", shutdown::onShutdown).value();
            assertThat(Duration.ofNanos(System.nanoTime() - asked)).as("the hook held the JVM until deadline + grace")
                    .isGreaterThanOrEqualTo(deadline.plus(grace));
            Waits.until("the abort's interrupt reached the handler", () -> interrupts.get() > 0);
            assertThat(owner.isDone()).as("the run ended, with its handler still running").isFalse();
            release.countDown();
            RunOutcome<Integer> outcome = Objects.requireNonNull(owner.value());
            assertThat(outcome).isInstanceOf(RunOutcome.Aborted.class);
            assertThat(((RunOutcome.Aborted<Integer>) outcome).deadlinePassed()).isTrue();
        } finally {
            release.countDown();
        }
        assertNoThreadsLeft(pool);
    }

    /**
     * WP-27: a run drained after the shutdown began starts stopped and pulls nothing, so a service
     * loop that checks {@code received()} ends; the hook returns once the registration is closed.
     */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void aRunAfterTheShutdownBeganPullsNothing(ThreadKind kind) {
        AtomicInteger done = new AtomicInteger();
        WorkerPool<Integer, Void> pool = WorkerPool.<Integer>forEach(item -> done.incrementAndGet()).intake(intake).build();
        StopOnShutdown shutdown = StopOnShutdown.install(Bounds.WAIT);
        try {
            Call<Void> hook = spawn.use(ThreadKind.PLATFORM).run("hook", shutdown::onShutdown);
            Waits.until("the shutdown began", shutdown::received);
            Call<RunOutcome<Integer>> owner = spawn.use(kind).call("owner",
                    () -> shutdown.drain(pool, Workloads.CountingSource.endless()));
            assertThat(owner.value()).isEqualTo(new RunOutcome.Completed<Integer>(true));
            assertThat(done).hasValue(0);
            shutdown.close();
            hook.value(); // the registration is closed: the hook lets the JVM go
        } finally {
            shutdown.close();
        }
        assertNoThreadsLeft(pool);
    }

    /**
     * WP-27: a second drain of a pool that is running through the registration is refused (a pool
     * runs once) and leaves the running one known to the hook: the hook still stops it.
     */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void aRefusedSecondDrainLeavesTheRunningOneToTheHook(ThreadKind kind) throws InterruptedException {
        Workloads.Gate gate = new Workloads.Gate();
        WorkerPool<Integer, Void> pool = gated(gate);
        StopOnShutdown shutdown = StopOnShutdown.install(Bounds.WAIT.multipliedBy(2));
        try {
            Call<RunOutcome<Integer>> owner = drainedUntilBothWait(kind, shutdown, pool, gate);
            assertThatThrownBy(() -> shutdown.drain(pool, List.of(1))).isInstanceOf(IllegalStateException.class);
            Call<Void> hook = hookStopping(shutdown, pool);
            gate.open();
            assertThat(owner.value()).isEqualTo(new RunOutcome.Completed<Integer>(true));
            shutdown.close();
            hook.value(); // the run has ended and the registration is closed: the hook returns
        } finally {
            gate.open();
            shutdown.close();
        }
        assertNoThreadsLeft(pool);
    }

    /** WP-27, WP-16: a stream handed to a refused drain is closed, once, as the pool closes one it refuses. */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void aRefusedDrainClosesItsStream(ThreadKind kind) {
        AtomicInteger closes = new AtomicInteger();
        StopOnShutdown shutdown = StopOnShutdown.install(Bounds.WAIT);
        shutdown.close();
        WorkerPool<Integer, Void> pool = WorkerPool.<Integer>forEach(item -> { }).intake(intake).build();
        Call<RunOutcome<Integer>> owner = spawn.use(kind).call("owner",
                () -> shutdown.drain(pool, java.util.stream.Stream.of(1, 2, 3).onClose(closes::incrementAndGet)));
        assertThat(owner.thrown(IllegalStateException.class)).hasMessageContaining("closed");
        assertThat(closes).hasValue(1);
        assertThat(shutdown.received()).as("asked on another thread: the refusal let go of the registration's lock").isFalse();
    }

    /** WP-27: a closed registration refuses to drain, says why, and closing it again does nothing. */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void aClosedRegistrationRefusesToDrain(ThreadKind kind) {
        WorkerPool<Integer, Void> pool = WorkerPool.<Integer>forEach(item -> { }).intake(intake).build();
        StopOnShutdown shutdown = StopOnShutdown.install(Bounds.WAIT);
        shutdown.close();
        shutdown.close();
        Call<RunOutcome<Integer>> owner = spawn.use(kind).call("owner",
                () -> shutdown.drain(pool, Workloads.CountingSource.of(3)));
        assertThat(owner.thrown(IllegalStateException.class)).hasMessageContaining("closed");
        assertThatThrownBy(() -> StopOnShutdown.install(Duration.ofSeconds(-1))).isInstanceOf(IllegalArgumentException.class);
    }

    /**
     * WP-27: a registration closed while the hook waits for a run still running lets the hook
     * return as soon as that run ends (well before the deadline).
     */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void aHookClosedFirstReturnsWhenTheLastRunEnds(ThreadKind kind) throws InterruptedException {
        Workloads.Gate gate = new Workloads.Gate();
        WorkerPool<Integer, Void> pool = gated(gate);
        StopOnShutdown shutdown = StopOnShutdown.install(Bounds.WAIT.multipliedBy(4));
        try {
            Call<RunOutcome<Integer>> owner = drainedUntilBothWait(kind, shutdown, pool, gate);
            Call<Void> hook = hookStopping(shutdown, pool);
            shutdown.close();
            Waits.untilParked(hook.thread());
            assertThat(hook.isDone()).as("the hook returned while a run was still held").isFalse();
            gate.open();
            assertThat(owner.value()).isEqualTo(new RunOutcome.Completed<Integer>(true));
            hook.value(); // woken by the run's end, long before the deadline
        } finally {
            gate.open();
            shutdown.close();
        }
        assertNoThreadsLeft(pool);
    }

    /** WP-27, WP-16: a null pool is refused, and the stream handed over with it is closed. */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void aNullPoolIsRefusedAndItsStreamClosed(ThreadKind kind) {
        AtomicInteger closes = new AtomicInteger();
        try (StopOnShutdown shutdown = StopOnShutdown.install(Bounds.WAIT)) {
            @SuppressWarnings("NullAway") // the point: a caller that passes null
            Call<RunOutcome<Integer>> owner = spawn.use(kind).call("owner",
                    () -> shutdown.drain(null, java.util.stream.Stream.of(1, 2, 3).onClose(closes::incrementAndGet)));
            assertThat(owner.thrown(NullPointerException.class)).hasMessageContaining("pool");
        }
        assertThat(closes).hasValue(1);
    }

    /** WP-27: {@code install} registers the hook with the JVM, and {@code close} removes it. */
    @Test
    void installRegistersTheHookAndCloseRemovesIt() {
        StopOnShutdown shutdown = StopOnShutdown.install(Bounds.WAIT);
        try {
            assertThatThrownBy(() -> Runtime.getRuntime().addShutdownHook(shutdown.hook())).as("registered once installed")
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("previously registered");
        } finally {
            shutdown.close();
        }
        assertThat(Runtime.getRuntime().removeShutdownHook(shutdown.hook())).as("still registered after the close").isFalse();
    }

    /** WP-27: what a registration says of itself, and {@code received()}, before and after the shutdown begins. */
    @Test
    void aRegistrationSaysWhetherTheShutdownBegan() {
        StopOnShutdown shutdown = StopOnShutdown.install(Duration.ofSeconds(3), Duration.ofSeconds(2));
        try {
            assertThat(shutdown.received()).isFalse();
            assertThat(shutdown).hasToString("StopOnShutdown[deadline=PT3S, grace=PT2S, waiting, 0 running]");
        } finally {
            shutdown.close();
        }
        assertThat(shutdown).hasToString("StopOnShutdown[deadline=PT3S, grace=PT2S, waiting, 0 running, closed]");
        shutdown.onShutdown(); // closed, nothing running: returns at once
        assertThat(shutdown.received()).isTrue();
        assertThat(shutdown).hasToString("StopOnShutdown[deadline=PT3S, grace=PT2S, received, 0 running, closed]");
    }

    /**
     * WP-27, WP-22: SIGTERM to a running service (a JVM of its own) whose store takes 50 ms a
     * batch, so that items done and not yet acknowledged are always waiting: it exits by itself,
     * and every item whose work was done was acknowledged exactly once, none released, none done
     * twice.
     */
    @Test
    void aSigtermEndsTheServiceWithEveryDoneItemAcknowledged() throws IOException, InterruptedException {
        Witness witness = serve(Duration.ofSeconds(10), Duration.ofSeconds(1), -1, Duration.ofMillis(50));
        assertThat(witness.exitStatus()).as("exit status after SIGTERM (128 + 15)").isEqualTo(143);
        assertThat(witness.done()).as("items done").hasSizeGreaterThanOrEqualTo(20).doesNotHaveDuplicates();
        assertThat(witness.acked()).as("acknowledged, once each").doesNotHaveDuplicates()
                .containsExactlyInAnyOrderElementsOf(witness.done());
        assertThat(witness.released()).as("released").isEmpty();
    }

    /**
     * WP-27, WP-24: SIGTERM to a service whose item 3 ignores every interrupt: the stop becomes an
     * abort at the deadline, the process exits by itself once the grace has passed, and nothing
     * done is lost: every item done was acknowledged or released (once), item 3 neither done nor
     * acknowledged.
     */
    @Test
    void aSigtermPastAStubbornHandlerExitsAtDeadlinePlusGrace() throws IOException, InterruptedException {
        Witness witness = serve(Duration.ofMillis(300), Duration.ofMillis(300), 3, Duration.ZERO);
        assertThat(witness.exitStatus()).as("exit status after SIGTERM (128 + 15)").isEqualTo(143);
        assertThat(witness.done()).doesNotHaveDuplicates().doesNotContain(3);
        List<Integer> settled = new ArrayList<>(witness.acked());
        settled.addAll(witness.released());
        assertThat(settled).as("acknowledged or released, once each").doesNotHaveDuplicates()
                .containsAll(witness.done()).doesNotContain(3);
    }

    /** What a service's witness file said, and how its process ended. */
    private record Witness(int exitStatus, List<Integer> done, List<Integer> acked, List<Integer> released) {}

    /**
     * Starts {@link ServiceMain} on this test's intake, waits until it has done 20 items, sends it
     * SIGTERM, and waits (bounded) for it to exit; {@return what its witness file says}
     */
    private Witness serve(Duration deadline, Duration grace, int stubborn, Duration storeTakes)
            throws IOException, InterruptedException {
        Path file = dir.resolve("witness.txt");
        Files.createFile(file);
        Process child = ChildJvm.start(List.of("--enable-preview"), dir.resolve("out.txt"), dir.resolve("err.txt"),
                ServiceMain.class, file.toString(), intake.name(), Long.toString(deadline.toMillis()),
                Long.toString(grace.toMillis()), Integer.toString(stubborn), Long.toString(storeTakes.toMillis()));
        ChildJvm.sigtermOnceReady(child, () -> Waits.until("the service has done 20 items",
                () -> lines(file, "done ").size() >= 20 || !child.isAlive()), Bounds.WAIT, dir.resolve("err.txt"));
        return new Witness(child.exitValue(), lines(file, "done "), lines(file, "ack "), lines(file, "release "));
    }

    /** The items of the lines of {@code file} that start with {@code prefix}. */
    private static List<Integer> lines(Path file, String prefix) {
        List<Integer> items = new ArrayList<>();
        for (String line : read(file).lines().toList()) {
            if (line.startsWith(prefix)) {
                items.add(Integer.parseInt(line.substring(prefix.length()).strip()));
            }
        }
        return items;
    }

    private static String read(Path file) {
        try {
            return Files.readString(file);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
