package dev.drain.pool;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.PriorityQueue;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.jspecify.annotations.Nullable;

/**
 * Where items wait for a delayed retry (WP-28), so that no worker holds one while it waits. A
 * worker parks an item after its attempt failed and goes on; a worker takes it back once it is
 * due, before the next item of the intake. It holds at most {@code capacity} items (the pool's
 * {@code workers}), which bounds the lead: with a backoff, the source is at most
 * {@code queueSize + 2 × workers + 1} items ahead. A cancellation drops what waits: those items
 * were taken, so they are recorded as cancelled.
 *
 * <p>Its lock is taken alone: nothing else is taken under it, and it calls no user code.
 *
 * @param <T> what waits: the item in a worker's hands ({@code Handling.InHand})
 */
final class RetryRoom<T> {

    /** An item waiting for attempt {@code nextAttempt}, due at {@code due} ({@link System#nanoTime()}). */
    record Waiting<T>(T held, int nextAttempt, long due) {}

    private final int capacity;
    private final ReentrantLock lock = new ReentrantLock();
    /** Signalled when an item is parked, and when the room is dropped. */
    private final Condition parkedOrDropped = lock.newCondition();
    /** By due time, earliest first. */
    @GuardedBy("lock")
    private final PriorityQueue<Waiting<T>> waiting = new PriorityQueue<>(Comparator.comparingLong(Waiting::due));
    /**
     * How many items wait: written under the lock, read without it, so that a pool without a
     * backoff, whose room is always empty, takes no lock per item ({@link #pollDue},
     * {@link #nanosToNextDue}). A worker that parks an item reads its own write.
     */
    private volatile int size;
    /** Set by {@link #drop()}: nothing is parked from then on. */
    @GuardedBy("lock")
    private boolean dropped;

    RetryRoom(int capacity) {
        this.capacity = capacity;
    }

    /** What {@link #park} did with an item. */
    enum Parked {
        /** It waits in the room. */
        PARKED,
        /** The room is full: the worker waits for the retry itself. */
        FULL,
        /** The run is being cancelled: the worker records the item as cancelled. */
        DROPPED
    }

    /** Parks {@code item} until {@code due}, for attempt {@code nextAttempt}. Never waits. */
    Parked park(T item, int nextAttempt, long due) {
        lock.lock();
        try {
            if (dropped) {
                return Parked.DROPPED;
            }
            if (waiting.size() >= capacity) {
                return Parked.FULL;
            }
            waiting.add(new Waiting<>(item, nextAttempt, due));
            size = waiting.size();
            parkedOrDropped.signalAll();
            return Parked.PARKED;
        } finally {
            lock.unlock();
        }
    }

    /** {@return the earliest item if it is due at {@code now}, taken out of the room; otherwise {@code null}} Never waits. */
    @Nullable Waiting<T> pollDue(long now) {
        if (size == 0) {
            return null;
        }
        lock.lock();
        try {
            Waiting<T> first = waiting.peek();
            Waiting<T> due = first != null && now - first.due() >= 0 ? waiting.poll() : null;
            size = waiting.size();
            return due;
        } finally {
            lock.unlock();
        }
    }

    /** {@return how long until the earliest item is due (at least 1 ns), or {@code Long.MAX_VALUE} if none waits} */
    long nanosToNextDue(long now) {
        if (size == 0) {
            return Long.MAX_VALUE;
        }
        lock.lock();
        try {
            Waiting<T> first = waiting.peek();
            return first == null ? Long.MAX_VALUE : Math.max(1, first.due() - now);
        } finally {
            lock.unlock();
        }
    }

    /**
     * For a worker whose intake has ended: waits until the earliest item is due and takes it;
     * {@return {@code null} once nothing waits, or the room was dropped}
     *
     * @throws InterruptedException if the worker is woken to look at the run's phase
     */
    @Nullable Waiting<T> awaitDue() throws InterruptedException {
        lock.lock();
        try {
            while (!dropped) {
                Waiting<T> first = waiting.peek();
                if (first == null) {
                    return null;
                }
                long left = first.due() - System.nanoTime();
                if (left <= 0) {
                    Waiting<T> due = waiting.poll();
                    size = waiting.size();
                    return due;
                }
                long _ = parkedOrDropped.awaitNanos(left);
            }
            return null;
        } finally {
            lock.unlock();
        }
    }

    /** The run is being cancelled: {@return what waited, with when it was due} Nothing is parked from now on. Never waits. */
    List<Waiting<T>> drop() {
        lock.lock();
        try {
            dropped = true;
            List<Waiting<T>> items = new ArrayList<>(waiting);
            waiting.clear();
            size = 0;
            parkedOrDropped.signalAll();
            return items;
        } finally {
            lock.unlock();
        }
    }
}
