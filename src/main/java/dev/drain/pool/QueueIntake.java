package dev.drain.pool;

import dev.drain.queue.QueueShutDown;
import dev.drain.queue.ShutdownQueue;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * The intake as Python 3.13 writes it: a bounded {@link ShutdownQueue}. Every stop is one call,
 * from any thread, that wakes everyone: {@code shutdown()} lets the workers drain and then makes
 * every {@code get} throw; {@code shutdown(true)} also drops what is queued, atomically, and hands
 * the dropped items back. Compare {@link SentinelIntake}.
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
            return false; // stopped while we waited (or before): the caller keeps the item
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
    public void endOfInput() {
        queue.shutdown(); // no per-worker markers, no room needed, nothing to forget
    }

    @Override
    public void stop() {
        queue.shutdown();
    }

    @Override
    public List<T> abort() {
        return queue.shutdown(true);
    }
}
