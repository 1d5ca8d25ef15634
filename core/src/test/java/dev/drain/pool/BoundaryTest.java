package dev.drain.pool;

import static org.assertj.core.api.Assertions.assertThat;

import dev.drain.support.Bounds;
import dev.drain.support.Call;
import dev.drain.support.Spawner;
import dev.drain.support.ThreadKind;
import dev.drain.support.Waits;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * WP-20: {@link Structured.Boundary}, the scope a run opens on its owner's thread, on its own: which
 * of an owner's open runs are newer than a given one, and when the JDK is closing a run's scope
 * under it. Each test opens boundaries on an owner thread of either kind, with no run behind them:
 * ending a run is only recorded.
 */
@SuppressWarnings("preview") // Structured.Boundary holds a StructuredTaskScope, a preview API in JDK 25
class BoundaryTest {
    private static final Structured.Threads THREADS = role -> Thread.ofPlatform().daemon(true).factory();

    @RegisterExtension
    final Spawner spawn = new Spawner();

    private final List<String> ended = new CopyOnWriteArrayList<>();

    private Structured.Boundary open(String name) {
        return Structured.Boundary.open(name, THREADS, () -> ended.add(name));
    }

    /** WP-20: closing an owner's older run ends every newer one that has not ended, newest first, and never itself or an older one. */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void closingAnOlderRunEndsTheNewerOnesNewestFirst(ThreadKind kind) {
        spawn.use(kind).run("owner", () -> {
            Structured.Boundary first = open("first");
            Structured.Boundary second = open("second");
            Structured.Boundary third = open("third");
            Structured.Boundary fourth = open("fourth");
            third.runEnded();
            first.endNewerRuns();
            assertThat(ended).containsExactly("fourth", "second");
            ended.clear();
            second.endNewerRuns();
            assertThat(ended).containsExactly("fourth");
            ended.clear();
            fourth.endNewerRuns();
            assertThat(ended).isEmpty();
            for (Structured.Boundary boundary : List.of(fourth, third, second, first)) {
                assertThat(Structured.Boundary.hasOpenRuns(Thread.currentThread())).isTrue();
                boundary.runEnded();
                boundary.awaitAll();
                boundary.close();
            }
            assertThat(Structured.Boundary.hasOpenRuns(Thread.currentThread())).as("a record left once every run ended").isFalse();
        }).value();
    }

    /** WP-20: closing the scope of an older run that has already ended still ends the newer runs first. */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void closingAnEndedOlderRunsScopeEndsTheNewerOnes(ThreadKind kind) {
        spawn.use(kind).run("owner", () -> {
            Structured.Boundary first = open("first");
            Structured.Boundary second = open("second");
            first.runEnded(); // its run ended by itself; its scope is still open, below the second's
            first.endNewerRuns();
            assertThat(ended).containsExactly("second");
            second.runEnded();
            for (Structured.Boundary boundary : List.of(second, first)) {
                boundary.awaitAll();
                boundary.close();
            }
        }).value();
    }

    /**
     * WP-20: once its owner has ended, the owner's newest open run is being closed under it, and
     * an older one is not; one whose run has ended is not either, and an older run's end leaves
     * the newer ones counted.
     */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void anEndedOwnerClosesItsNewestOpenRun(ThreadKind kind) {
        List<Structured.Boundary> opened = Objects.requireNonNull(spawn.use(kind).call("owner", () -> {
            Structured.Boundary older = open("older");
            Structured.Boundary middle = open("middle");
            Structured.Boundary newest = open("newest");
            middle.runEnded(); // an older run that ended: the two others still count
            return List.of(older, middle, newest);
        }).value());
        try {
            assertThat(opened).allSatisfy(boundary -> assertThat(boundary.owner().getState()).isEqualTo(Thread.State.TERMINATED));
            assertThat(opened.get(2).isClosedUnderIt()).as("the newest").isTrue();
            assertThat(opened.get(1).isClosedUnderIt()).as("an ended one").isFalse();
            assertThat(opened.get(0).isClosedUnderIt()).as("an older one").isFalse();
            opened.get(2).runEnded();
            assertThat(opened.get(0).isClosedUnderIt()).as("the older one, once it is the newest").isTrue();
        } finally {
            opened.forEach(Structured.Boundary::runEnded); // the JDK closed their scopes when the owner ended
        }
        assertThat(opened.get(0).isClosedUnderIt()).as("once its run has ended").isFalse();
        assertThat(Structured.Boundary.hasOpenRuns(opened.get(0).owner())).as("a record left for the ended owner").isFalse();
    }

    /** An owner thread and the one run it opened, which it ends and closes once {@code waiting} returns. */
    private record OneRun(Call<Void> owner, Structured.Boundary boundary) {}

    /** Starts an owner of {@code kind} that opens one run and then runs {@code waiting}; {@return both, once the run is open} */
    private OneRun ownerOfOneRun(ThreadKind kind, Spawner.Action waiting) throws InterruptedException {
        CountDownLatch opened = new CountDownLatch(1);
        List<Structured.Boundary> boundary = new CopyOnWriteArrayList<>();
        Call<Void> owner = spawn.use(kind).run("owner", () -> {
            Structured.Boundary only = open("only");
            boundary.add(only);
            opened.countDown();
            try {
                waiting.run();
            } finally {
                only.runEnded();
                only.awaitAll();
                only.close();
            }
        });
        assertThat(opened.await(Bounds.WAIT.toNanos(), TimeUnit.NANOSECONDS)).isTrue();
        return new OneRun(owner, boundary.getFirst());
    }

    /** WP-20: an owner that waits for something, as a consumer waits for a result, is not closing its run's scope. */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void aWaitingOwnerIsNotClosingItsRun(ThreadKind kind) throws InterruptedException {
        CountDownLatch done = new CountDownLatch(1);
        OneRun run = ownerOfOneRun(kind, () -> assertThat(done.await(Bounds.WAIT.toNanos(), TimeUnit.NANOSECONDS)).isTrue());
        Waits.untilParked(run.owner().thread());
        assertThat(run.boundary().isClosedUnderIt()).isFalse();
        done.countDown();
        run.owner().value();
    }

    /** WP-20: an owner that waits on a monitor (parked with no blocker, as in the JDK's forced close, but elsewhere) is not closing its run's scope. */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void anOwnerWaitingOnAMonitorIsNotClosingItsRun(ThreadKind kind) throws InterruptedException {
        Object monitor = new Object();
        boolean[] released = {false};
        OneRun run = ownerOfOneRun(kind, () -> {
            synchronized (monitor) {
                while (!released[0]) {
                    monitor.wait(); // WAITING with no blocker; the test notifies it
                }
            }
        });
        Thread owner = run.owner().thread();
        Waits.until("the owner waits on the monitor", () -> owner.getState() == Thread.State.WAITING);
        assertThat(LockSupport.getBlocker(owner)).isNull();
        assertThat(run.boundary().isClosedUnderIt()).isFalse();
        synchronized (monitor) {
            released[0] = true;
            monitor.notifyAll();
        }
        run.owner().value();
    }

    /** {@return whether {@code thread} is parked in the JDK's forced close of one of its scopes} */
    private static boolean inForcedClose(Thread thread) {
        return thread.getState() == Thread.State.WAITING && java.util.Arrays.stream(thread.getStackTrace()).anyMatch(frame ->
                frame.getClassName().equals("jdk.internal.misc.ThreadFlock$ThreadContainerImpl")
                        && frame.getMethodName().equals("tryClose"));
    }

    /** Opens a scope whose one subtask waits for {@code hold}, and leaves it open. */
    private static void leaveAScopeOpen(CountDownLatch hold) {
        var scope = java.util.concurrent.StructuredTaskScope.open();
        scope.fork(() -> hold.await(Bounds.WAIT.toNanos(), TimeUnit.NANOSECONDS));
    }

    /**
     * Starts an owner of {@code kind} that runs {@code body} (which leaves a scope waiting for
     * {@code hold} open, and throws the JDK's StructureViolationException when that scope is
     * closed by force), and {@return whether the boundary it opened was being closed under its run}
     * asked while the owner is parked in that forced close; {@code hold} opens after the look.
     */
    private boolean closedUnderItWhileForced(ThreadKind kind, CountDownLatch hold, Spawner.Action body)
            throws InterruptedException {
        CountDownLatch lookedAt = new CountDownLatch(1);
        Call<Void> owner = spawn.use(kind).run("owner", () -> {
            try {
                body.run();
                throw new AssertionError("the JDK closed a scope left open without a StructureViolationException");
            } catch (java.util.concurrent.StructureViolationException expected) {
                assertThat(lookedAt.await(Bounds.WAIT.toNanos(), TimeUnit.NANOSECONDS)).isTrue();
            }
        });
        Waits.until("the owner is parked in the JDK's forced close", () -> inForcedClose(owner.thread()));
        boolean closed = Objects.requireNonNull(boundaries.peekLast()).isClosedUnderIt();
        lookedAt.countDown();
        hold.countDown();
        owner.value();
        return closed;
    }

    /** The boundaries {@link #closedUnderItWhileForced}'s owners opened, newest last. */
    private final java.util.concurrent.ConcurrentLinkedDeque<Structured.Boundary> boundaries = new java.util.concurrent.ConcurrentLinkedDeque<>();

    /** Opens a boundary and records it; its run ends (recorded only) and it is closed once {@code after} has run. */
    private void withABoundary(Spawner.Action after) throws Exception {
        Structured.Boundary only = open("only");
        boundaries.add(only);
        try {
            after.run();
        } finally {
            only.runEnded();
            only.awaitAll();
            only.close();
        }
    }

    /**
     * WP-20: a scope left open inside a ScopedValue binding made after the run was opened is closed
     * by force when the binding ends, and that close is not the run's: the run is left alone.
     */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void aScopeLeftOpenInALaterBindingIsNotTheRuns(ThreadKind kind) throws InterruptedException {
        ScopedValue<String> key = ScopedValue.newInstance();
        CountDownLatch hold = new CountDownLatch(1);
        assertThat(closedUnderItWhileForced(kind, hold, () -> withABoundary(() -> {
            ScopedValue.where(key, "x").run(() -> leaveAScopeOpen(hold));
        }))).isFalse();
    }

    /** WP-20: a binding made before the run was opened, ending with the run's scope open, closes the run's scope by force. */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void aBindingAroundTheRunClosesItsScope(ThreadKind kind) throws InterruptedException {
        ScopedValue<String> key = ScopedValue.newInstance();
        CountDownLatch hold = new CountDownLatch(1);
        assertThat(closedUnderItWhileForced(kind, hold, () -> ScopedValue.where(key, "x").run(() -> {
            Structured.Boundary only = open("only");
            boundaries.add(only);
            only.fork("task", () -> {
                try {
                    boolean _ = hold.await(Bounds.WAIT.toNanos(), TimeUnit.NANOSECONDS);
                } catch (InterruptedException e) {
                    throw new AssertionError("the task was interrupted", e);
                } finally {
                    only.runEnded();
                }
            });
        }))).isTrue();
    }

    /**
     * WP-20: a scope opened and closed by a method entered after the run was opened, over a scope
     * left open inside it, is not the run's: its forced close leaves the run alone.
     */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void aScopeClosedByALaterMethodIsNotTheRuns(ThreadKind kind) throws InterruptedException {
        CountDownLatch hold = new CountDownLatch(1);
        assertThat(closedUnderItWhileForced(kind, hold, () -> withABoundary(() -> closeOverAScopeLeftOpen(hold)))).isFalse();
    }

    /** Opens a scope, leaves another open inside it, and closes the first: the JDK closes the second by force. */
    private static void closeOverAScopeLeftOpen(CountDownLatch hold) throws InterruptedException {
        try (var outer = java.util.concurrent.StructuredTaskScope.open()) {
            leaveAScopeOpen(hold);
            outer.join();
        }
    }

    /**
     * WP-14: an interrupt does not cut the owner's wait for a run's threads short: the wait ends
     * once every forked thread has finished, the interrupt is set again on return, and a second
     * wait returns at once.
     */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void anInterruptDoesNotCutTheWaitForTheRunsThreadsShort(ThreadKind kind) throws InterruptedException {
        CountDownLatch release = new CountDownLatch(1);
        CountDownLatch forked = new CountDownLatch(1);
        List<String> seen = new CopyOnWriteArrayList<>();
        Call<Void> owner = spawn.use(kind).run("owner", () -> {
            Structured.Boundary only = open("only");
            only.fork("task", () -> {
                forked.countDown();
                try {
                    if (!release.await(Bounds.WAIT.toNanos(), TimeUnit.NANOSECONDS)) {
                        throw new AssertionError("the task was never released");
                    }
                } catch (InterruptedException e) {
                    throw new AssertionError("the task was interrupted", e);
                }
                seen.add("task ended");
            });
            only.awaitAll();
            seen.add("waited, interrupted=" + Thread.interrupted());
            only.awaitAll();
            seen.add("waited again");
            only.runEnded();
            only.close();
        });
        assertThat(forked.await(Bounds.WAIT.toNanos(), TimeUnit.NANOSECONDS)).isTrue();
        Waits.untilParked(owner.thread());
        owner.thread().interrupt();
        Waits.until("the owner has taken the interrupt", () -> !owner.thread().isInterrupted());
        Waits.untilParked(owner.thread());
        assertThat(seen).as("the owner still waits").isEmpty();
        release.countDown();
        owner.value();
        assertThat(seen).containsExactly("task ended", "waited, interrupted=true", "waited again");
    }

    /** WP-20: a pool's run, whether it ends by itself or is abandoned, leaves no record of itself with the thread that ran it. */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void anEndedRunLeavesNoRecordWithItsOwner(ThreadKind kind) {
        spawn.use(kind).run("owner", () -> {
            Thread owner = Thread.currentThread();
            for (WorkerPool.IntakeKind intake : WorkerPool.IntakeKind.values()) {
                WorkerPool<Integer, String> pool = WorkerPool.<Integer, String>builder(Workloads.echo()).intake(intake).workers(2).queueSize(2).build();
                try (Results<Integer, String> results = pool.run(Workloads.CountingSource.of(5))) {
                    assertThat(Structured.Boundary.hasOpenRuns(owner)).as("while it runs").isTrue();
                    assertThat(Workloads.drain(results)).hasSize(5);
                    assertThat(Structured.Boundary.hasOpenRuns(owner)).as("once it has ended, " + intake).isFalse();
                }
                WorkerPool<Integer, String> abandoned = WorkerPool.<Integer, String>builder(Workloads.echo()).intake(intake).workers(2).queueSize(2).build();
                try (Results<Integer, String> results = abandoned.run(Workloads.CountingSource.endless())) {
                    results.next();
                }
                assertThat(Structured.Boundary.hasOpenRuns(owner)).as("once abandoned, " + intake).isFalse();
            }
        }).value();
    }
}
