package dev.drain.pool;

import dev.drain.queue.QueueShutDown;
import dev.drain.queue.ShutdownQueue;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * The intake as Python 3.13 writes it: a bounded {@link ShutdownQueue}. Each end is one call that
 * wakes everyone: the producer's {@code shutdown()} at the end of input lets the workers drain and
 * then makes every {@code get} throw; an abort's {@code shutdown(true)}, from any thread, also
 * drops what is queued, atomically, hands the dropped items back, and makes the producer's
 * {@code put} throw. Compare {@link SentinelIntake}.
 *
 * @param <T> the item type
 */
final class QueueIntake<T> implements Intake<T> {
    private final ShutdownQueue<T> queue;

    QueueIntake(int capacity) {
        this.queue = new ShutdownQueue<>(capacity);
    }

    @Override
    public boolean put(T item) throws InterruptedException {
        try {
            queue.put(item);
            return true;
        } catch (QueueShutDown e) {
            return false; // aborted while we waited (or before): the caller keeps the item
        }
    }

    @Override
    public @Nullable T take() throws InterruptedException {
        try {
            return queue.get();
        } catch (QueueShutDown e) {
            return null; // shut down and drained: every worker gets this, however many there are
        }
    }

    @Override
    public Taken<T> take(long nanos) throws InterruptedException {
        try {
            return new Taken.Item<>(queue.get(java.time.Duration.ofNanos(nanos)));
        } catch (QueueShutDown e) {
            return new Taken.End<>();
        } catch (dev.drain.queue.QueueEmpty e) {
            return new Taken.Nothing<>();
        }
    }

    @Override
    public void endOfInput() {
        queue.shutdown(); // no per-worker markers, no room needed, nothing to forget
    }

    @Override
    public List<T> abort() {
        return queue.shutdown(true);
    }
}
