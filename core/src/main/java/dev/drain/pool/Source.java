package dev.drain.pool;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import java.util.Iterator;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * The run's source: user code, so every call into it is a {@link Pull} outcome instead of an
 * exception that could escape into the pool's loops. Only the producer pulls, and it asks for the
 * source's iterator at its first pull, so that even that call (a {@code Stream} already used, an
 * {@code Iterable} that throws) is a pull that fails, on the producer's thread. The source is
 * closed exactly once on every path: by the producer when it stops pulling, by the driver at the
 * end if the producer never ran (the run was aborted or abandoned before it started), or by
 * {@code run()} if the pool refused to run.
 *
 * <p>A source may block in {@code hasNext()} or {@code next()} waiting for data. When intake stops
 * (a requested stop, a permanent failure), {@link #stopPulling()} interrupts the producer if it is
 * inside such a call, so that a stop never waits for the next item (WP-7); what the source then
 * throws is the stop's doing, not a failure of the source.
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

        /** Intake had stopped before the pull began: nothing was asked of the source. */
        record Stopped<T>() implements Pull<T> {}

        /** {@code iterator}, {@code hasNext} or {@code next} threw, or {@code next} returned {@code null}. */
        record Failed<T>(Throwable cause) implements Pull<T> {}
    }

    private final Supplier<? extends Iterator<? extends T>> iterator;
    private final @Nullable Runnable onClose;
    private final AtomicBoolean closed = new AtomicBoolean();
    /** The source's iterator, from the first pull on; confined to the producer. */
    private @Nullable Iterator<? extends T> items;
    /** The producer while it is inside the source, for {@link #stopPulling()} to interrupt. */
    @GuardedBy("this")
    private @Nullable Thread puller;

    /**
     * @param iterator how to get the items, called by the producer at its first pull
     * @param onClose what closing the source runs (a {@code Stream}'s {@code close}), or {@code null}
     */
    Source(Supplier<? extends Iterator<? extends T>> iterator, @Nullable Runnable onClose) {
        this.iterator = iterator;
        this.onClose = onClose;
    }

    /**
     * Asks the source for its next item, if {@code pulling} still says intake is open. Called by
     * the producer only. Whatever interrupt a stop sent it is cleared on the way out: it has done
     * its job (decision 0015).
     */
    Pull<T> pull(BooleanSupplier pulling) {
        synchronized (this) {
            if (!pulling.getAsBoolean()) {
                return new Pull.Stopped<>();
            }
            puller = Thread.currentThread();
        }
        try {
            Iterator<? extends T> source = items;
            if (source == null) {
                source = iterator.get();
                items = source;
            }
            if (!source.hasNext()) {
                return new Pull.End<>();
            }
            T item = source.next();
            if (item == null) {
                return new Pull.Failed<>(new NullPointerException("the source returned null"));
            }
            return new Pull.Item<>(item);
        } catch (Throwable e) { // any Throwable: a VirtualMachineError too, which the producer turns into a crash
            return new Pull.Failed<>(e);
        } finally {
            synchronized (this) {
                puller = null;
            }
            Thread.interrupted();
        }
    }

    /** Intake has stopped: wakes the producer if it waits inside the source. Any thread; never blocks. */
    synchronized void stopPulling() {
        if (puller != null) {
            puller.interrupt();
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
}
