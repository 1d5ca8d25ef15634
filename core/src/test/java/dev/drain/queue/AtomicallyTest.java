package dev.drain.queue;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.drain.support.Call;
import dev.drain.support.Spawner;
import dev.drain.support.ThreadKind;
import dev.drain.support.Waits;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** SQ-21: atomically() runs several non-blocking operations as one step, as asyncio runs a task between two awaits. */
class AtomicallyTest {
    @RegisterExtension
    final Spawner spawn = new Spawner();

    /** SQ-21, SQ-12 (probe C3): a getter woken by a put inside atomically() loses the item to the immediate shutdown of the same step. */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void aWokenGetterLosesTheItemToAnImmediateShutdownInTheSameStep(ThreadKind kind) throws Exception {
        ShutdownQueue<String> q = new ShutdownQueue<>(0);
        Call<String> getter = spawn.use(kind).call("getter", q::get);
        Waits.until("the getter waits", () -> q.waitingGetters() == 1);
        List<String> dropped = new java.util.ArrayList<>();
        q.atomically(queue -> {
            queue.putNowait("x");       // wakes the getter, which cannot run yet
            dropped.addAll(queue.shutdown(true));
        });
        assertThat(dropped).containsExactly("x");
        assertThat(getter.thrown(QueueShutDown.class)).isNotNull();
        assertThat(q.unfinishedTasks()).isZero();
    }

    /** SQ-21, SQ-12 (probe C4): with a graceful shutdown in the same step, the woken getter still takes the item. */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void aWokenGetterStillTakesTheItemAfterAGracefulShutdown(ThreadKind kind) throws Exception {
        ShutdownQueue<String> q = new ShutdownQueue<>(0);
        Call<String> getter = spawn.use(kind).call("getter", q::get);
        Waits.until("the getter waits", () -> q.waitingGetters() == 1);
        q.atomically(queue -> {
            queue.putNowait("x");
            queue.shutdown();
        });
        assertThat(getter.value()).isEqualTo("x");
    }

    /** SQ-21: a blocking call inside atomically() is refused, and the steps before it stand. */
    @Test
    void aBlockingCallInsideIsRefused() {
        ShutdownQueue<String> q = new ShutdownQueue<>(1);
        assertThatThrownBy(() -> q.atomically(queue -> {
            queue.putNowait("a");
            queue.get();
        })).isInstanceOf(IllegalStateException.class).hasMessageContaining("get() inside atomically()");
        assertThat(q.qsize()).isOne();
        assertThatThrownBy(() -> q.atomically(queue -> queue.put("b"))).hasMessageContaining("put() inside atomically()");
        assertThatThrownBy(() -> q.atomically(ShutdownQueue::join)).hasMessageContaining("join() inside atomically()");
    }

    /** SQ-21, SQ-15: the timed forms of put, get and join are refused inside atomically() too, even with a zero timeout. */
    @Test
    void aTimedCallInsideIsRefused() {
        ShutdownQueue<String> q = new ShutdownQueue<>(1);
        assertThatThrownBy(() -> q.atomically(queue -> queue.put("a", Duration.ZERO)))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("put(timeout) inside atomically()");
        assertThatThrownBy(() -> q.atomically(queue -> queue.get(Duration.ZERO)))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("get(timeout) inside atomically()");
        assertThatThrownBy(() -> q.atomically(queue -> queue.join(Duration.ZERO)))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("inside atomically()");
        assertThat(q.qsize()).as("nothing was put").isZero();
    }

    /** SQ-21: what a step throws comes out of atomically(), and the queue is free again afterwards. */
    @Test
    void aStepsExceptionPropagatesAndTheQueueIsFree() throws Exception {
        ShutdownQueue<String> q = new ShutdownQueue<>(1);
        assertThatThrownBy(() -> q.atomically(queue -> {
            queue.putNowait("a");
            queue.putNowait("b");
        })).isInstanceOf(QueueFull.class);
        assertThat(spawn.call("another thread", q::get).value()).isEqualTo("a");
    }

    /** SQ-21: no other thread sees the queue between the steps. */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void noOtherThreadSeesTheQueueBetweenTheSteps(ThreadKind kind) throws Exception {
        ShutdownQueue<Integer> q = new ShutdownQueue<>(0);
        AtomicBoolean stop = new AtomicBoolean();
        Call<Boolean> observer = spawn.use(kind).call("observer", () -> {
            boolean sawHalfAStep = false;
            while (!stop.get()) {
                sawHalfAStep |= q.qsize() == 1; // a step puts two and takes two: 0 or 2, never 1
            }
            return sawHalfAStep;
        });
        for (int i = 0; i < 10_000; i++) {
            q.atomically(queue -> {
                queue.putNowait(1);
                queue.putNowait(2);
            });
            q.atomically(queue -> {
                queue.getNowait();
                queue.getNowait();
            });
        }
        stop.set(true);
        assertThat(observer.value()).isFalse();
    }

    /**
     * SQ-14, SQ-21: a getter woken for an item that another call takes in the same step, and then
     * interrupted, passes nothing on (the item is gone): the next getter keeps its place in line and
     * gets the next item.
     */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void aWokenGetterWhoseItemIsGonePassesNothingOn(ThreadKind kind) throws Exception {
        ShutdownQueue<Integer> q = new ShutdownQueue<>(0);
        Call<Integer> a = spawn.use(kind).call("getter a", q::get);
        Waits.until("a waits", () -> q.waitingGetters() == 1);
        Call<Integer> b = spawn.use(kind).call("getter b", q::get);
        Waits.until("b waits", () -> q.waitingGetters() == 2);
        Call<Integer> c = spawn.use(kind).call("getter c", q::get);
        Waits.until("c waits", () -> q.waitingGetters() == 3);
        q.atomically(queue -> {
            queue.putNowait(1);   // wakes a
            queue.getNowait();    // takes a's item
            a.thread().interrupt(); // before a runs
        });
        assertThat(a.thrown(InterruptedException.class)).isNotNull();
        Waits.until("b and c wait, in that order", () -> q.waitingGetters() == 2);
        q.putNowait(2);
        assertThat(b.value()).as("the next in line gets the next item").isEqualTo(2);
        q.putNowait(3);
        assertThat(c.value()).isEqualTo(3);
    }

    /**
     * SQ-14, SQ-21: a putter woken for a slot that another call fills in the same step, and then
     * interrupted, passes nothing on (the slot is gone): the next putter keeps its place in line and
     * gets the next slot.
     */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void aWokenPutterWhoseSlotIsGonePassesNothingOn(ThreadKind kind) throws Exception {
        ShutdownQueue<Integer> q = new ShutdownQueue<>(1);
        q.putNowait(0);
        Call<Void> a = spawn.use(kind).run("putter a", () -> q.put(1));
        Waits.until("a waits", () -> q.waitingPutters() == 1);
        Call<Void> b = spawn.use(kind).run("putter b", () -> q.put(2));
        Waits.until("b waits", () -> q.waitingPutters() == 2);
        Call<Void> c = spawn.use(kind).run("putter c", () -> q.put(3));
        Waits.until("c waits", () -> q.waitingPutters() == 3);
        q.atomically(queue -> {
            queue.getNowait();      // frees the slot: wakes a
            queue.putNowait(9);     // fills it again
            a.thread().interrupt(); // before a runs
        });
        assertThat(a.thrown(InterruptedException.class)).isNotNull();
        Waits.until("b and c wait, in that order", () -> q.waitingPutters() == 2);
        assertThat(q.getNowait()).isEqualTo(9);
        b.value(); // the next in line gets the next slot
        assertThat(q.getNowait()).isEqualTo(2);
        c.value();
        assertThat(q.getNowait()).isEqualTo(3);
    }
}
