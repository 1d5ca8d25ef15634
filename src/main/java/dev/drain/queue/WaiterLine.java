package dev.drain.queue;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.ArrayDeque;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;
import org.jspecify.annotations.Nullable;

/**
 * One line of blocked calls of a {@link ShutdownQueue}, its getters or its putters: Python's
 * deque of waiter futures, one node per blocked call, each node parked on its own.
 *
 * <pre>
 *   asyncio                                  here
 *   self._getters.append(fut); await fut     park(): addLast(w); unlock; LockSupport.park
 *   _wakeup_next: popleft, set_result        wakeNext(): pollFirst, WAITING -&gt; WOKEN
 *   shutdown: resolve every future           wakeAll(): the same for every waiter
 *   the woken task runs, in its turn         Wakeups.release(): RESUMING, or SHUT_OUT, and unpark
 *   cancelled task removes its future        an interrupted waiter: WAITING -&gt; GAVE_UP, leaves
 * </pre>
 *
 * Why not ArrayBlockingQueue's {@code notEmpty.signal()}: Python wakes exactly one waiter per item
 * and removes it from the line <em>before</em> it runs ("in transit"). That is observable
 * ({@code waitingGetters()}, the repr's {@code _getters[n]}, the in-transit cases C3 to C5 of
 * {@code specs/shutdown-queue.md}), and a shared Condition cannot show who has been woken.
 *
 * <h2>The protocol</h2>
 * Each waiter's state says how its wait ended, and it is decided exactly once, by a
 * compare-and-set from {@code WAITING}: either a waker (holding the queue's lock) wins and the
 * waiter is {@code WOKEN}, or the waiter itself wins, interrupted or timed out, without the lock,
 * and it has {@code GAVE_UP}. A waker skips a waiter that gave up, as asyncio's
 * {@code _wakeup_next} skips a future that is done; a waiter that lost the race was woken, and
 * if it was interrupted it passes the wake-up on when it runs.
 *
 * <p>A woken waiter is not let go at once. A thread woken inside {@link ShutdownQueue#atomically}
 * must not run before the steps are over, and woken threads that re-check the queue must do so in
 * the order they were woken, as Python's woken tasks run. So the queue collects its woken waiters
 * ({@link Wakeups}) and releases them when it lets go of its lock for the last time: each takes the
 * lock in its turn ({@code RESUMING}) and re-checks the queue, like a woken asyncio task
 * (gh-83055: barging by callers that were not waiting is allowed).
 *
 * <h2>The way out without the lock</h2>
 * Once a queue is shut down, a woken putter can only throw {@code QueueShutDown}, and so can a
 * woken getter once the queue is also empty: shutdown is permanent, and nothing is added after
 * it. Such waiters are released {@code SHUT_OUT} ({@link #isShutOut()}): they need no turn and
 * throw without taking the lock again. That is what lets a shutdown wake ten thousand getters at
 * once instead of one after another through the lock (decision 0024). An interrupt still wins: a
 * shut-out waiter that is interrupted throws {@code InterruptedException}, as Python raises
 * {@code CancelledError} there, and has nothing to pass on, because nobody waits in line on a
 * shut-down queue.
 *
 * <p>Not thread-safe by itself: every method is called with the queue's lock held ({@link #park}
 * lets go of it while it waits). The queue makes one line of each kind, saying what its waiters
 * are woken for ({@link #wokenForIsThere()}) and when they are shut out.
 */
abstract class WaiterLine {

    /** How a waiter's wait ends. */
    private enum State {
        /** In line (or just taken out of it by a waker that has yet to decide), parked. */
        WAITING,
        /** Interrupted or timed out before anybody woke it: it leaves the line itself. */
        GAVE_UP,
        /** Taken out of the line and woken, but not released yet: the steps that woke it, or those woken before it, are not over. */
        WOKEN,
        /** Released, and its turn has come: it takes the lock and re-checks the queue. */
        RESUMING,
        /** Released, and the queue can only say {@code QueueShutDown} to it, for good: it leaves without the lock. */
        SHUT_OUT
    }

    /** One blocked get() or put() call: Python's waiter future. */
    static final class Waiter {
        private static final VarHandle STATE;

        static {
            try {
                STATE = MethodHandles.lookup().findVarHandle(Waiter.class, "state", State.class);
            } catch (ReflectiveOperationException e) {
                throw new ExceptionInInitializerError(e);
            }
        }

        /** The thread making the call. */
        private final Thread thread = Thread.currentThread();
        /** The line it waits in. */
        private final WaiterLine line;
        /**
         * WAITING until decided by one compare-and-set: a waker's, to WOKEN, or the waiter's own, to
         * GAVE_UP. A WOKEN waiter is then released (under the lock) as SHUT_OUT, or as RESUMING when
         * its turn comes. Volatile: the waiter reads it without the lock.
         */
        private volatile State state = State.WAITING;
        /** The next waiter released in the same hold of the lock, to unpark after it; guarded by the queue's lock. */
        private @Nullable Waiter nextReleased;

        private Waiter(WaiterLine line) {
            this.line = line;
        }

        /** {@return whether this call won the waiter: it was waiting, and now it is woken} (by a waker, holding the lock) */
        private boolean wake() {
            return STATE.compareAndSet(this, State.WAITING, State.WOKEN);
        }

        /** {@return whether this call won the waiter: nobody had woken it, and now it has given up} (by the waiter) */
        private boolean giveUp() {
            return STATE.compareAndSet(this, State.WAITING, State.GAVE_UP);
        }
    }

    /**
     * The woken waiters of a queue's two lines, in the order they were woken: asyncio's ready
     * queue. They are released when the queue lets go of its lock for the last time, and those
     * that must re-check the queue take the lock one at a time, in that order: the first has its
     * turn, and the next gets it when the first lets go of the lock. That is the order in which
     * Python's woken tasks run, and the recorded traces observe it (the first woken getter takes
     * the first item). Those that a shutdown has shut out need no turn, and go at once.
     *
     * <p>Not thread-safe by itself: every method but {@link #unpark} is called with the queue's
     * lock held.
     */
    static final class Wakeups {
        private final ReentrantLock lock;
        /** Woken in this hold of the lock, not released yet, first woken first; guarded by the queue's lock. */
        private final ArrayDeque<Waiter> woken = new ArrayDeque<>();
        /**
         * Released to re-check the queue, first woken first: the first is RESUMING (its turn), the
         * others WOKEN; guarded by the queue's lock.
         */
        private final ArrayDeque<Waiter> resuming = new ArrayDeque<>();
        /**
         * The waiters the current {@link #release} has released, first released first, chained
         * through {@code nextReleased}; guarded by the queue's lock.
         */
        private @Nullable Waiter released;
        /** The last of the chain that starts at {@link #released}; guarded by the queue's lock. */
        private @Nullable Waiter lastReleased;

        Wakeups(ReentrantLock lock) {
            this.lock = lock;
        }

        /**
         * Called just before the queue lets go of its lock for the last time, when the steps that
         * woke these waiters are over. Ends the turn of the caller if it had it, releases the
         * shut-out waiters, puts the others in turn, and gives the turn to the first in line if
         * nobody has it. {@return the released waiters, for {@link #unpark} once the lock is free}
         * (a woken thread that ran at once would find the lock still held, and park again).
         */
        @Nullable Waiter release() {
            assert lock.getHoldCount() == 1;
            if (woken.isEmpty() && resuming.isEmpty()) {
                return null; // the common case on the hot path: nobody woken, nobody's turn
            }
            Waiter first = resuming.peekFirst();
            if (first != null && first.thread == Thread.currentThread()) {
                resuming.pollFirst(); // its turn is over
            }
            released = null;
            lastReleased = null;
            for (Waiter w; (w = woken.pollFirst()) != null; ) {
                if (w.line.isShutOut()) {
                    release(w, State.SHUT_OUT);
                } else {
                    resuming.addLast(w);
                }
            }
            Waiter next = resuming.peekFirst();
            if (next != null && next.state == State.WOKEN) {
                release(next, State.RESUMING);
            }
            return released;
        }

        private void release(Waiter w, State state) {
            w.state = state;
            if (lastReleased == null) {
                released = w;
            } else {
                lastReleased.nextReleased = w;
            }
            lastReleased = w;
        }

        /** Unparks the waiters that {@link #release} released; called right after the lock is let go. */
        static void unpark(@Nullable Waiter released) {
            for (Waiter w = released; w != null; w = w.nextReleased) {
                LockSupport.unpark(w.thread);
            }
        }
    }

    /** The queue's lock, which guards this line. */
    private final ReentrantLock lock;
    /** The queue's woken waiters, shared with its other line. */
    private final Wakeups wakeups;
    /** Blocked calls, longest-waiting first; guarded by the queue's lock. */
    private final ArrayDeque<Waiter> waiters = new ArrayDeque<>();

    WaiterLine(ReentrantLock lock, Wakeups wakeups) {
        this.lock = lock;
        this.wakeups = wakeups;
    }

    /** {@return whether what a waiter of this line is woken for (an item, or a free slot) is there now} */
    abstract boolean wokenForIsThere();

    /**
     * {@return whether a woken waiter of this line can only get {@code QueueShutDown} from now on,
     * whatever happens later} True for putters once the queue is shut down, and for getters once it
     * is also empty: both states are permanent.
     */
    abstract boolean isShutOut();

    /** {@return how many calls wait in line; a woken call that has not run yet is no longer in it} */
    int size() {
        assert lock.isHeldByCurrentThread();
        return waiters.size();
    }

    /**
     * Removes the longest-waiting waiter that is still waiting, if any, and wakes it. Waiters that
     * have given up (interrupted or timed out, about to leave the line themselves) are removed and
     * skipped, as asyncio's {@code _wakeup_next} skips futures that are done.
     */
    void wakeNext() {
        assert lock.isHeldByCurrentThread();
        if (waiters.isEmpty()) {
            return; // the common case on the hot path: two index reads, not a poll of the array
        }
        for (Waiter next; (next = waiters.pollFirst()) != null; ) {
            if (next.wake()) {
                wakeups.woken.addLast(next);
                return;
            }
        }
    }

    /** Removes every waiter and wakes each: they wait for different outcomes now, and each re-checks. */
    void wakeAll() {
        assert lock.isHeldByCurrentThread();
        for (Waiter next; (next = waiters.pollFirst()) != null; ) {
            if (next.wake()) {
                wakeups.woken.addLast(next);
            }
        }
    }

    /**
     * Waits at the back of the line until woken and released, for at most {@code nanos} if
     * {@code timed} (a waiter already woken waits for its turn without a timeout, as
     * {@code Condition.awaitNanos} waits for the lock). Enters with the lock held once and lets go
     * of it while parked. Returns with the lock held again and the time left (meaningless if not
     * timed), out of the line either way, for the caller to re-check the queue.
     *
     * <p>BLOCKS-UNTIL: released, or the timeout passes, or interrupted. If interrupted, leaves
     * the line and throws; if it had been woken already, it first passes the wake-up on to the next
     * in line when what it was woken for is still there, so that nothing is stranded.
     *
     * @throws QueueShutDown <em>without the lock</em>, if it was woken and shut out: the caller
     *     must not unlock
     */
    long park(boolean timed, long nanos) throws InterruptedException, QueueShutDown {
        assert lock.getHoldCount() == 1;
        Waiter me = new Waiter(this);
        waiters.addLast(me);
        Waiter released = wakeups.release(); // a woken caller that waits again ends its turn
        lock.unlock();
        Wakeups.unpark(released);
        long deadline = timed ? System.nanoTime() + nanos : 0L;
        boolean interrupted = false;
        for (State s; (s = me.state) == State.WAITING || s == State.WOKEN; ) {
            if (Thread.interrupted()) {
                interrupted = true;
                me.giveUp(); // lost if a waker got there first: then it was woken
                break;
            }
            if (!timed || s == State.WOKEN) {
                LockSupport.park(this);
            } else if ((nanos = deadline - System.nanoTime()) <= 0) {
                me.giveUp(); // timed out, unless woken in the meantime; the loop re-reads
            } else {
                LockSupport.parkNanos(this, nanos);
            }
        }
        if (me.state == State.SHUT_OUT) {
            if (interrupted || Thread.interrupted()) {
                throw new InterruptedException("interrupted after being woken by a shutdown");
            }
            throw new QueueShutDown();
        }
        lock.lock(); // uninterruptibly, as Condition.await: how the wait ended is decided
        State s = me.state;
        if (s == State.GAVE_UP) {
            waiters.remove(me); // unless a waker skipped it already
            if (interrupted) {
                throw new InterruptedException();
            }
            return 0; // timed out
        }
        if (interrupted || Thread.interrupted()) {
            // Woken, then interrupted before it ran: Python raises CancelledError here.
            if (s == State.WOKEN) {
                wakeups.resuming.remove(me); // it did not wait for its turn
            }
            if (wokenForIsThere()) {
                wakeNext(); // the item (or slot) it was woken for is still there: pass it on
            }
            throw new InterruptedException("interrupted after being woken");
        }
        return timed ? deadline - System.nanoTime() : 0L;
    }

    /**
     * Whether {@code thread} waits in this line and has not given up: false once an interrupt or a
     * timeout has reached it (a test seam; see {@code ShutdownQueue.isParkedInLine}).
     */
    boolean isParked(Thread thread) {
        assert lock.isHeldByCurrentThread();
        for (Waiter waiter : waiters) {
            if (waiter.thread == thread && waiter.state == State.WAITING) {
                return true;
            }
        }
        return false;
    }
}
