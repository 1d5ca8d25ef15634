package dev.drain.queue;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.drain.support.Bounds;
import dev.drain.support.Call;
import dev.drain.support.Spawner;
import dev.drain.support.ThreadKind;
import dev.drain.support.Waits;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;

/** SQ-15: the timed forms follow Python's {@code queue.Queue}. */
@ParameterizedClass
@EnumSource(ThreadKind.class)
class TimedOperationsTest {
    private static final Duration NEGATIVE = Duration.ofSeconds(-1);

    private final ThreadKind threads;

    TimedOperationsTest(ThreadKind threads) {
        this.threads = threads;
    }

    @RegisterExtension
    final Spawner spawn = new Spawner();

    private static ShutdownQueue<Integer> full() throws Exception {
        ShutdownQueue<Integer> q = new ShutdownQueue<>(1);
        q.putNowait(1);
        return q;
    }

    /** SQ-15: a timed get on an empty open queue throws QueueEmpty when the timeout passes, and leaves the line. */
    @Test
    void getTimesOutWithQueueEmpty() {
        ShutdownQueue<Integer> q = new ShutdownQueue<>(0);
        spawn.use(threads).call("timed getter", () -> q.get(Bounds.SHORT)).thrown(QueueEmpty.class);
        assertThat(q.waitingGetters()).isZero();
    }

    /** SQ-15: a timed put on a full open queue throws QueueFull when the timeout passes, and leaves the line. */
    @Test
    void putTimesOutWithQueueFull() throws Exception {
        ShutdownQueue<Integer> q = full();
        spawn.use(threads).run("timed putter", () -> q.put(2, Bounds.SHORT)).thrown(QueueFull.class);
        assertThat(q.waitingPutters()).isZero();
        assertThat(q.qsize()).isOne();
    }

    /** SQ-15: a timed join returns false when the timeout passes with tasks unfinished, and leaves the waiters. */
    @Test
    void joinTimesOutWithFalse() throws Exception {
        ShutdownQueue<Integer> q = full();
        assertThat(spawn.use(threads).call("timed joiner", () -> q.join(Bounds.SHORT)).value()).isFalse();
        assertThat(q.waitingJoiners()).isZero();
    }

    /** SQ-15: a zero timeout does not wait: it behaves as the Nowait form, with QueueEmpty or QueueFull. */
    @Test
    void zeroTimeoutDoesNotWait() throws Exception {
        ShutdownQueue<Integer> q = new ShutdownQueue<>(1);
        assertThatThrownBy(() -> q.get(Duration.ZERO)).isInstanceOf(QueueEmpty.class);
        q.put(1, Duration.ZERO);
        assertThatThrownBy(() -> q.put(2, Duration.ZERO)).isInstanceOf(QueueFull.class);
        assertThat(q.get(Duration.ZERO)).isOne();
        assertThat(q.waitingGetters() + q.waitingPutters()).isZero();
    }

    /** SQ-15: a negative timeout on an open queue throws IllegalArgumentException. */
    @Test
    void negativeTimeoutOnOpenQueueIsRejected() throws Exception {
        ShutdownQueue<Integer> q = new ShutdownQueue<>(0);
        assertThatThrownBy(() -> q.get(NEGATIVE)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> q.put(1, NEGATIVE)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> q.join(NEGATIVE)).isInstanceOf(IllegalArgumentException.class);
        assertThat(q.qsize()).isZero();
    }

    /** SQ-15: on a shut-down queue, QueueShutDown wins over an invalid (negative) timeout. */
    @Test
    void shutdownWinsOverArgumentCheck() throws Exception {
        ShutdownQueue<Integer> q = new ShutdownQueue<>(0);
        q.shutdown();
        assertThatThrownBy(() -> q.get(NEGATIVE)).isInstanceOf(QueueShutDown.class);
        assertThatThrownBy(() -> q.put(1, NEGATIVE)).isInstanceOf(QueueShutDown.class);
    }

    /** SQ-15, SQ-12 (probe C5): a timed putter woken for a free slot loses it to a graceful shutdown in the same step, and throws QueueShutDown. */
    @Test
    void aWokenTimedPutterLosesItsSlotToAShutdownInTheSameStep() throws Exception {
        ShutdownQueue<Integer> q = new ShutdownQueue<>(1);
        q.putNowait(1);
        Call<Void> putter = spawn.use(threads).run("timed putter", () -> q.put(2, Bounds.WAIT));
        Waits.until("the putter waits", () -> q.waitingPutters() == 1);
        q.atomically(queue -> {
            queue.getNowait(); // frees the slot and wakes the putter, which cannot run yet
            queue.shutdown();
        });
        assertThat(putter.thrown(QueueShutDown.class)).isNotNull();
        assertThat(q.qsize()).as("the slot stays empty").isZero();
    }

    /** SQ-15: a timed get woken for an item that another call takes first goes back to waiting for the rest of its timeout, as queue.Queue's does. */
    @Test
    void aTimedGetterWhoseItemIsTakenWaitsOut() throws Exception {
        ShutdownQueue<Integer> q = new ShutdownQueue<>(0);
        Call<Integer> getter = spawn.use(threads).call("timed getter", () -> q.get(Bounds.WAIT));
        Waits.until("the getter waits", () -> q.waitingGetters() == 1);
        q.atomically(queue -> {
            queue.putNowait(1); // wakes the getter, which cannot run yet
            queue.getNowait();  // and takes its item
        });
        Waits.until("the getter, finding the queue empty, waits again", () -> q.waitingGetters() == 1);
        q.putNowait(2);
        assertThat(getter.value()).isEqualTo(2);
    }

    /** SQ-15: a timed get on a shut-down queue that still has items returns one. */
    @Test
    void timedGetDrainsAfterShutdown() throws Exception {
        ShutdownQueue<Integer> q = full();
        q.shutdown();
        assertThat(q.get(Duration.ZERO)).isOne();
        assertThatThrownBy(() -> q.get(Bounds.WAIT)).isInstanceOf(QueueShutDown.class);
    }

    /** SQ-15: a shutdown while a timed get waits makes it throw QueueShutDown, not QueueEmpty. */
    @Test
    void shutdownWinsOverTimeoutForWaitingGetter() {
        ShutdownQueue<Integer> q = new ShutdownQueue<>(0);
        Call<Integer> getter = spawn.use(threads).call("timed getter", () -> q.get(Bounds.WAIT));
        Waits.until("the getter waits", () -> q.waitingGetters() == 1);
        q.shutdown();
        getter.thrown(QueueShutDown.class);
    }

    /** SQ-15: a shutdown while a timed put waits makes it throw QueueShutDown, not QueueFull. */
    @Test
    void shutdownWinsOverTimeoutForWaitingPutter() throws Exception {
        ShutdownQueue<Integer> q = full();
        Call<Void> putter = spawn.use(threads).run("timed putter", () -> q.put(2, Bounds.WAIT));
        Waits.until("the putter waits", () -> q.waitingPutters() == 1);
        q.shutdown();
        putter.thrown(QueueShutDown.class);
        assertThat(q.itemsInGetOrder()).containsExactly(1);
    }

    /** SQ-15: a timed get that is woken by a put within its timeout returns the item. */
    @Test
    void timedGetReceivesItem() throws Exception {
        ShutdownQueue<Integer> q = new ShutdownQueue<>(0);
        Call<Integer> getter = spawn.use(threads).call("timed getter", () -> q.get(Bounds.WAIT));
        Waits.until("the getter waits", () -> q.waitingGetters() == 1);
        q.putNowait(5);
        assertThat(getter.value()).isEqualTo(5);
    }

    /** SQ-15: a timed join that is released within its timeout returns true. */
    @Test
    void timedJoinIsReleased() throws Exception {
        ShutdownQueue<Integer> q = full();
        Call<Boolean> joiner = spawn.use(threads).call("timed joiner", () -> q.join(Bounds.WAIT));
        Waits.until("the joiner waits", () -> q.waitingJoiners() == 1);
        q.getNowait();
        q.taskDone();
        assertThat(joiner.value()).isTrue();
    }

    /** SQ-15: a timeout too large for nanoseconds is treated as practically forever, not as an overflow. */
    @Test
    void hugeTimeoutSaturates() throws Exception {
        ShutdownQueue<Integer> q = new ShutdownQueue<>(0);
        Call<Integer> getter = spawn.use(threads).call("getter", () -> q.get(Duration.ofSeconds(Long.MAX_VALUE)));
        Waits.until("the getter waits", () -> q.waitingGetters() == 1);
        q.putNowait(3);
        assertThat(getter.value()).isEqualTo(3);
    }
}
