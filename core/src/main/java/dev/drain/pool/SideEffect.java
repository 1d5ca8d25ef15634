package dev.drain.pool;

/**
 * What a pool does with each item when nobody wants a result: send the e-mail, write the row,
 * call the service. The pool of {@link WorkerPool#forEach(SideEffect)} runs it; its attempts are
 * timed, retried, cancelled and settled as a {@link Handler}'s are, and returning is success: there
 * is no result to deliver, so none can be {@code null} (WP-25).
 *
 * @param <T> the item type
 */
@FunctionalInterface
public interface SideEffect<T> {
    /**
     * Does the work for one item.
     *
     * @param item the item
     * @throws Exception to fail this attempt; retried if it is one of the pool's retryable types.
     *     Anything else it throws (an {@code Error} too) also fails just this attempt
     */
    void accept(T item) throws Exception;
}
