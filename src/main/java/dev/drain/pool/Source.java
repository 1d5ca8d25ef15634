package dev.drain.pool;

import java.util.Iterator;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jspecify.annotations.Nullable;

/**
 * The run's source: user code, so every call into it is a {@link Pull} outcome instead of an
 * exception that could escape into the pool's loops. Only the producer pulls. The source is closed
 * exactly once on every path: by the producer when it stops pulling, or by the driver at the end
 * if the producer never ran (the run was aborted or abandoned before it started), or by
 * {@code run()} if the run could not start.
 *
 * @param <T> the item type
 */
final class Source<T> {

    /** What one pull gave. */
    sealed interface Pull<T> {
        /** The next item. */
        record Item<T>(T value) implements Pull<T> {}

        /** The source has no more items. */
        record End<T>() implements Pull<T> {}

        /** {@code hasNext} or {@code next} threw, or {@code next} returned {@code null}. */
        record Failed<T>(Throwable cause) implements Pull<T> {}
    }

    private final Iterator<? extends T> items;
    private final @Nullable Runnable onClose;
    private final AtomicBoolean closed = new AtomicBoolean();

    /**
     * @param items the items
     * @param onClose what closing the source runs (a {@code Stream}'s {@code close}), or {@code null}
     */
    Source(Iterator<? extends T> items, @Nullable Runnable onClose) {
        this.items = items;
        this.onClose = onClose;
    }

    /** Asks the source for its next item. Called by the producer only. */
    Pull<T> pull() {
        try {
            if (!items.hasNext()) {
                return new Pull.End<>();
            }
            T item = items.next();
            if (item == null) {
                return new Pull.Failed<>(new NullPointerException("the source returned null"));
            }
            return new Pull.Item<>(item);
        } catch (Throwable e) { // any Throwable: a VirtualMachineError too, which the producer turns into a crash
            return new Pull.Failed<>(e);
        }
    }

    /** Closes the source, the first time only; {@return what closing it threw, if anything} */
    Optional<Throwable> close() {
        if (closed.getAndSet(true) || onClose == null) {
            return Optional.empty();
        }
        try {
            onClose.run();
            return Optional.empty();
        } catch (Throwable e) {
            return Optional.of(e);
        }
    }

    /** {@return whether the source has been closed} */
    boolean isClosed() {
        return closed.get();
    }
}
