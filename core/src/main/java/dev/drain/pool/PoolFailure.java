package dev.drain.pool;

import dev.drain.safe.SafeText;
import java.io.Serial;
import java.util.List;
import java.util.stream.Collectors;

/**
 * Thrown by the {@link Results} iteration that reaches the end of a run in which items failed
 * permanently. It holds exactly those failures, in the order they happened, and nothing else:
 * no interruption, no cancellation, no timeout of the pool itself (Python's
 * {@code ExceptionGroup} of the pool's failures).
 *
 * <p>Java forbids generic exceptions, so {@link #failures()} is wildcarded; the same list, typed,
 * is {@code results.outcome().orElseThrow().failures()} (WP-11). The message is built when it is
 * first asked for, and an item whose {@code toString} throws is described, not rethrown.
 */
public final class PoolFailure extends RuntimeException {
    @Serial
    private static final long serialVersionUID = 1L;

    /** The permanent failures, in order. */
    @SuppressWarnings("serial") // a record list; the pool does not serialize it
    private final List<ItemFailure<?>> failures;

    /** The exception for {@code failures}, at least one; only the pool creates it, as the JDK's scopes create their {@code FailedException}. */
    PoolFailure(List<? extends ItemFailure<?>> failures) {
        this.failures = List.copyOf(failures);
        if (this.failures.isEmpty()) {
            throw new IllegalArgumentException("a PoolFailure holds at least one failure");
        }
    }

    /** {@return the permanent failures, in the order they happened} */
    public List<ItemFailure<?>> failures() {
        return failures;
    }

    /** {@return how many items failed, and each: item, attempts, cause} */
    @Override
    public String getMessage() {
        return failures.size() + (failures.size() == 1 ? " item" : " items") + " failed: "
                + failures.stream()
                        .map(f -> SafeText.of(f.item()) + " after " + f.attempts() + " attempt" + (f.attempts() == 1 ? "" : "s")
                                + " (" + SafeText.of(f.cause()) + ")")
                        .collect(Collectors.joining("; "));
    }
}
