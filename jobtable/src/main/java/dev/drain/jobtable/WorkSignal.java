package dev.drain.jobtable;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;

/**
 * "There may be work to claim": what a stream that found nothing waits for (JT-2, JT-13). Signalled
 * when this table enqueues, releases or requeues, when the listener hears a notification of a
 * commit that did ({@link Listener}), and when a suspect leaves the table (JT-3); a stream being
 * closed wakes the waiters without a signal ({@link #wakeToGiveUp}).
 * A waiter reads the {@link #generation} before its claim and waits only if no signal came since,
 * so a signal between the claim and the wait is never missed.
 *
 * <p>Any thread signals; the pool's producer (a stream's caller) waits. Guarded by its lock.
 */
final class WorkSignal {
    private final ReentrantLock lock = new ReentrantLock();
    /** CONDITION PREDICATE: the generation moved past the one a waiter saw. */
    private final Condition generationMoved = lock.newCondition();
    /** How many signals there have been. */
    @GuardedBy("lock")
    private long generation;
    /** How many threads wait in {@link #await} now: for tests. */
    @GuardedBy("lock")
    private int waiting;

    /** {@return how many signals there have been: read before a claim, given to {@link #await}} */
    long generation() {
        lock.lock();
        try {
            return generation;
        } finally {
            lock.unlock();
        }
    }

    /** Wakes every waiter: there may be work. */
    void signal() {
        lock.lock();
        try {
            generation++;
            generationMoved.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /**
     * Wakes every waiter to look at its {@code giveUp} again, without a signal: a stream being
     * closed ends its wait, and the other streams go back to theirs (they would claim for nothing).
     */
    void wakeToGiveUp() {
        lock.lock();
        try {
            generationMoved.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /**
     * Waits until a signal comes after generation {@code seen}, or {@code nanos} pass, or
     * {@code giveUp} says so (looked at on each signal), or the calling thread is interrupted (the
     * interrupt is kept). {@return false if it was interrupted or gave up: the stream ends}
     */
    boolean await(long seen, long nanos, BooleanSupplier giveUp) {
        if (Thread.currentThread().isInterrupted()) {
            return false; // the pool stops pulling: the stream ends, whether a signal came or not
        }
        lock.lock();
        try {
            waiting++;
            try {
                long left = nanos;
                while (generation == seen && left > 0 && !giveUp.getAsBoolean()) {
                    left = generationMoved.awaitNanos(left);
                }
                return !giveUp.getAsBoolean();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            } finally {
                waiting--;
            }
        } finally {
            lock.unlock();
        }
    }

    /** {@return how many threads wait for work now} For tests. */
    int waiting() {
        lock.lock();
        try {
            return waiting;
        } finally {
            lock.unlock();
        }
    }

    /** {@return {@code d} in nanoseconds, for {@link #await}} */
    static long nanos(java.time.Duration d) {
        return TimeUnit.NANOSECONDS.convert(d);
    }
}
