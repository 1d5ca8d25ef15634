package dev.drain.pool;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import org.jspecify.annotations.Nullable;

/**
 * The intake as it was written before {@code shutdown()} existed (Python 3.12): a bounded
 * {@link BlockingQueue} whose slots hold either an item or a stop marker, and one marker per
 * worker, pushed by the producer in a {@code finally} block. Everything {@link QueueIntake} gets
 * from one call has to be arranged by hand here:
 * <ul>
 *   <li>the end needs exactly one marker per worker, each needing a free slot, so it depends on
 *       the workers still draining; a forgotten or extra marker strands a worker or ends one too
 *       early;</li>
 *   <li>an abort drains the queue with {@code drainTo}, but the producer may add an item right
 *       after, so every item taken must be checked against the abort flag, and blocked workers
 *       can only be woken by interrupting them.</li>
 * </ul>
 * The queue is a {@link LinkedBlockingQueue} with a capacity of {@code queueSize}, not an
 * {@link java.util.concurrent.ArrayBlockingQueue}: the array would be allocated whole when the run
 * starts, and a setting the queue intake runs ({@code queueSize(Integer.MAX_VALUE)}, say) would
 * then fail here with an {@link OutOfMemoryError}. Both intakes accept exactly the same settings.
 *
 * @param <T> the item type
 */
final class SentinelIntake<T> implements Intake<T> {

    /** What a queue slot holds. */
    private sealed interface Slot<T> {}

    private record Item<T>(T value) implements Slot<T> {}

    private record Stop<T>() implements Slot<T> {}

    private final BlockingQueue<Slot<T>> queue;
    private final int workers;
    /** Set by abort(): nothing more is put, and the workers are being cancelled, so no markers are pushed. */
    private volatile boolean aborted;

    SentinelIntake(int capacity, int workers) {
        this.queue = new LinkedBlockingQueue<>(capacity);
        this.workers = workers;
    }

    @Override
    public boolean put(T item) throws InterruptedException {
        if (aborted) {
            return false;
        }
        queue.put(new Item<>(item)); // an abort that comes while we wait for room is seen by the caller's loop
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
    public Taken<T> take(long nanos) throws InterruptedException {
        Slot<T> slot = queue.poll(nanos, java.util.concurrent.TimeUnit.NANOSECONDS);
        return switch (slot) {
            case null -> new Taken.Nothing<>();
            case Item<T> item -> new Taken.Item<>(item.value());
            case Stop<T> stop -> new Taken.End<>(); // this worker's marker: exactly one each
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
    public List<T> abort() {
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
