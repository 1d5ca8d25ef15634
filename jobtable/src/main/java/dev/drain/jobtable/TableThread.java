package dev.drain.jobtable;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import dev.drain.safe.Uninterruptibly;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.jspecify.annotations.Nullable;

/**
 * A daemon platform thread of a table's that runs one loop until it is stopped: the lease renewer
 * ({@link Renewal}) and the listener for new work ({@link Listener}). Started at most once, by the
 * first {@link #start}; {@link #stop} ends it and joins it, so that no thread of a table outlives
 * its close; a forgotten close does not keep the JVM alive.
 *
 * <p>{@code start} and {@code stop} come from any thread; the lock orders them, and the loop waits
 * on it between its steps ({@link #awaitTick}), which a stop ends at once. The loop's own state
 * (its connection) is the loop's.
 */
final class TableThread {
    private final String name;
    private final Runnable loop;
    private final ReentrantLock lock = new ReentrantLock();
    /** CONDITION PREDICATE: stopped. The loop waits on it between its steps; signalled by stop. */
    private final Condition isStopped = lock.newCondition();
    /** The thread, once started; never started again after stop. */
    @GuardedBy("lock")
    private @Nullable Thread thread;
    /** Set once, by stop. */
    @GuardedBy("lock")
    private boolean stopped;

    /**
     * @param name the thread's name
     * @param loop what it runs: a loop that ends once {@link #awaitTick} returns false
     */
    TableThread(String name, Runnable loop) {
        this.name = name;
        this.loop = loop;
    }

    /** Starts the thread, unless it is running or has been stopped. */
    void start() {
        lock.lock();
        try {
            if (thread == null && !stopped) {
                thread = Thread.ofPlatform().daemon().name(name).start(loop);
            }
        } finally {
            lock.unlock();
        }
    }

    /**
     * Stops the thread and waits for it to end, whatever interrupts the caller (whose interrupt
     * is kept): it ends within one step of its loop after the signal (a step takes at most a
     * connection, as long as the data source takes to give one, and a statement, within its
     * timeout; the renewer looks at the signal between its two steps). Idempotent.
     */
    void stop() {
        Thread t;
        lock.lock();
        try {
            stopped = true;
            isStopped.signalAll();
            t = thread;
        } finally {
            lock.unlock();
        }
        if (t != null) {
            Uninterruptibly.join(t);
        }
    }

    /** {@return whether it has been stopped} On the loop, between steps that do not wait. */
    boolean isStopped() {
        lock.lock();
        try {
            return stopped;
        } finally {
            lock.unlock();
        }
    }

    /** Waits {@code nanos}; {@return false once stopped} On the loop. */
    boolean awaitTick(long nanos) {
        lock.lock();
        try {
            long left = nanos;
            while (!stopped && left > 0) {
                left = isStopped.awaitNanos(left);
            }
            return !stopped;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt(); // nobody interrupts it but the JVM's end: stop
            return false;
        } finally {
            lock.unlock();
        }
    }
}
