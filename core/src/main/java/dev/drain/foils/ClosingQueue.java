package dev.drain.foils;

import dev.drain.queue.QueueShutDown;
import dev.drain.queue.ShutdownQueue;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A queue closed the way it had to be before Python 3.13 gave {@code asyncio.Queue} its
 * {@code shutdown()}, and the way every {@link java.util.concurrent.BlockingQueue} must still be
 * closed: a closing wrapper over an {@link ArrayBlockingQueue}. It is a foil, here to be compared
 * with {@link ShutdownQueue}: what it cannot do, however carefully it is written, is what 3.13
 * removes ({@code specs/fallback-312.md}). It throws the queue's own {@link QueueShutDown}, so that
 * the two read the same at the call.
 *
 * <h2>What it is</h2>
 * A bounded first-in-first-out queue for a fixed number of consumers. {@link #put} blocks while
 * the queue is full, {@link #get} while it is empty.
 *
 * <h2>How it closes</h2>
 * {@link #close()} does by hand what {@code shutdown()} does in one step, and each hand-made step
 * has its price:
 * <ul>
 *   <li>a <b>closed flag</b>: every later {@code put} throws {@link QueueShutDown} (but a
 *       {@code put} that checked the flag just before the close still adds its item);</li>
 *   <li><b>one end marker per consumer</b>, queued behind the items: each consumer drains what
 *       was queued, takes its marker, and {@code get} throws {@code QueueShutDown} (but the markers
 *       need room: {@code close()} waits while the queue is full, so it can block; and a consumer
 *       that calls {@code get} again after its marker waits forever, as does one too many);</li>
 *   <li><b>blocked producers tracked</b>: a producer waiting for room can only be released by an
 *       interrupt, so every producer inside {@code put} is registered, and {@code close()}
 *       interrupts them; they throw {@code QueueShutDown} (but an interrupt of their own that
 *       comes at the same moment is lost in it).</li>
 * </ul>
 * There is no immediate form: {@link #drainAndClose()} drains with {@code drainTo} and then closes,
 * two steps between which a producer can still add an item; there is no task count and no
 * {@code join()}.
 *
 * <h2>Interruption and nulls</h2>
 * {@code put}, {@code get} and {@code close} throw {@link InterruptedException} if interrupted
 * while they wait (unless a {@code close} released the producer). Items may not be {@code null}.
 *
 * @param <T> the type of the items
 */
public final class ClosingQueue<T> {

    /** What a slot of the underlying queue holds. */
    private sealed interface Slot<T> {
        record Item<T>(T value) implements Slot<T> {}

        record EndMarker<T>() implements Slot<T> {}
    }

    private final ArrayBlockingQueue<Slot<T>> queue;
    private final int consumers;
    /** Set once by close(); read by every put. */
    private volatile boolean closed;
    /** The producers inside put(), which close() must interrupt to release. */
    private final Set<Thread> producers = ConcurrentHashMap.newKeySet();

    /**
     * Creates an open, empty queue.
     *
     * @param capacity the most items it holds, at least 1
     * @param consumers how many consumers will take from it, at least 1: the number of end markers
     *     a close pushes
     */
    public ClosingQueue(int capacity, int consumers) {
        if (consumers < 1) {
            throw new IllegalArgumentException("consumers must be at least 1, was " + consumers);
        }
        this.queue = new ArrayBlockingQueue<>(capacity);
        this.consumers = consumers;
    }

    /**
     * Adds {@code item}, waiting while the queue is full.
     *
     * @param item the item
     * @throws QueueShutDown if the queue is closed, before or while waiting
     * @throws InterruptedException if interrupted while waiting
     */
    public void put(T item) throws InterruptedException, QueueShutDown {
        Objects.requireNonNull(item, "item");
        Thread me = Thread.currentThread();
        producers.add(me);
        try {
            if (closed) {
                throw new QueueShutDown();
            }
            queue.put(new Slot.Item<>(item)); // a close() from here on is seen only as an interrupt
        } catch (InterruptedException e) {
            if (closed) {
                throw new QueueShutDown(); // released by close(); an interrupt of our own is lost in it
            }
            throw e;
        } finally {
            producers.remove(me);
        }
    }

    /**
     * Takes the next item, waiting while the queue is empty. After a close, the items left come
     * first, then this consumer's end marker.
     *
     * @return the next item
     * @throws QueueShutDown if this consumer has reached its end marker (do not call again)
     * @throws InterruptedException if interrupted while waiting
     */
    public T get() throws InterruptedException, QueueShutDown {
        return switch (queue.take()) {
            case Slot.Item<T> item -> item.value();
            case Slot.EndMarker<T> end -> throw new QueueShutDown();
        };
    }

    /**
     * Closes the queue: refuses later puts, releases the producers waiting for room, and queues
     * one end marker per consumer, waiting for room for each. Calling it twice pushes twice as
     * many markers.
     *
     * @throws InterruptedException if interrupted while waiting for room for a marker
     */
    public void close() throws InterruptedException {
        closed = true;
        producers.forEach(Thread::interrupt); // the only way to reach a producer blocked in put
        for (int i = 0; i < consumers; i++) {
            queue.put(new Slot.EndMarker<>()); // needs room: waits for the consumers to drain
        }
    }

    /**
     * Drops what is queued and closes: the nearest this wrapper gets to an immediate shutdown,
     * and not atomic (a producer can add an item between the two steps).
     *
     * @return the items dropped
     * @throws InterruptedException if interrupted while waiting for room for a marker
     */
    public List<T> drainAndClose() throws InterruptedException {
        List<Slot<T>> slots = new ArrayList<>();
        queue.drainTo(slots);
        close();
        List<T> dropped = new ArrayList<>();
        for (Slot<T> slot : slots) {
            if (slot instanceof Slot.Item<T> item) {
                dropped.add(item.value());
            }
        }
        return dropped;
    }

    /** {@return whether {@link #close()} has been called} */
    public boolean isClosed() {
        return closed;
    }
}
