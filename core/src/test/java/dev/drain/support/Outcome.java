package dev.drain.support;

import org.jspecify.annotations.Nullable;

/**
 * How a call made on another thread ended.
 *
 * @param <V> the type of the call's result
 */
public sealed interface Outcome<V> {
    /** The call returned {@code value} ({@code null} for a call with no result). */
    record Returned<V>(@Nullable V value) implements Outcome<V> {}

    /** The call threw {@code error}. */
    record Threw<V>(Throwable error) implements Outcome<V> {}
}
