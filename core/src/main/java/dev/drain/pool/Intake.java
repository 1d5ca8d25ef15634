package dev.drain.pool;

import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * How items get from the pool's producer to its workers, and how that flow is stopped: the part
 * of a worker pool that {@link dev.drain.queue.ShutdownQueue#shutdown(boolean)} replaces. Two
 * implementations pass the same contract tests, side by side in {@code specs/worker-pool.md}:
 * {@link QueueIntake} (Python 3.13's {@code shutdown()}) and {@link SentinelIntake} (the
 * one-marker-per-consumer protocol that came before it).
 *
 * <p>One producer thread calls {@link #put} and, in a {@code finally} block, {@link #endOfInput};
 * {@code workers} threads call {@link #take}; any thread may call {@link #abort}, which returns at
 * once. A graceful stop needs nothing of the intake: the producer stops pulling, puts the item it
 * holds (decision 0026), and ends the input as if the source had run out.
 *
 * @param <T> the item type
 */
sealed interface Intake<T> permits QueueIntake, SentinelIntake {

    /**
     * Adds an item, waiting while the intake is full.
     *
     * @return {@code false} if the intake was aborted before the item could be added; the caller
     *     still holds the item and must account for it
     * @throws InterruptedException if the producer is cancelled while it waits
     */
    boolean put(T item) throws InterruptedException;

    /**
     * Takes the next item, waiting while there is none.
     *
     * @return the next item, or {@code null} once the intake has ended for this worker
     * @throws InterruptedException if the worker is cancelled while it waits
     */
    @Nullable T take() throws InterruptedException;

    /** What a timed {@link #take(long)} found. */
    sealed interface Taken<T> {
        /** The next item. */
        record Item<T>(T value) implements Taken<T> {}

        /** The intake has ended for this worker. */
        record End<T>() implements Taken<T> {}

        /** Nothing came within the time. */
        record Nothing<T>() implements Taken<T> {}
    }

    /**
     * As {@link #take()}, waiting at most {@code nanos}: for a worker with a retry due then (WP-28).
     *
     * @throws InterruptedException if the worker is cancelled while it waits
     */
    Taken<T> take(long nanos) throws InterruptedException;

    /**
     * The producer has no more items (its source ran out, or intake stopped). Called by the
     * producer in a {@code finally} block, so every worker learns of the end on every path. After
     * an {@link #abort()} it needs to do nothing: the workers are being cancelled anyway.
     */
    void endOfInput();

    /** Emergency stop: drop what is queued and end the workers now. Returns at once. {@return the dropped items} */
    List<T> abort();
}
