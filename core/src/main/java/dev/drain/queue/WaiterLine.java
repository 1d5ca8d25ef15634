package dev.drain.queue;

import java.util.ArrayDeque;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * One line of blocked calls of a {@link ShutdownQueue}, its getters or its putters: Python's
 * deque of waiter futures, one node per blocked call, each node with a {@link Condition} of its
 * own.
 *
 * <pre>
 *   asyncio                                  here
 *   self._getters.append(fut); await fut     park(): addLast(w); w.wakeup.await()
 *   _wakeup_next: popleft, set_result        wakeNext(): pollFirst, woken = true, signal
 *   shutdown: resolve every future           wakeAll(): pop and signal every waiter
 *   cancelled task removes its future        an interrupted thread removes its waiter
 * </pre>
 *
 * Why not ArrayBlockingQueue's {@code notEmpty.signal()}: Python wakes exactly one waiter per item
 * and removes it from the line <em>before</em> it runs ("in transit"). That is observable
 * ({@code waitingGetters()}, the repr's {@code _getters[n]}, the in-transit cases C3 to C5 of
 * {@code specs/probes.md}, SQ-12), and a shared Condition cannot show who has been woken. With
 * one Condition per waiter the code says what Python says, and a shutdown still wakes everyone:
 * {@link #wakeAll()} signals every node, the {@code signalAll()} of this design.
 *
 * <p>A woken waiter gets neither the item nor the slot: it gets the lock back and re-checks, like
 * a woken asyncio task (gh-83055: barging is allowed). A woken waiter that is interrupted before
 * it runs passes its wake-up on when what it was woken for is still there (Python's
 * {@code if not self.empty() and not getter.cancelled(): self._wakeup_next(...)}), as the
 * {@code Condition.await} contract asks ("redirect the signal to another waiting thread").
 *
 * <p>Not thread-safe by itself: every method is called with the queue's lock held. The queue
 * makes one line of each kind, saying what its waiters are woken for ({@link #wokenForIsThere()}).
 */
abstract class WaiterLine {

    /** One blocked get() or put() call: Python's waiter future. */
    private static final class Waiter {
        /** The thread making the call. */
        final Thread thread = Thread.currentThread();
        /** CONDITION PREDICATE: woken. Signalled once, by whoever removes this waiter from its line. */
        final Condition wakeup;
        /** Set when this waiter is removed from its line and woken; guarded by the queue's lock. */
        boolean woken;

        Waiter(Condition wakeup) {
            this.wakeup = wakeup;
        }
    }

    /** The queue's lock, which guards this line. */
    private final ReentrantLock lock;
    /** Blocked calls, longest-waiting first; guarded by the queue's lock. */
    private final ArrayDeque<Waiter> waiters = new ArrayDeque<>();

    WaiterLine(ReentrantLock lock) {
        this.lock = lock;
    }

    /** {@return whether what a waiter of this line is woken for (an item, or a free slot) is there now} */
    abstract boolean wokenForIsThere();

    /** {@return how many calls wait in line; a woken call that has not run yet is no longer in it} */
    int size() {
        assert lock.isHeldByCurrentThread();
        return waiters.size();
    }

    /**
     * Removes the longest-waiting waiter that is still waiting, if any, and wakes it. Waiters that
     * have stopped waiting (interrupted or timed out, about to leave the line themselves) are
     * removed and skipped, as asyncio's {@code _wakeup_next} skips futures that are done. An
     * interrupt that has not reached its waiter yet is not visible here; that waiter is woken,
     * and passes the wake-up on when it runs (see {@link #park}).
     */
    void wakeNext() {
        assert lock.isHeldByCurrentThread();
        if (waiters.isEmpty()) {
            return; // the common case on the hot path: two index reads, not a poll of the array
        }
        for (Waiter next; (next = waiters.pollFirst()) != null; ) {
            if (lock.hasWaiters(next.wakeup)) {
                wake(next);
                return;
            }
        }
    }

    /** Removes every waiter and wakes each: they wait for different outcomes now, and each re-checks. */
    void wakeAll() {
        assert lock.isHeldByCurrentThread();
        for (Waiter next; (next = waiters.pollFirst()) != null; ) {
            wake(next);
        }
    }

    private static void wake(Waiter waiter) {
        waiter.woken = true;
        waiter.wakeup.signal(); // one waiter per Condition: signal() is signalAll() here
    }

    /**
     * Waits at the back of the line until woken, for at most {@code nanos} if {@code timed}.
     * Returns the time left (meaningless if not timed). On return the caller is out of the line
     * either way, and re-checks the queue.
     *
     * <p>BLOCKS-UNTIL: woken, or the timeout passes, or interrupted. If interrupted, leaves the
     * line and throws; if it had been woken already, it first passes the wake-up on to the next
     * in line when what it was woken for is still there, so that nothing is stranded.
     */
    long park(boolean timed, long nanos) throws InterruptedException {
        assert lock.isHeldByCurrentThread();
        Waiter me = new Waiter(lock.newCondition());
        waiters.addLast(me);
        try {
            while (!me.woken) { // await may return spuriously
                if (!timed) {
                    me.wakeup.await();
                } else if (nanos <= 0) {
                    waiters.remove(me); // timed out, still in line
                    return 0;
                } else {
                    nanos = me.wakeup.awaitNanos(nanos);
                }
            }
        } catch (InterruptedException e) {
            leaveAfterInterrupt(me);
            throw e;
        }
        if (Thread.interrupted()) {
            // Woken, then interrupted before it ran: Python raises CancelledError here.
            leaveAfterInterrupt(me);
            throw new InterruptedException("interrupted after being woken");
        }
        return nanos;
    }

    private void leaveAfterInterrupt(Waiter me) {
        if (!me.woken) {
            waiters.remove(me);
        } else if (wokenForIsThere()) {
            wakeNext(); // the item (or slot) it was woken for is still there: pass it on
        }
    }

    /**
     * Whether {@code thread} waits in this line and is still parked there: false once an interrupt
     * or a timeout has reached it (a test seam; see {@code ShutdownQueue.isParkedInLine}).
     */
    boolean isParked(Thread thread) {
        assert lock.isHeldByCurrentThread();
        for (Waiter waiter : waiters) {
            if (waiter.thread == thread && lock.hasWaiters(waiter.wakeup)) {
                return true;
            }
        }
        return false;
    }
}
