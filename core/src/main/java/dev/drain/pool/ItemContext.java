package dev.drain.pool;

import dev.drain.safe.SafeText;
import java.time.Duration;
import java.time.Instant;
import java.util.NoSuchElementException;
import java.util.Objects;
import java.util.Optional;

/**
 * The context of one attempt, bound for the handler's call through a {@link ScopedValue}: which
 * item, which attempt (1 for the first), which worker. It is Python's {@code ContextVar} done
 * right: bound for exactly one attempt, inherited by any subtask the handler forks, invisible to
 * every other item, and gone when the attempt ends. Nothing in the pool uses {@code ThreadLocal}.
 *
 * <p>It carries the attempt's deadline (WP-3): an interrupt does not stop a database query or an
 * HTTP request under way, but a driver given the time that is left stops itself, server side
 * included: {@code statement.setQueryTimeout(...)} or {@code HttpRequest.newBuilder().timeout(...)}
 * with {@link #remaining()}.
 *
 * @param item the item being handled
 * @param attempt the attempt number, from 1
 * @param worker the worker handling it, from 0
 * @param deadline when this attempt times out ({@code itemTimeout} after it began, on the wall
 *     clock, for drivers that want an instant), {@link Instant#MAX} if never
 * @param <T> the item type
 */
public record ItemContext<T>(T item, int attempt, int worker, Instant deadline) {

    /** The one binding the pool makes per attempt. */
    static final ScopedValue<ItemContext<?>> CURRENT = ScopedValue.newInstance();

    /** Checks the components. */
    public ItemContext {
        Objects.requireNonNull(item, "item");
        Objects.requireNonNull(deadline, "deadline");
    }

    /**
     * A context with no deadline.
     *
     * @param item the item being handled
     * @param attempt the attempt number, from 1
     * @param worker the worker handling it, from 0
     */
    public ItemContext(T item, int attempt, int worker) {
        this(item, attempt, worker, Instant.MAX);
    }

    /**
     * {@return how long this attempt has left before it times out, zero once it has, at most about
     * 73 years} What to give a driver as its own timeout (WP-3).
     */
    public Duration remaining() {
        Duration left = Duration.between(Instant.now(), deadline);
        return left.isNegative() ? Duration.ZERO : left.compareTo(LONGEST) > 0 ? LONGEST : left;
    }

    /** The longest {@link #remaining()}: about 73 years, so that it converts to nanoseconds and adds to now. */
    private static final Duration LONGEST = Duration.ofNanos(PoolConfig.LONGEST_NANOS);

    /**
     * {@return the context of the attempt the calling thread is running}
     *
     * @throws NoSuchElementException if the calling thread is not running a handler
     */
    public static ItemContext<?> current() {
        return CURRENT.orElseThrow(() -> new NoSuchElementException("not inside a WorkerPool handler"));
    }

    /** {@return the context of the attempt the calling thread is running, if any} */
    public static Optional<ItemContext<?>> find() {
        return CURRENT.isBound() ? Optional.of(CURRENT.get()) : Optional.empty();
    }

    @Override
    public String toString() {
        return "item=" + SafeText.of(item) + " attempt=" + attempt + " worker=" + worker; // an item's toString may throw
    }
}
