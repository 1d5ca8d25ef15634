package dev.drain.queue;

import static dev.drain.queue.Queues.blockedGetter;
import static dev.drain.queue.Queues.blockedJoiner;
import static dev.drain.queue.Queues.blockedPutter;
import static dev.drain.queue.Queues.underLock;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatNoException;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.drain.support.Call;
import dev.drain.support.Spawner;
import dev.drain.support.ThreadKind;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The checks that CPython's own suite leaves implicit, from the probes run on CPython 3.13.0
 * (the probes of specs/probes.md): the in-transit cases (C3-C9), the counter clamp (B2), an
 * immediate shutdown after a graceful one (A1), asyncio's single-check {@code join()}, and the order
 * of the checks in {@code putNowait}, {@code getNowait} and {@code put}.
 *
 * <p>A waiter "in transit" (woken, not yet running: a resolved future whose task has not been
 * scheduled) is a thread woken inside {@link Queues#underLock}: it cannot run until every step
 * there is done. Python's {@code task.cancel()} is {@link Thread#interrupt()}. The order in which
 * threads woken together run again (CPython: joiners, then getters, then putters) is not a Java
 * guarantee, so no check here depends on it.
 */
class SupplementaryChecksTest {
    static Stream<Arguments> everyKind() {
        return Stream.of(QueueKind.values()).flatMap(kind ->
                Stream.of(ThreadKind.values()).map(threads -> Arguments.of(kind, threads)));
    }

    @RegisterExtension
    final Spawner spawn = new Spawner();

    // ---- in transit ----------------------------------------------------------------------------

    /**
     * SQ-12 (probe C3): a getter woken by a put loses that item to an immediate shutdown that
     * drains it before the getter runs, and throws QueueShutDown like the getter behind it.
     */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void inTransitGetterLosesItemToImmediateShutdown(ThreadKind threads) {
        spawn.use(threads);
        ShutdownQueue<Integer> q = ShutdownQueue.fifo(0);
        Call<Integer> woken = blockedGetter(spawn, q, "getter 1");
        Call<Integer> behind = blockedGetter(spawn, q, "getter 2");

        underLock(q, () -> {
            q.putNowait(7); // wakes getter 1
            assertThat(q.shutdown(true)).containsExactly(7);
        });

        woken.thrown(QueueShutDown.class);
        behind.thrown(QueueShutDown.class);
        assertThat(q.unfinishedTasks()).isZero();
    }

    /** SQ-12 (probe C4): a getter woken by a put still takes that item when a graceful shutdown comes before it runs. */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void inTransitGetterKeepsItemOnGracefulShutdown(ThreadKind threads) {
        spawn.use(threads);
        ShutdownQueue<Integer> q = ShutdownQueue.fifo(0);
        Call<Integer> woken = blockedGetter(spawn, q, "getter");

        underLock(q, () -> {
            q.putNowait(7); // wakes the getter
            q.shutdown(false);
        });

        assertThat(woken.value()).isEqualTo(7);
        assertThat(q.unfinishedTasks()).isEqualTo(1);
    }

    /**
     * SQ-12 (probe C5): a putter woken by a get throws QueueShutDown when a shutdown comes before it
     * runs, like the putter behind it, and the slot it was woken for stays empty.
     */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void inTransitPutterLosesSlotToShutdown(ThreadKind threads) throws Exception {
        spawn.use(threads);
        ShutdownQueue<Integer> q = ShutdownQueue.fifo(1);
        q.putNowait(1);
        Call<Void> woken = blockedPutter(spawn, q, "putter 1", 2);
        Call<Void> behind = blockedPutter(spawn, q, "putter 2", 3);

        underLock(q, () -> {
            assertThat(q.getNowait()).isEqualTo(1); // wakes putter 1
            q.shutdown(false);
        });

        woken.thrown(QueueShutDown.class);
        behind.thrown(QueueShutDown.class);
        assertThat(q.qsize()).isZero();
        assertThat(q.unfinishedTasks()).isEqualTo(1);
    }

    /** Where a waiter blocks, for the checks that treat getters and putters alike. */
    enum BlockedIn {
        GET,
        PUT;

        /** {@return a new queue on which this method blocks: empty for get, full (of one) for put} */
        ShutdownQueue<Integer> queue() throws Exception {
            ShutdownQueue<Integer> q = ShutdownQueue.fifo(1);
            if (this == PUT) {
                q.putNowait(0);
            }
            return q;
        }

        /** Starts a call of this method on {@code q}, made by {@link #queue()}, and returns once it waits in line. */
        Call<?> start(Spawner spawn, ShutdownQueue<Integer> q, String name) {
            return switch (this) {
                case GET -> blockedGetter(spawn, q, name);
                case PUT -> blockedPutter(spawn, q, name, 1);
            };
        }
    }

    static Stream<Arguments> getAndPutOnEachThreadKind() {
        return Stream.of(BlockedIn.values()).flatMap(blockedIn ->
                Stream.of(ThreadKind.values()).map(threads -> Arguments.of(blockedIn, threads)));
    }

    /**
     * SQ-07 (probes C1, C2; gh-117531): a graceful shutdown wakes every blocked getter, or every
     * blocked putter, not just the first, and each throws QueueShutDown.
     */
    @ParameterizedTest
    @MethodSource("getAndPutOnEachThreadKind")
    void gracefulShutdownWakesEveryWaiter(BlockedIn blockedIn, ThreadKind threads) throws Exception {
        spawn.use(threads);
        ShutdownQueue<Integer> q = blockedIn.queue();
        List<Call<?>> waiters = List.of(
                blockedIn.start(spawn, q, "waiter 1"),
                blockedIn.start(spawn, q, "waiter 2"),
                blockedIn.start(spawn, q, "waiter 3"));

        q.shutdown(false);

        assertThat(Queues.endings(waiters)).containsOnly("QueueShutDown");
    }

    /**
     * SQ-14 (probes C6, C9): a getter or putter that a shutdown woke and that is interrupted
     * before it runs throws InterruptedException, not QueueShutDown, and clears its interrupt
     * status.
     */
    @ParameterizedTest
    @MethodSource("getAndPutOnEachThreadKind")
    void interruptAfterShutdownWinsOverShutdown(BlockedIn blockedIn, ThreadKind threads) throws Exception {
        spawn.use(threads);
        ShutdownQueue<Integer> q = blockedIn.queue();
        Call<?> waiter = blockedIn.start(spawn, q, "waiter");

        underLock(q, () -> {
            q.shutdown(false); // wakes the waiter
            waiter.thread().interrupt();
        });

        waiter.thrown(InterruptedException.class);
        assertThat(waiter.interruptStatusAtEnd()).as("interrupt status at the end").isFalse();
    }

    /**
     * SQ-14 (probes C7, C8): a getter woken by a put and interrupted before it runs passes its
     * wake-up on, so the getter behind it receives the item, with or without a graceful shutdown
     * in between.
     */
    @ParameterizedTest(name = "shutdown in between: {0}, {1} threads")
    @MethodSource("withAndWithoutShutdownOnEachThreadKind")
    void interruptedInTransitGetterPassesItemOn(boolean shutdownInBetween, ThreadKind threads) {
        spawn.use(threads);
        ShutdownQueue<Integer> q = ShutdownQueue.fifo(0);
        Call<Integer> woken = blockedGetter(spawn, q, "getter 1");
        Call<Integer> behind = blockedGetter(spawn, q, "getter 2");

        underLock(q, () -> {
            q.putNowait(7); // wakes getter 1
            if (shutdownInBetween) {
                q.shutdown(false);
            }
            woken.thread().interrupt();
        });

        woken.thrown(InterruptedException.class);
        assertThat(behind.value()).isEqualTo(7);
    }

    static Stream<Arguments> withAndWithoutShutdownOnEachThreadKind() {
        return Stream.of(false, true).flatMap(shutdown ->
                Stream.of(ThreadKind.values()).map(threads -> Arguments.of(shutdown, threads)));
    }

    // ---- unfinished tasks and join -------------------------------------------------------------

    /**
     * SQ-08 (probe B2): an immediate shutdown of items already marked done drains them without
     * taking the unfinished count below zero, so join() returns and taskDone() still underflows.
     */
    @ParameterizedTest
    @MethodSource("everyKind")
    void immediateShutdownClampsTheCountAtZero(QueueKind kind, ThreadKind threads) throws Exception {
        spawn.use(threads);
        ShutdownQueue<Integer> q = kind.create(0);
        q.putNowait(2);
        q.putNowait(1);
        q.taskDone(); // misuse: marked done before anyone took them
        q.taskDone();

        assertThat(q.shutdown(true)).containsExactlyElementsOf(kind.getOrder(List.of(2, 1)));

        assertThat(q.unfinishedTasks()).isZero();
        spawn.run("join", q::join).value();
        assertThatThrownBy(q::taskDone).isInstanceOf(IllegalStateException.class);
    }

    /**
     * SQ-09 (probe A1): an immediate shutdown after a graceful one drains the items left and
     * releases the join() that the graceful one left waiting.
     */
    @ParameterizedTest
    @MethodSource("everyKind")
    void immediateShutdownAfterGracefulReleasesJoin(QueueKind kind, ThreadKind threads) throws Exception {
        spawn.use(threads);
        ShutdownQueue<Integer> q = kind.create(0);
        q.putNowait(2);
        q.putNowait(1);
        q.shutdown(false);
        q.shutdown(false);
        assertThat(q.qsize()).isEqualTo(2);
        assertThat(q.unfinishedTasks()).isEqualTo(2);
        Call<Void> joiner = blockedJoiner(spawn, q, "joiner");

        assertThat(q.shutdown(true)).containsExactlyElementsOf(kind.getOrder(List.of(2, 1)));

        joiner.value();
        assertThat(q.qsize()).isZero();
        assertThat(q.unfinishedTasks()).isZero();
        assertThatNoException().isThrownBy(() -> q.shutdown(false));
        assertThatThrownBy(q::taskDone).isInstanceOf(IllegalStateException.class);
    }

    /**
     * SQ-11 (asyncio's single-check join, quirk 6 of specs/probes.md): a join() released by the count
     * reaching zero returns even though a put raised the count again before it ran.
     */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void joinReturnsOnceCountHasBeenZero(ThreadKind threads) throws Exception {
        spawn.use(threads);
        ShutdownQueue<Integer> q = ShutdownQueue.fifo(0);
        q.putNowait(1);
        Call<Void> joiner = blockedJoiner(spawn, q, "joiner");

        underLock(q, () -> {
            q.getNowait();
            q.taskDone(); // count 1 -> 0: releases the joiner
            q.putNowait(2); // count 0 -> 1 before the joiner runs
        });

        joiner.value();
        assertThat(q.unfinishedTasks()).isEqualTo(1);
    }

    // ---- order of the checks -------------------------------------------------------------------

    /** SQ-02 (probe D): putNowait on a queue that is both full and shut down throws QueueShutDown, not QueueFull. */
    @ParameterizedTest
    @EnumSource(QueueKind.class)
    void putNowaitChecksShutdownBeforeFull(QueueKind kind) throws Exception {
        ShutdownQueue<Integer> q = kind.create(1);
        q.putNowait(1);
        q.shutdown();

        assertThat(q.full()).isTrue();
        assertThatThrownBy(() -> q.putNowait(2)).isInstanceOf(QueueShutDown.class);
    }

    /** SQ-03 (probe D): getNowait on a shut-down queue returns the items left, in the queue's order, and throws QueueShutDown only once it is empty. */
    @ParameterizedTest
    @EnumSource(QueueKind.class)
    void getNowaitChecksForAnItemBeforeShutdown(QueueKind kind) throws Exception {
        ShutdownQueue<Integer> q = kind.create(0);
        q.putNowait(2);
        q.putNowait(1);
        q.shutdown();

        List<Integer> inGetOrder = kind.getOrder(List.of(2, 1));
        assertThat(q.getNowait()).isEqualTo(inGetOrder.get(0));
        assertThat(q.getNowait()).isEqualTo(inGetOrder.get(1));
        assertThatThrownBy(q::getNowait).isInstanceOf(QueueShutDown.class);
    }

    /** SQ-04 (probe D): put on an unbounded queue that is shut down throws QueueShutDown and adds nothing. */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void unboundedPutAfterShutdownThrows(ThreadKind threads) {
        spawn.use(threads);
        ShutdownQueue<Integer> q = ShutdownQueue.fifo(0);
        q.shutdown();

        spawn.run("put", () -> q.put(1)).thrown(QueueShutDown.class);
        assertThat(q.qsize()).isZero();
        assertThat(q.unfinishedTasks()).isZero();
    }
}
