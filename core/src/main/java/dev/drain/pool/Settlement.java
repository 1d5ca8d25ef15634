package dev.drain.pool;

import java.time.Instant;
import java.util.Objects;
import org.jspecify.annotations.Nullable;

/**
 * The fate the run's books recorded for one item, as a {@link Settler} hands it to a durable
 * store (WP-22). Every item the run pulls from its source comes to exactly one settlement, and it
 * is the fate of the ledger (WP-2):
 * <ul>
 *   <li>{@link Succeeded}: its handler returned a result; the store acknowledges it (the item is
 *       done and must not be delivered again);</li>
 *   <li>{@link Failed}: it failed permanently; the store keeps the failure (a dead letter) and
 *       acknowledges it;</li>
 *   <li>{@link Released}: an abort, a crash or an abandon dropped it before any worker took it, or
 *       cancelled its attempt; the store leaves it for redelivery;</li>
 *   <li>{@link Deferred}: its attempt failed, and its retry waits longer than the pool keeps a
 *       retry in memory: the store keeps it until the retry is due, with the attempts it had
 *       (WP-29; only to a settler that {@linkplain Settler#keepsDeferred() keeps them}).</li>
 * </ul>
 *
 * @param <T> the item type
 */
public sealed interface Settlement<T> {

    /** {@return the item settled} */
    T item();

    /**
     * The item's handler returned a result: acknowledge it.
     *
     * @param item the item
     * @param <T> the item type
     */
    record Succeeded<T>(T item) implements Settlement<T> {}

    /**
     * The item failed permanently: keep the failure as a dead letter, then acknowledge it.
     *
     * @param failure the item, how many attempts it had, and the last attempt's cause
     * @param <T> the item type
     */
    record Failed<T>(ItemFailure<T> failure) implements Settlement<T> {
        @Override
        public T item() {
            return failure.item();
        }
    }

    /**
     * The run gave the item up unfinished: leave it for redelivery.
     *
     * @param item the item
     * @param why whether it was dropped before any worker took it, or its attempt was cancelled
     * @param retryAt for an item the run gave up while it waited for a delayed retry, or just as its
     *     failed attempt was to wait for one (WP-28): when that retry was due, on the wall clock (it
     *     may have passed); {@code null} for any other. A
     *     store that can schedule may keep the item until then, so that the backoff outlives the
     *     run: the job table does (JT-12); the Kafka source redelivers it at once
     * @param <T> the item type
     */
    record Released<T>(T item, Why why, @Nullable Instant retryAt) implements Settlement<T> {
        /**
         * An item given up with no retry waiting.
         *
         * @param item the item
         * @param why whether it was dropped before any worker took it, or its attempt was cancelled
         */
        public Released(T item, Why why) {
            this(item, why, null);
        }
    }

    /**
     * The item's attempt failed and is to be retried, but not before {@code retryAt}, longer from
     * now than the pool keeps a retry in memory ({@code WorkerPool.Builder.deferRetriesLongerThan},
     * WP-29): keep it, and hand it out again once it is due, saying it had {@code attempts}
     * attempts, so that the next run goes on counting from there (its retry budget and its
     * backoff). Offered only to a settler that {@linkplain Settler#keepsDeferred() keeps them}.
     *
     * @param item the item
     * @param attempts the attempts it has had, in this run and the earlier ones, at least 1
     * @param retryAt when its next attempt is due, on the wall clock
     * @param <T> the item type
     */
    record Deferred<T>(T item, int attempts, Instant retryAt) implements Settlement<T> {
        /** Checks the parts. */
        public Deferred {
            Objects.requireNonNull(item, "item");
            Objects.requireNonNull(retryAt, "retryAt");
            if (attempts < 1) {
                throw new IllegalArgumentException("attempts must be at least 1, was " + attempts);
            }
        }
    }

    /** Why an item was released: the two fates of the books that leave an item unfinished by the run's decision to end. */
    enum Why {
        /** Dropped unhandled by an abort, a crash or an abandon (the ledger's {@code discarded}). */
        DISCARDED,
        /** Its attempt was stopped by an abort, a crash or an abandon (the ledger's {@code cancelled}). */
        CANCELLED
    }
}
