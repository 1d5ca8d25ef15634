package dev.drain.pool;

import dev.drain.safe.SafeText;
import java.util.Objects;

/**
 * One item that failed permanently: its last attempt threw something that is not retryable, or
 * it ran out of retries, or its handler would not stop.
 *
 * @param item the item
 * @param attempts how many attempts were made
 * @param cause what the last attempt threw (a {@link java.util.concurrent.TimeoutException} for a
 *     timeout, a {@link StuckAttempt} for a handler that outlived every interrupt)
 * @param <T> the item type
 */
public record ItemFailure<T>(T item, int attempts, Throwable cause) {
    /** Checks the components. */
    public ItemFailure {
        Objects.requireNonNull(item, "item");
        Objects.requireNonNull(cause, "cause");
        if (attempts < 1) {
            throw new IllegalArgumentException("attempts must be at least 1, was " + attempts);
        }
    }

    /**
     * {@return this failure in one line for a store to keep (a dead letter's error):
     * {@code "after <attempts> attempts: <cause>"}, cut to at most {@code max} characters}
     * Never throws: a cause whose {@code toString} throws is described instead.
     *
     * @param max the most characters, at least 2
     * @throws IllegalArgumentException if {@code max} is less than 2
     */
    public String describe(int max) {
        return SafeText.cut("after " + attempts + " attempts: " + SafeText.of(cause), max);
    }
}
