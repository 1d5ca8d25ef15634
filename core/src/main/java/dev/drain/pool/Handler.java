package dev.drain.pool;

/**
 * What a {@link WorkerPool} does with each item: one attempt, on a thread of its own.
 *
 * <p>A handler should respond to interruption (the pool's per-item timeout and its cancellation
 * interrupt the attempt's thread); one that swallows an interrupt is interrupted again, up to three
 * rounds. The current attempt's item, attempt number and worker are available from
 * {@link ItemContext#current()}.
 *
 * @param <T> the item type
 * @param <R> the result type
 */
@FunctionalInterface
public interface Handler<T, R> {
    /**
     * Handles one item.
     *
     * @param item the item
     * @return the result, delivered to the consumer of {@link Results}
     * @throws Exception to fail this attempt; retried if it is one of the pool's retryable types.
     *     Anything else it throws (an {@code Error} too) also fails just this attempt
     */
    R handle(T item) throws Exception;
}
