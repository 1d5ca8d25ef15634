package dev.drain.pool;

import dev.drain.safe.SafeText;
import java.util.NoSuchElementException;
import java.util.Objects;
import java.util.Optional;

/**
 * The context of one attempt, bound for the handler's call through a {@link ScopedValue}: which
 * item, which attempt (1 for the first), which worker. It is Python's {@code ContextVar} done
 * right: bound for exactly one attempt, inherited by any subtask the handler forks, invisible to
 * every other item, and gone when the attempt ends. Nothing in the pool uses {@code ThreadLocal}.
 *
 * @param item the item being handled
 * @param attempt the attempt number, from 1
 * @param worker the worker handling it, from 0
 * @param <T> the item type
 */
public record ItemContext<T>(T item, int attempt, int worker) {

    /** The one binding the pool makes per attempt. */
    static final ScopedValue<ItemContext<?>> CURRENT = ScopedValue.newInstance();

    /** Checks the components. */
    public ItemContext {
        Objects.requireNonNull(item, "item");
    }

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
