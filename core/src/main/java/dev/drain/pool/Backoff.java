package dev.drain.pool;

import java.time.Duration;
import java.util.Objects;
import java.util.random.RandomGenerator;

/**
 * How long a retry waits after the attempt that failed (WP-28). While it waits, its item is parked
 * in the run's retry room and the worker that ran the attempt goes on with other items: a flaky
 * backend is given time to come back without holding the pool. The delay is a lower bound: the
 * retry starts once it is due and a worker is free. {@link #none()} (the default) retries at once,
 * on the same worker (WP-5).
 *
 * <p>To ride out an outage instead of dead-lettering the work that would succeed once the backend
 * is back, choose the retries and the backoff so that the sum of the waits' floors outlasts it:
 * {@code retryable(IOException.class).maxRetries(8).retryBackoff(Backoff.exponential(Duration.ofSeconds(1),
 * Duration.ofSeconds(30)))} waits at least 0.5 + 1 + 2 + 4 + 8 + 15 + 15 + 15 s, about a minute,
 * before an item fails for good.
 */
public sealed interface Backoff {

    /** {@return no wait: a retry starts as soon as its attempt has failed, on the same worker} */
    static Backoff none() {
        return None.INSTANCE;
    }

    /**
     * {@return the same wait before every retry}
     *
     * @param delay positive, at most about 73 years
     */
    static Backoff fixed(Duration delay) {
        return new Fixed(delay);
    }

    /**
     * {@return a wait that doubles with each retry, up to {@code cap}, with jitter} Before retry
     * {@code n} (from 1) the wait is {@code d = min(cap, first × 2^(n-1))}, drawn uniformly from
     * {@code [d/2, d]}, so that items that failed together do not come back together.
     *
     * @param first the wait before the first retry, before jitter; positive
     * @param cap the longest wait; at least {@code first}
     */
    static Backoff exponential(Duration first, Duration cap) {
        return new Exponential(first, cap);
    }

    /**
     * {@return how long retry {@code retry} (1 for the first) waits}
     *
     * @param retry which retry, from 1
     * @param random where the jitter comes from
     */
    Duration delayBefore(int retry, RandomGenerator random);

    /** No wait (WP-5). */
    enum None implements Backoff {
        /** The one value. */
        INSTANCE;

        @Override
        public Duration delayBefore(int retry, RandomGenerator random) {
            return Duration.ZERO;
        }

        @Override
        public String toString() {
            return "none";
        }
    }

    /**
     * The same wait before every retry.
     *
     * @param delay positive
     */
    record Fixed(Duration delay) implements Backoff {
        /** Checks the delay. */
        public Fixed {
            Objects.requireNonNull(delay, "delay");
            if (delay.isNegative() || delay.isZero() || delay.compareTo(Duration.ofNanos(PoolConfig.LONGEST_NANOS)) > 0) {
                throw new IllegalArgumentException("a fixed backoff's delay must be positive and at most "
                        + Duration.ofNanos(PoolConfig.LONGEST_NANOS) + ", was " + delay);
            }
        }

        @Override
        public Duration delayBefore(int retry, RandomGenerator random) {
            return delay;
        }

        @Override
        public String toString() {
            return "fixed " + delay;
        }
    }

    /**
     * A wait that doubles with each retry up to a cap, with jitter in its upper half.
     *
     * @param first the wait before the first retry, before jitter; positive
     * @param cap the longest wait; at least {@code first}
     */
    record Exponential(Duration first, Duration cap) implements Backoff {
        /** Checks the waits. */
        public Exponential {
            Objects.requireNonNull(first, "first");
            Objects.requireNonNull(cap, "cap");
            if (first.isNegative() || first.isZero() || cap.compareTo(first) < 0
                    || cap.compareTo(Duration.ofNanos(PoolConfig.LONGEST_NANOS)) > 0) {
                throw new IllegalArgumentException("an exponential backoff needs 0 < first <= cap <= "
                        + Duration.ofNanos(PoolConfig.LONGEST_NANOS) + ", was first " + first + ", cap " + cap);
            }
        }

        @Override
        public Duration delayBefore(int retry, RandomGenerator random) {
            Duration d = cap;
            if (retry < 62) {
                long factor = 1L << Math.max(0, retry - 1);
                if (first.toNanos() <= cap.toNanos() / factor) {
                    d = first.multipliedBy(factor);
                }
            }
            long nanos = d.toNanos();
            return Duration.ofNanos(nanos - random.nextLong(nanos / 2 + 1)); // uniform in [d/2, d]
        }

        @Override
        public String toString() {
            return "exponential from " + first + " to " + cap;
        }
    }
}
