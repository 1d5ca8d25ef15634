package dev.drain.foils;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.drain.queue.QueueShutDown;
import dev.drain.support.Call;
import dev.drain.support.Spawner;
import dev.drain.support.ThreadKind;
import dev.drain.support.Waits;
import java.util.List;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The Python 3.12 fallback, {@link ClosingQueue}, against the queue's clauses it can render (FB-nn
 * is SQ-nn as the fallback renders it; {@code specs/fallback-312.md}), and against the ones it
 * cannot: what 3.13's {@code shutdown()} removes. On platform and virtual threads.
 */
class ClosingQueueTest {
    @RegisterExtension
    final Spawner spawn = new Spawner();

    /** FB-01: items come out first in, first out, and a put waits while the queue holds its capacity. */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void firstInFirstOutWithinItsBound(ThreadKind kind) throws Exception {
        ClosingQueue<Integer> q = new ClosingQueue<>(2, 1);
        q.put(1);
        q.put(2);
        Call<Void> third = spawn.use(kind).run("producer", () -> q.put(3));
        Waits.untilParked(third.thread());
        assertThat(List.of(q.get(), q.get())).containsExactly(1, 2);
        third.value();
        assertThat(q.get()).isEqualTo(3);
    }

    /** FB-04: once closed, every put throws QueueShutDown. */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void putsAfterTheCloseAreRefused(ThreadKind kind) throws Exception {
        ClosingQueue<Integer> q = new ClosingQueue<>(4, 1);
        assertThat(q.isClosed()).as("open before close()").isFalse();
        q.close();
        spawn.use(kind).run("producer", () -> assertThatThrownBy(() -> q.put(1)).isInstanceOf(QueueShutDown.class))
                .value();
    }

    /** FB-05, FB-07: a close wakes the blocked consumers, which take what is left, then each its end marker. */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void consumersDrainThenEnd(ThreadKind kind) throws Exception {
        ClosingQueue<Integer> q = new ClosingQueue<>(4, 2);
        Call<Integer> first = spawn.use(kind).call("consumer-1", q::get);
        Waits.untilParked(first.thread());
        q.put(7);
        assertThat(first.value()).isEqualTo(7);
        q.put(8);
        q.close();
        Call<Integer> second = spawn.call("consumer-2", q::get);
        assertThat(second.value()).as("the item left is taken first").isEqualTo(8);
        assertThat(spawn.call("consumer-1 again", q::get).thrown(QueueShutDown.class)).isNotNull();
        assertThat(spawn.call("consumer-2 again", q::get).thrown(QueueShutDown.class)).isNotNull();
    }

    /** FB-07: a producer waiting for room is released by the close, only because the close interrupts it. */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void aBlockedProducerIsReleasedByInterrupt(ThreadKind kind) throws Exception {
        ClosingQueue<Integer> q = new ClosingQueue<>(1, 1);
        q.put(1);
        Call<Void> producer = spawn.use(kind).run("producer", () -> q.put(2));
        Waits.untilParked(producer.thread());
        Call<Void> closer = spawn.run("closer", q::close); // waits for room for its marker
        assertThat(producer.thrown(QueueShutDown.class)).isNotNull();
        assertThat(q.get()).isEqualTo(1);
        closer.value();
        assertThatThrownBy(q::get).isInstanceOf(QueueShutDown.class);
    }

    /** FB-07, what 3.13 removes: close() itself blocks while the queue is full, where shutdown() never blocks. */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void closeBlocksWhileTheQueueIsFull(ThreadKind kind) throws Exception {
        ClosingQueue<Integer> q = new ClosingQueue<>(1, 1);
        q.put(1);
        Call<Void> closer = spawn.use(kind).run("closer", q::close);
        Waits.untilParked(closer.thread()); // no room for the end marker: the close waits for a consumer
        assertThat(closer.isDone()).isFalse();
        assertThat(q.get()).isEqualTo(1);
        closer.value();
        assertThat(q.isClosed()).isTrue();
    }

    /** FB-09, what 3.13 removes: a consumer that asks again after its end marker waits forever (shown here with an interrupt). */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void askingAgainAfterTheEndWaitsForever(ThreadKind kind) throws Exception {
        ClosingQueue<Integer> q = new ClosingQueue<>(2, 1);
        q.close();
        assertThatThrownBy(q::get).isInstanceOf(QueueShutDown.class);
        Call<Integer> again = spawn.use(kind).call("consumer", q::get);
        Waits.untilParked(again.thread()); // a ShutdownQueue would throw QueueShutDown at once
        again.thread().interrupt();
        assertThat(again.thrown(InterruptedException.class)).isNotNull();
    }

    /** FB-09, what 3.13 removes: a second close is not idempotent; it queues a second set of end markers. */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void aSecondCloseQueuesMoreMarkers(ThreadKind kind) throws Exception {
        ClosingQueue<Integer> q = new ClosingQueue<>(4, 1);
        q.close();
        q.close();
        assertThatThrownBy(q::get).isInstanceOf(QueueShutDown.class);
        Call<Integer> again = spawn.use(kind).call("consumer", q::get);
        assertThat(again.thrown(QueueShutDown.class)).as("a second marker, meant for nobody").isNotNull();
    }

    /** FB-08: the nearest thing to an immediate shutdown hands back what was queued and ends the consumers. */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void drainAndCloseHandsBackTheItems(ThreadKind kind) throws Exception {
        ClosingQueue<Integer> q = new ClosingQueue<>(4, 1);
        q.put(1);
        q.put(2);
        assertThat(q.drainAndClose()).containsExactly(1, 2);
        assertThat(spawn.use(kind).call("consumer", q::get).thrown(QueueShutDown.class)).isNotNull();
    }

    /** FB-13: a blocked get or put that is interrupted throws InterruptedException and leaves the queue as it was. */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void interruptionEndsABlockedCall(ThreadKind kind) throws Exception {
        ClosingQueue<Integer> q = new ClosingQueue<>(1, 1);
        Call<Integer> getter = spawn.use(kind).call("consumer", q::get);
        Waits.untilParked(getter.thread());
        getter.thread().interrupt();
        assertThat(getter.thrown(InterruptedException.class)).isNotNull();
        q.put(1);
        Call<Void> putter = spawn.run("producer", () -> q.put(2));
        Waits.untilParked(putter.thread());
        putter.thread().interrupt();
        assertThat(putter.thrown(InterruptedException.class)).isNotNull();
        assertThat(q.get()).isEqualTo(1);
    }

    /** FB-16: null items are refused. */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    @SuppressWarnings("NullAway") // a null item on purpose
    void nullsAreRefused(ThreadKind kind) throws Exception {
        ClosingQueue<Integer> q = new ClosingQueue<>(1, 1);
        spawn.use(kind).run("producer", () -> assertThatThrownBy(() -> q.put(null))
                .isInstanceOf(NullPointerException.class)).value();
    }
}
