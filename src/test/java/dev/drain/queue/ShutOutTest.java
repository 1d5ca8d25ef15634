package dev.drain.queue;

import static org.assertj.core.api.Assertions.assertThat;

import dev.drain.support.Call;
import dev.drain.support.Spawner;
import dev.drain.support.ThreadKind;
import dev.drain.support.Waits;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * SQ-07: the waiters that a shutdown leaves nothing but {@code QueueShutDown} for (every putter,
 * and every getter once the queue is also empty) leave without taking the queue's lock again
 * (decision 0024).
 *
 * <p>How: a holder thread queues for the lock before the shutdown, inside one
 * {@code atomically} step, so it gets the lock before anybody the shutdown woke could; it then
 * holds it until the woken calls have ended. A queue whose woken callers all take the lock again
 * (as with one {@code Condition} per waiter, decision 0001) queues them behind the holder, and the
 * holder's bounded wait fails.
 */
class ShutOutTest {
    @RegisterExtension
    final Spawner spawn = new Spawner();

    /** SQ-07: getters of an empty queue, woken by a shutdown, throw QueueShutDown while another thread holds the lock. */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void shutOutGettersLeaveWithoutTheLock(ThreadKind kind) {
        ShutdownQueue<String> q = new ShutdownQueue<>(0);
        List<Call<String>> getters = List.of(spawn.use(kind).call("getter-1", q::get),
                spawn.use(kind).call("getter-2", q::get));
        Waits.until("both getters wait", () -> q.waitingGetters() == 2);
        shutDownWhileAnotherThreadTakesTheLockFirst(q, kind, getters);
        for (Call<String> getter : getters) {
            assertThat(getter.thrown(QueueShutDown.class)).isNotNull();
        }
    }

    /** SQ-04, SQ-07: putters of a full queue, woken by a shutdown, throw QueueShutDown while another thread holds the lock. */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void shutOutPuttersLeaveWithoutTheLock(ThreadKind kind) throws Exception {
        ShutdownQueue<String> q = new ShutdownQueue<>(1);
        q.put("a");
        List<Call<Void>> putters = List.of(spawn.use(kind).call("putter-1", () -> {
            q.put("b");
            return null;
        }), spawn.use(kind).call("putter-2", () -> {
            q.put("c");
            return null;
        }));
        Waits.until("both putters wait", () -> q.waitingPutters() == 2);
        shutDownWhileAnotherThreadTakesTheLockFirst(q, kind, putters);
        for (Call<Void> putter : putters) {
            assertThat(putter.thrown(QueueShutDown.class)).isNotNull();
        }
        assertThat(q.itemsInGetOrder()).containsExactly("a");
    }

    /** Shuts {@code q} down; a holder gets the lock first and keeps it until every one of {@code woken} has ended. */
    private void shutDownWhileAnotherThreadTakesTheLockFirst(ShutdownQueue<String> q, ThreadKind kind,
                                                             List<? extends Call<?>> woken) {
        List<Call<Void>> holder = new ArrayList<>();
        q.atomically(queue -> {
            holder.add(spawn.use(kind).call("holder", () -> { // started with the lock held: it must queue for it
                q.runLocked(() -> Waits.until("the woken calls end while the holder has the lock",
                        () -> woken.stream().allMatch(Call::isDone)));
                return null;
            }));
            Waits.until("the holder queues for the lock", () -> holder.getFirst().thread().getState() == Thread.State.WAITING);
            queue.shutdown();
        });
        holder.getFirst().value();
    }
}
