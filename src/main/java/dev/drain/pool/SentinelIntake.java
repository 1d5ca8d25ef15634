package dev.drain.pool;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import org.jspecify.annotations.Nullable;

/**
 * The intake as it was written before {@code shutdown()} existed (Python 3.12): an
 * {@link ArrayBlockingQueue} whose slots hold either an item or a stop marker, and one marker per
 * worker, pushed by the producer in a {@code finally} block. Everything {@link QueueIntake} gets
 * from one call has to be arranged by hand here:
 * <ul>
 *   <li>a stop is a flag the producer polls; a producer blocked on a full queue sees it only once
 *       there is room again;</li>
 *   <li>the end needs exactly one marker per worker, each needing a free slot, so it depends on
 *       the workers still draining; a forgotten or extra marker strands a worker or ends one too
 *       early;</li>
 *   <li>an abort drains the queue with {@code drainTo}, but the producer may add an item right
 *       after, so every item taken must be checked against the abort flag, and blocked workers
 *       can only be woken by interrupting them.</li>
 * </ul>
 *
 * @param <T> the item type
 */
final class SentinelIntake<T> implements Intake<T> {

    /** What a queue slot holds. */
    private sealed interface Slot<T> {}

    private record Item<T>(T value) implements Slot<T> {}

    private record Stop<T>() implements Slot<T> {}

    private final ArrayBlockingQueue<Slot<T>> queue;
    private final int workers;
    /** Set by stop() or abort(), read by the producer before each put. */
    private volatile boolean stopped;
    /** Set by abort(): the workers are being cancelled, so no markers are pushed. */
    private volatile boolean aborted;

    SentinelIntake(int capacity, int workers) {
        this.queue = new ArrayBlockingQueue<>(capacity);
        this.workers = workers;
    }

    @Override
    public boolean put(T item) throws InterruptedException {
        if (stopped) {
            return false;
        }
        queue.put(new Item<>(item)); // a stop that comes while we wait for room is seen next time
        return true;
    }

    @Override
    public @Nullable T take() throws InterruptedException {
        return switch (queue.take()) {
            case Item<T> item -> item.value();
            case Stop<T> stop -> null; // this worker's marker: exactly one each
        };
    }

    @Override
    public void endOfInput() {
        for (int i = 0; i < workers; i++) {
            while (!aborted) {
                try {
                    queue.put(new Stop<>()); // needs room: waits for the workers to drain
                    break;
                } catch (InterruptedException e) {
                    // woken: an abort means the workers are being interrupted and need no marker;
                    // anything else does not excuse a missing marker, which would strand a worker
                }
            }
        }
    }

    @Override
    public void stop() {
        stopped = true;
    }

    @Override
    public List<T> abort() {
        stopped = true;
        aborted = true; // the pool drops any item taken from now on (Run.work looks at the run's phase)
        List<Slot<T>> slots = new ArrayList<>();
        queue.drainTo(slots); // the producer may still add one more item after this
        List<T> dropped = new ArrayList<>();
        for (Slot<T> slot : slots) {
            if (slot instanceof Item<T> item) {
                dropped.add(item.value());
            }
        }
        return dropped;
    }
}
