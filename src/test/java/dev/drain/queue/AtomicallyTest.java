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
}
