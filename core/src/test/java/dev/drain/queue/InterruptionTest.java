package dev.drain.queue;

import static org.assertj.core.api.Assertions.assertThat;

import com.google.errorprone.annotations.Immutable;
import dev.drain.support.Bounds;
import dev.drain.support.Call;
import dev.drain.support.Spawner;
import dev.drain.support.ThreadKind;
import dev.drain.support.Waits;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * SQ-13 and SQ-14: an interrupt is Python's task cancellation. Every blocking method, on both
 * kinds of thread, pre-interrupted and interrupted while blocked; then the interrupts that race
 * with a wake-up.
 */
@ParameterizedClass
@EnumSource(ThreadKind.class)
class InterruptionTest {
    private final ThreadKind threads;

    InterruptionTest(ThreadKind threads) {
        this.threads = threads;
    }

    @RegisterExtension
    final Spawner spawn = new Spawner();

    /** Each blocking method, with a queue on which it blocks and the counter of its waiters. */
    enum Blocking {
        GET(Blocking::emptyQueue, q -> q.get(), ShutdownQueue::waitingGetters),
        GET_TIMED(Blocking::emptyQueue, q -> q.get(Bounds.WAIT), ShutdownQueue::waitingGetters),
        PUT(Blocking::fullQueue, q -> { q.put(2); return null; }, ShutdownQueue::waitingPutters),
        PUT_TIMED(Blocking::fullQueue, q -> { q.put(2, Bounds.WAIT); return null; }, ShutdownQueue::waitingPutters),
        JOIN(Blocking::fullQueue, q -> { q.join(); return null; }, ShutdownQueue::waitingJoiners),
        JOIN_TIMED(Blocking::fullQueue, q -> q.join(Bounds.WAIT), ShutdownQueue::waitingJoiners);

        @Immutable
        interface Method {
            @Nullable Object call(ShutdownQueue<Integer> q) throws Exception;
        }

        @Immutable
        interface QueueFactory {
            ShutdownQueue<Integer> create() throws Exception;
        }

        @Immutable
        interface Counter {
            int count(ShutdownQueue<Integer> q);
        }

        final QueueFactory blockingQueue;
        final Method method;
        final Counter waiters;

        Blocking(QueueFactory blockingQueue, Method method, Counter waiters) {
            this.blockingQueue = blockingQueue;
            this.method = method;
            this.waiters = waiters;
        }

        static ShutdownQueue<Integer> emptyQueue() {
            return new ShutdownQueue<>(1);
        }

        /** Full, with one unfinished task: put blocks, and so does join. */
        static ShutdownQueue<Integer> fullQueue() throws Exception {
            ShutdownQueue<Integer> q = new ShutdownQueue<>(1);
            q.putNowait(1);
            return q;
        }
    }

    /** SQ-13: a blocking method called with the interrupt status set throws at once, clears it, and changes nothing. */
    @ParameterizedTest
    @EnumSource(Blocking.class)
    void preInterruptedCallThrows(Blocking blocking) throws Exception {
        ShutdownQueue<Integer> q = blocking.blockingQueue.create();
        String before = q.toString();
        Call<Object> call = spawn.use(threads).call("pre-interrupted " + blocking, () -> {
            Thread.currentThread().interrupt();
            return blocking.method.call(q);
        });
        call.thrown(InterruptedException.class);
        assertThat(call.interruptStatusAtEnd()).isFalse();
        assertThat(q).hasToString(before);
    }

    /** SQ-13: a pre-interrupted get throws even when an item is there to take (java.util.concurrent's rule). */
    @Test
    void preInterruptedGetThrowsEvenWithAnItem() throws Exception {
        ShutdownQueue<Integer> q = new ShutdownQueue<>(0);
        q.putNowait(1);
        Call<Integer> call = spawn.use(threads).call("pre-interrupted get", () -> {
            Thread.currentThread().interrupt();
            return q.get();
        });
        call.thrown(InterruptedException.class);
        assertThat(q.qsize()).isOne();
    }

    /** SQ-13: a caller interrupted while blocked throws, leaves the line, clears its status, and changes nothing else. */
    @ParameterizedTest
    @EnumSource(Blocking.class)
    void interruptedWhileBlockedThrows(Blocking blocking) throws Exception {
        ShutdownQueue<Integer> q = blocking.blockingQueue.create();
        String before = q.toString();
        Call<Object> call = spawn.use(threads).call("blocked " + blocking, () -> blocking.method.call(q));
        Waits.until("the call waits in line", () -> blocking.waiters.count(q) == 1);
        call.thread().interrupt();
        call.thrown(InterruptedException.class);
        assertThat(call.interruptStatusAtEnd()).isFalse();
        assertThat(blocking.waiters.count(q)).isZero();
        assertThat(q).hasToString(before);
    }

    /** SQ-14 (C7): a getter woken by a put and interrupted before it runs passes the item on to the next getter. */
    @Test
    void wokenGetterPassesItemOn() throws Exception {
        ShutdownQueue<Integer> q = new ShutdownQueue<>(0);
        Call<Integer> first = spawn.use(threads).call("getter-1", q::get);
        Waits.until("getter-1 waits", () -> q.waitingGetters() == 1);
        Call<Integer> second = spawn.call("getter-2", q::get);
        Waits.until("getter-2 waits", () -> q.waitingGetters() == 2);
        Queues.underLock(q, () -> {
            q.putNowait(7); // wakes getter-1 ...
            first.thread().interrupt(); // ... which is cancelled before it runs
        });
        first.thrown(InterruptedException.class);
        assertThat(second.value()).isEqualTo(7);
    }

    /** SQ-14: a putter woken by a get and interrupted before it runs passes the free slot on to the next putter. */
    @Test
    void wokenPutterPassesSlotOn() throws Exception {
        ShutdownQueue<Integer> q = new ShutdownQueue<>(1);
        q.putNowait(1);
        Call<Void> first = spawn.use(threads).run("putter-1", () -> q.put(2));
        Waits.until("putter-1 waits", () -> q.waitingPutters() == 1);
        Call<Void> second = spawn.run("putter-2", () -> q.put(3));
        Waits.until("putter-2 waits", () -> q.waitingPutters() == 2);
        Queues.underLock(q, () -> {
            assertThat(q.getNowait()).isEqualTo(1); // wakes putter-1 ...
            first.thread().interrupt(); // ... which is cancelled before it runs
        });
        first.thrown(InterruptedException.class);
        second.value();
        assertThat(q.itemsInGetOrder()).containsExactly(3);
    }

    /**
     * SQ-14, SQ-06: a getter woken and then interrupted before it runs still runs in its turn,
     * after the getter woken before it: it finds the queue empty and wakes nobody, so the next
     * getter stays first in line (CPython, scenario c7-cancelled-in-transit-getter-runs-in-its-turn).
     */
    @Test
    void wokenThenInterruptedGetterRunsInItsTurn() throws Exception {
        ShutdownQueue<Integer> q = new ShutdownQueue<>(0);
        List<Call<Integer>> getters = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            getters.add(spawn.use(threads).call("getter-" + i, q::get));
            int waiting = i + 1;
            Waits.until("getter-" + i + " waits", () -> q.waitingGetters() == waiting);
        }
        Queues.underLock(q, () -> {
            q.putNowait(1); // wakes getter-0
            q.putNowait(2); // wakes getter-1
            assertThat(q.getNowait()).isEqualTo(1); // a caller that was not waiting takes 1
            getters.get(1).thread().interrupt(); // getter-1 is cancelled before it runs
        });
        assertThat(getters.get(0).value()).isEqualTo(2);
        getters.get(1).thrown(InterruptedException.class);
        Waits.until("getter-2 and getter-3 wait", () -> q.waitingGetters() == 2);
        q.putNowait(3);
        assertThat(getters.get(2).value()).as("the first in line gets the next item").isEqualTo(3);
        q.shutdown();
        getters.get(3).thrown(QueueShutDown.class);
    }

    /** SQ-14 (C6): a getter woken by a shutdown and interrupted before it runs throws InterruptedException, not QueueShutDown. */
    @Test
    void getterWokenByShutdownThenInterruptedIsCancelled() {
        ShutdownQueue<Integer> q = new ShutdownQueue<>(0);
        Call<Integer> getter = spawn.use(threads).call("getter", q::get);
        Waits.until("the getter waits", () -> q.waitingGetters() == 1);
        Queues.underLock(q, () -> {
            q.shutdown();
            getter.thread().interrupt();
        });
        getter.thrown(InterruptedException.class);
    }

    /** SQ-14 (C9): a putter woken by a shutdown and interrupted before it runs throws InterruptedException, not QueueShutDown. */
    @Test
    void putterWokenByShutdownThenInterruptedIsCancelled() throws Exception {
        ShutdownQueue<Integer> q = new ShutdownQueue<>(1);
        q.putNowait(1);
        Call<Void> putter = spawn.use(threads).run("putter", () -> q.put(2));
        Waits.until("the putter waits", () -> q.waitingPutters() == 1);
        Queues.underLock(q, () -> {
            q.shutdown(true);
            putter.thread().interrupt();
        });
        putter.thrown(InterruptedException.class);
    }

    /** SQ-14: a joiner released by the count reaching zero and interrupted before it runs throws InterruptedException. */
    @Test
    void releasedJoinerThenInterruptedIsCancelled() throws Exception {
        ShutdownQueue<Integer> q = new ShutdownQueue<>(0);
        q.putNowait(1);
        Call<Void> joiner = spawn.use(threads).run("joiner", q::join);
        Waits.until("the joiner waits", () -> q.waitingJoiners() == 1);
        Queues.underLock(q, () -> {
            q.shutdown(true); // count 1 -> 0: releases the joiner ...
            joiner.thread().interrupt(); // ... which is cancelled before it runs
        });
        joiner.thrown(InterruptedException.class);
        assertThat(q.unfinishedTasks()).isZero();
    }
}
