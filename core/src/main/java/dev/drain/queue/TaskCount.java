package dev.drain.queue;

import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A {@link ShutdownQueue}'s unfinished tasks and the {@code join()} that waits for them: asyncio's
 * {@code _unfinished_tasks} and its {@code _finished} event.
 *
 * <p>The event is set exactly when the count is zero; instead of an event this counts how many
 * times the count has come down to zero (the <em>epoch</em>). A joiner notes the epoch and waits
 * for it to change: it returns once the count has been zero at some moment after it started,
 * even if a later put raised it again before the joiner ran (asyncio checks once; threading's
 * {@code queue.Queue} would loop).
 *
 * <p>Not thread-safe by itself: every method is called with the queue's lock held.
 */
final class TaskCount {
    /** The queue's lock, which guards this count. */
    private final ReentrantLock lock;
    /** CONDITION PREDICATE: countReachedZero (the epoch has changed since the joiner started). */
    private final Condition countReachedZero;
    /** +1 per put, -1 per taskDone(), -1 per item an immediate shutdown drains (never below 0). */
    private int unfinished;
    /** How many times {@link #unfinished} has come down to zero: asyncio's {@code _finished.set()}. */
    private long zeroEpoch;
    /** Joiners waiting for the current epoch to end; reset to zero when it ends (they are woken). */
    private int joiners;

    TaskCount(ReentrantLock lock) {
        this.lock = lock;
        this.countReachedZero = lock.newCondition();
    }

    int unfinished() {
        assert lock.isHeldByCurrentThread();
        return unfinished;
    }

    int joiners() {
        assert lock.isHeldByCurrentThread();
        return joiners;
    }

    /** A put succeeded. */
    void added() {
        assert lock.isHeldByCurrentThread();
        unfinished++;
    }

    /** Python's {@code task_done()}. */
    void done() {
        assert lock.isHeldByCurrentThread();
        if (unfinished <= 0) {
            throw new IllegalStateException("taskDone() called too many times");
        }
        unfinished--;
        releaseJoinersIfZero();
    }

    /** An immediate shutdown removed one item: one task less, but never below zero (the clamp). */
    void drainedOne() {
        assert lock.isHeldByCurrentThread();
        if (unfinished > 0) {
            unfinished--;
        }
    }

    /** asyncio's {@code if self._unfinished_tasks == 0: self._finished.set()}: ends the epoch, wakes every joiner. */
    void releaseJoinersIfZero() {
        assert lock.isHeldByCurrentThread();
        if (unfinished == 0) {
            zeroEpoch++;
            joiners = 0;
            countReachedZero.signalAll(); // every joiner waits for the same outcome
        }
    }

    /**
     * Waits until the count has reached zero since the call began, for at most {@code nanos} if
     * {@code timed}; {@return whether it did}
     *
     * <p>BLOCKS-UNTIL: countReachedZero, or the timeout passes.
     */
    boolean awaitZero(boolean timed, long nanos) throws InterruptedException {
        assert lock.isHeldByCurrentThread();
        if (unfinished == 0) {
            return true;
        }
        long epoch = zeroEpoch;
        joiners++;
        try {
            while (zeroEpoch == epoch) {
                if (!timed) {
                    countReachedZero.await();
                } else if (nanos <= 0) {
                    return false;
                } else {
                    nanos = countReachedZero.awaitNanos(nanos);
                }
            }
        } finally {
            if (zeroEpoch == epoch) {
                joiners--; // leaving early: still counted in this epoch
            }
        }
        if (Thread.interrupted()) {
            throw new InterruptedException("interrupted after join() was released");
        }
        return true;
    }
}
