package dev.drain.pool;

import java.time.Duration;
import java.util.List;
import java.util.function.ToIntFunction;
import org.jspecify.annotations.Nullable;

/** A pool's validated settings, shared by its run. */
record PoolConfig<T, R>(String name, Handler<? super T, ? extends R> handler, int workers, int queueSize,
                        Duration itemTimeout, List<Class<? extends Exception>> retryable, int maxRetries,
                        @Nullable MetricsSink metrics, WorkerPool.IntakeKind intake, PoolThreads threads,
                        @Nullable Settler<T> settler, int settleBatch, int batchesInFlight,
                        WorkerPool.OnFailure onFailure, int failuresKept, boolean deliversResults, Backoff backoff,
                        @Nullable Duration defersRetriesLongerThan, ToIntFunction<? super T> priorAttempts) {

    /**
     * {@return whether a retry that waits {@code delay} is handed to the store rather than parked
     * (WP-29)}: only with a threshold, and only for a delay of at least it. The one home of that rule.
     */
    boolean defers(Duration delay) {
        Duration threshold = defersRetriesLongerThan;
        return threshold != null && delay.compareTo(threshold) >= 0;
    }

    /**
     * {@return the number of {@code item}'s first attempt in this run: 1 + the attempts its store
     * says it had in earlier runs (WP-29), read with the user's function}
     *
     * @throws IllegalStateException if that function gives a negative number, or {@code Integer.MAX_VALUE}
     *     (whose next attempt has no number)
     */
    int firstAttempt(T item) {
        int prior = priorAttempts.applyAsInt(item);
        if (prior < 0 || prior == Integer.MAX_VALUE) {
            throw new IllegalStateException("priorAttempts gave " + prior + " for an item: it must be between 0 and "
                    + (Integer.MAX_VALUE - 1));
        }
        return prior + 1;
    }

    /** {@return whether a permanent failure stops the intake (WP-6), or the run goes on (WP-23)} The one home of that rule. */
    boolean stopsAtFailure() {
        return onFailure == WorkerPool.OnFailure.STOP;
    }

    /**
     * {@return how far the source may be ahead of the recorded fates: {@code queueSize + workers + 1}
     * (WP-1), and {@code workers} more with a backoff, whose retry room holds that many (WP-28)}
     */
    long leadBound() {
        return queueSize + (long) workers + 1L + (parksRetries() ? workers : 0);
    }

    /** {@return whether a retry waits in the retry room (WP-28), rather than starting at once on its worker} */
    boolean parksRetries() {
        return !(backoff instanceof Backoff.None);
    }

    /**
     * {@return the settings in one line: workers, queue, timeout, retry policy, intake, sink,
     * settler, and, where they are not the seed's, what a failure does and that no results are delivered}
     */
    String describe() {
        String retries = maxRetries == 0 ? "none"
                : retryable.stream().map(Class::getSimpleName).toList() + " x" + maxRetries;
        return "workers=" + workers + ", queueSize=" + queueSize + ", itemTimeout=" + itemTimeout + ", retries="
                + retries + ", intake=" + intake + ", metrics=" + (metrics == null ? "no" : "yes") + ", settler="
                + (settler == null ? "no" : "yes, batches of " + settleBatch
                + (batchesInFlight == 1 ? "" : ", " + batchesInFlight + " in flight"))
                + (parksRetries() ? ", backoff=" + backoff : "")
                + (defersRetriesLongerThan == null ? "" : ", retries deferred to the store from " + defersRetriesLongerThan)
                + (stopsAtFailure() ? "" : ", onFailure=CONTINUE, failuresKept=" + failuresKept)
                + (deliversResults ? "" : ", results=none");
    }

    /** The longest wait the pool keeps in nanoseconds: about 73 years, far enough that a deadline never overflows. */
    static final long LONGEST_NANOS = Long.MAX_VALUE / 4;

    /**
     * {@return {@code itemTimeout} in nanoseconds, at most {@link #LONGEST_NANOS}} A longer timeout
     * ({@code ChronoUnit.FOREVER.getDuration()}, say) is one that never comes, and
     * {@link Duration#toNanos()} would throw for it.
     */
    long itemTimeoutNanos() {
        return cappedNanos(itemTimeout);
    }

    /**
     * {@return {@code d} in nanoseconds, at most {@link #LONGEST_NANOS}}: the one conversion of a
     * wait the pool keeps (a timeout, a stop's deadline, a shutdown's grace), so that adding it to
     * {@link System#nanoTime()} never overflows and {@link Duration#toNanos()} never throws.
     */
    static long cappedNanos(Duration d) {
        return d.compareTo(Duration.ofNanos(LONGEST_NANOS)) > 0 ? LONGEST_NANOS : d.toNanos();
    }

    /**
     * {@return the deadline of an attempt that begins now, on the wall clock} Taken just before its
     * watch is armed, so never later than the watchdog's own deadline for it (WP-3).
     */
    java.time.Instant attemptDeadline() {
        long timeout = itemTimeoutNanos();
        return timeout == LONGEST_NANOS ? java.time.Instant.MAX : java.time.Instant.now().plusNanos(timeout);
    }

    /** {@return whether an attempt that threw {@code cause} may be retried} */
    boolean isRetryable(Throwable cause) {
        for (Class<? extends Exception> type : retryable) {
            if (type.isInstance(cause)) {
                return true;
            }
        }
        return false;
    }
}
