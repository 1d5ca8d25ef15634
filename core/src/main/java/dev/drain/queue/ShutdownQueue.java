package dev.drain.queue;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import org.jspecify.annotations.Nullable;

/**
 * A thread-safe queue, bounded or not, that can be shut down: Python 3.13's
 * {@code asyncio.Queue}, operation for operation, for (virtual) threads.
 *
 * <h2>What it is</h2>
 * Producers {@link #put put} items and consumers {@link #get get} them, in first-in-first-out
 * order ({@link #fifo fifo}, or the constructor), last-in-first-out order ({@link #lifo lifo}), or
 * smallest first ({@link #priority(int) priority}). A queue created with {@code maxsize > 0} holds
 * at most that many items; {@code maxsize <= 0} means unbounded. Every successful put also counts
 * one <em>unfinished task</em>; a consumer that has finished with an item calls {@link #taskDone()},
 * and {@link #join()} waits until the count comes down to zero.
 *
 * <h2>How it blocks</h2>
 * {@code put} blocks while the queue is full, {@code get} while it is empty, {@code join} while
 * tasks are unfinished. Each has a form with a timeout, and {@code put} and {@code get} have
 * {@code Nowait} forms that throw {@link QueueFull} or {@link QueueEmpty} instead of blocking.
 * Blocked callers wait in line: a put wakes the longest-waiting getter, a get wakes the
 * longest-waiting putter. A woken caller re-checks the queue when it runs again, as Python's
 * woken task does, so another thread may take the item or the free slot first (barging), and the
 * woken caller then waits again at the back of the line.
 *
 * <h2>How it shuts down</h2>
 * {@link #shutdown()} (graceful) stops all further puts, lets consumers drain what is queued, and
 * wakes <em>every</em> blocked getter and putter: putters throw {@link QueueShutDown}, getters take
 * an item if one is left or throw {@code QueueShutDown} once the queue is empty.
 * {@link #shutdown(boolean) shutdown(true)} (immediate) also removes every queued item at once,
 * subtracts one unfinished task per removed item (never below zero), wakes {@code join()} if
 * that brings the count to zero, and returns the removed items. Shutdown is permanent, never
 * blocks (beyond taking the lock), and may be repeated or mixed: an immediate shutdown after a
 * graceful one drains what is left; a graceful one after an immediate one does nothing. It throws
 * only what a priority queue's comparator throws during an immediate shutdown's drain: the queue is
 * shut down and every blocked getter and putter woken all the same, but the drain stops where the
 * comparator failed and {@code join()} is not released (SQ-20; see {@link #shutdown(boolean)}).
 * {@code taskDone()} and {@code join()} ignore shutdown: items taken before it are still
 * acknowledged one by one, and {@code join()} returns only when the count reaches zero.
 * {@snippet file="TourSnippets.java" region="graceful"}
 * {@snippet file="TourSnippets.java" region="immediate"}
 *
 * <table class="striped">
 *   <caption>Operations by queue state</caption>
 *   <thead>
 *     <tr><th>operation</th><th>open</th><th>shut down (graceful), items left</th>
 *         <th>shut down and empty (as after an immediate shutdown)</th></tr>
 *   </thead>
 *   <tbody>
 *     <tr><td>{@code put}, {@code put(timeout)}</td><td>adds, blocking while full</td>
 *         <td>{@code QueueShutDown}</td><td>{@code QueueShutDown}</td></tr>
 *     <tr><td>{@code putNowait}</td><td>adds, or {@code QueueFull}</td>
 *         <td>{@code QueueShutDown} (even when full)</td><td>{@code QueueShutDown}</td></tr>
 *     <tr><td>{@code get}, {@code get(timeout)}</td><td>takes, blocking while empty</td>
 *         <td>takes</td><td>{@code QueueShutDown}</td></tr>
 *     <tr><td>{@code getNowait}</td><td>takes, or {@code QueueEmpty}</td>
 *         <td>takes</td><td>{@code QueueShutDown}</td></tr>
 *     <tr><td>{@code taskDone}</td><td colspan="3">decrements the count, or
 *         {@code IllegalStateException} at zero: the same in every state</td></tr>
 *     <tr><td>{@code join}</td><td colspan="3">returns once the count has been zero since the call
 *         began: the same in every state</td></tr>
 *     <tr><td>{@code shutdown(false)}</td><td>shuts down, wakes all waiters</td>
 *         <td>no effect</td><td>no effect</td></tr>
 *     <tr><td>{@code shutdown(true)}</td><td>shuts down, drains, wakes all</td>
 *         <td>drains</td><td>no effect</td></tr>
 *   </tbody>
 * </table>
 *
 * <h2>Interruption</h2>
 * An interrupt is Python's task cancellation. A blocking method called with the interrupt status
 * set, or interrupted while blocked, throws {@link InterruptedException} (clearing the status) and
 * leaves the queue as it was. If the thread had already been woken to take an item or a slot when
 * the interrupt came, it passes that wake-up on to the next waiter, so nothing is stranded; and a
 * thread that a shutdown woke but that is interrupted before it runs again throws
 * {@code InterruptedException}, as Python raises {@code CancelledError} there, not
 * {@code QueueShutDown}.
 *
 * <h2>Timeouts</h2>
 * The timed forms follow Python's {@code queue.Queue}: where a shutdown ends the call, it wins over
 * the timeout and over the argument check (a negative timeout throws {@code QueueShutDown}, not
 * {@code IllegalArgumentException}, from {@code put(item, timeout)} on a shut-down queue and from
 * {@code get(timeout)} on a shut-down, empty one; {@code join(timeout)}, which a shutdown does not
 * end, refuses a negative timeout in every state); a zero timeout does not wait; a timeout that
 * passes ends in {@code QueueEmpty}, {@code QueueFull}, or {@code false} from {@code join(timeout)}.
 *
 * <h2>Memory consistency effects</h2>
 * Actions in a thread before it puts an item happen-before actions after another thread gets that
 * item, or receives it from {@code shutdown(true)}. Actions before {@code shutdown} happen-before
 * actions after another thread observes it (by {@code QueueShutDown} or {@link #isShutdown()}).
 * Actions before a {@code taskDone} call happen-before actions after a {@code join} that it
 * released returns.
 *
 * <h2>Nulls</h2>
 * Items may not be {@code null}; passing {@code null} to any method throws
 * {@link NullPointerException}.
 *
 * <h2>Beyond Python</h2>
 * {@code shutdown(true)} returns the items it removed, in the order {@code get} would have
 * returned them; waiter counts are observable ({@link #waitingGetters()}, {@link #waitingPutters()},
 * {@link #waitingJoiners()}); {@link #toString()} prints Python's {@code str(queue)}, character
 * for character when the items print as Python prints them (integers, for example). The three
 * exceptions are outcomes and carry no stack trace unless {@code -Ddev.drain.queue.stackTraces=true}
 * (filling one in would be most of the cost of waking a blocked thread at shutdown).
 *
 * <p>The numbered clauses ({@code SQ-01} ...) that the tests cite are in
 * {@code specs/shutdown-queue.md}; the Python sources are {@code Lib/asyncio/queues.py} and
 * {@code Lib/queue.py} of CPython 3.13.
 *
 * @param <T> the type of the items
 */
public final class ShutdownQueue<T> {
    /*
     * Implementation notes.
     *
     * One lock guards all state, as in ArrayBlockingQueue, but instead of two shared conditions
     * (notEmpty, notFull) every blocked get() or put() call waits in a WaiterLine, on a Condition
     * of its own: asyncio's waiter future, which lets the queue say who has been woken (the
     * in-transit cases). The unfinished count and join() are a TaskCount: asyncio's
     * _unfinished_tasks and _finished event, kept as an epoch of "the count reached zero". The
     * three orders are a Storage. This class holds the state machine: OPEN, then SHUTDOWN
     * (sticky), with an immediate shutdown's drain as an action, not a state, as in Python.
     *
     * Woken threads reacquire the lock in the order they were signalled (ReentrantLock's wait
     * queue is FIFO for threads already queued), which gives Python's resumption order after a
     * shutdown: joiners, then getters, then putters. Nothing relies on it for correctness; the
     * CPython-recorded traces (specs/traces) observe it.
     *
     * Where Java deliberately differs: interrupts for CancelledError (and a pre-interrupted
     * blocking call throws at once, as every java.util.concurrent blocking method does), blocking
     * threads for await, timed forms from threading's queue.Queue, NullPointerException for null
     * items, and shutdown(true) returns the drained items. See specs/decisions/.
     */

    /** Main lock guarding all mutable state below. */
    private final ReentrantLock lock = new ReentrantLock();

    private final int maxsize;

    @GuardedBy("lock")
    private final Storage<T> items;

    /** Blocked get() calls: woken for an item. */
    @GuardedBy("lock")
    private final WaiterLine getters;

    /** Blocked put() calls: woken for a free slot. */
    @GuardedBy("lock")
    private final WaiterLine putters;

    /** The unfinished tasks, and the joiners waiting for them. */
    @GuardedBy("lock")
    private final TaskCount tasks = new TaskCount(lock);

    /** Set once by shutdown(); never cleared. */
    @GuardedBy("lock")
    private boolean shutdown;

    /** The thread running {@link #atomically} steps, if any; blocking calls are refused on it. */
    @GuardedBy("lock")
    private @Nullable Thread atomic;

    /**
     * Creates a first-in-first-out queue: Python's {@code asyncio.Queue(maxsize)}.
     *
     * @param maxsize the most items the queue holds; zero or negative means unbounded
     */
    public ShutdownQueue(int maxsize) {
        this(maxsize, new Storage.Fifo<>());
    }

    @SuppressWarnings("GuardedBy") // a line asks what it is woken for only from park(), with the lock held
    private ShutdownQueue(int maxsize, Storage<T> items) {
        this.maxsize = maxsize;
        this.items = items;
        this.getters = new WaiterLine(lock) {
            @Override
            boolean wokenForIsThere() {
                return !ShutdownQueue.this.items.isEmpty(); // an item
            }
        };
        this.putters = new WaiterLine(lock) {
            @Override
            boolean wokenForIsThere() {
                return !isFull(); // a free slot
            }
        };
    }

    /**
     * Creates a first-in-first-out queue: Python's {@code asyncio.Queue(maxsize)}.
     *
     * @param maxsize the most items the queue holds; zero or negative means unbounded
     * @param <T> the type of the items
     * @return a new, open, empty queue
     */
    public static <T> ShutdownQueue<T> fifo(int maxsize) {
        return new ShutdownQueue<>(maxsize, new Storage.Fifo<>());
    }

    /**
     * Creates a last-in-first-out queue: Python's {@code asyncio.LifoQueue(maxsize)}. An
     * immediate shutdown drains it in the same order, newest first.
     *
     * @param maxsize the most items the queue holds; zero or negative means unbounded
     * @param <T> the type of the items
     * @return a new, open, empty queue
     */
    public static <T> ShutdownQueue<T> lifo(int maxsize) {
        return new ShutdownQueue<>(maxsize, new Storage.Lifo<>());
    }

    /**
     * Creates a queue that hands out its smallest item first, by natural order: Python's
     * {@code asyncio.PriorityQueue(maxsize)}. An immediate shutdown drains it in the same order.
     *
     * @param maxsize the most items the queue holds; zero or negative means unbounded
     * @param <T> the type of the items
     * @return a new, open, empty queue
     */
    public static <T extends Comparable<? super T>> ShutdownQueue<T> priority(int maxsize) {
        return priority(maxsize, Comparator.<T>naturalOrder());
    }

    /**
     * Creates a queue that hands out its smallest item first, by {@code order}: Python's
     * {@code asyncio.PriorityQueue(maxsize)} with items that compare by {@code order}. Items are
     * arranged exactly as Python's {@code heapq} arranges them, so items that compare equal come
     * out in the order Python would give them.
     *
     * @param maxsize the most items the queue holds; zero or negative means unbounded
     * @param order how items compare; an exception it throws propagates from the put or get (or
     *     the immediate shutdown) that compared
     * @param <T> the type of the items
     * @return a new, open, empty queue
     */
    public static <T> ShutdownQueue<T> priority(int maxsize, Comparator<? super T> order) {
        return new ShutdownQueue<>(maxsize, new Storage.Heap<>(Objects.requireNonNull(order, "order")));
    }

    // ---- put ---------------------------------------------------------------------------------

    /**
     * Adds {@code item}, waiting while the queue is full.
     *
     * <p>BLOCKS-UNTIL: not full, or shut down.
     *
     * @param item the item to add
     * @throws InterruptedException if interrupted before or while waiting; the queue is unchanged
     * @throws QueueShutDown if the queue is shut down, before or while waiting; every blocked
     *     putter is woken by a shutdown and throws this
     */
    public void put(T item) throws InterruptedException, QueueShutDown {
        Objects.requireNonNull(item, "item");
        lock.lockInterruptibly();
        try {
            requireNotAtomic("put()");
            while (isFull()) {
                requireOpen();
                putters.park(false, 0);
            }
            // Python's put_nowait from here: shut down (before or while waiting) wins over room.
            requireOpen();
            addLocked(item);
        } finally {
            lock.unlock();
        }
    }

    /**
     * Adds {@code item}, waiting at most {@code timeout} while the queue is full.
     *
     * <p>BLOCKS-UNTIL: not full, or shut down, or the timeout passes.
     *
     * @param item the item to add
     * @param timeout how long to wait for room; zero means do not wait
     * @throws InterruptedException if interrupted before or while waiting; the queue is unchanged
     * @throws QueueShutDown if the queue is shut down, before or while waiting (this wins over
     *     the timeout and over an invalid timeout)
     * @throws QueueFull if the queue is still full when the timeout passes
     * @throws IllegalArgumentException if {@code timeout} is negative and the queue is open
     */
    public void put(T item, Duration timeout) throws InterruptedException, QueueShutDown, QueueFull {
        Objects.requireNonNull(item, "item");
        long nanos = toNanos(timeout);
        lock.lockInterruptibly();
        try {
            requireNotAtomic("put(timeout)");
            requireOpen(); // before the argument check, as queue.Queue does
            requireNonNegative(timeout);
            while (isFull()) {
                requireOpen();
                if (nanos <= 0) {
                    throw new QueueFull();
                }
                nanos = putters.park(true, nanos);
            }
            requireOpen();
            addLocked(item);
        } finally {
            lock.unlock();
        }
    }

    /**
     * Adds {@code item} if there is room now. Checks shutdown before room: a full queue that is
     * shut down throws {@code QueueShutDown}, not {@code QueueFull}.
     *
     * @param item the item to add
     * @throws QueueShutDown if the queue is shut down
     * @throws QueueFull if the queue is open and full
     */
    public void putNowait(T item) throws QueueShutDown, QueueFull {
        Objects.requireNonNull(item, "item");
        lock.lock();
        try {
            requireOpen();
            if (isFull()) {
                throw new QueueFull();
            }
            addLocked(item);
        } finally {
            lock.unlock();
        }
    }

    // ---- get ---------------------------------------------------------------------------------

    /**
     * Removes and returns the next item, waiting while the queue is empty. After a graceful
     * shutdown it still returns the items left, then throws {@code QueueShutDown}.
     *
     * <p>BLOCKS-UNTIL: not empty, or shut down.
     *
     * @return the next item
     * @throws InterruptedException if interrupted before or while waiting; the queue is unchanged
     * @throws QueueShutDown if the queue is shut down and empty, before or while waiting
     */
    public T get() throws InterruptedException, QueueShutDown {
        lock.lockInterruptibly();
        try {
            requireNotAtomic("get()");
            while (items.isEmpty()) {
                if (shutdown) {
                    throw new QueueShutDown();
                }
                getters.park(false, 0);
            }
            return removeLocked();
        } finally {
            lock.unlock();
        }
    }

    /**
     * Removes and returns the next item, waiting at most {@code timeout} while the queue is empty.
     *
     * <p>BLOCKS-UNTIL: not empty, or shut down, or the timeout passes.
     *
     * @param timeout how long to wait for an item; zero means do not wait
     * @return the next item
     * @throws InterruptedException if interrupted before or while waiting; the queue is unchanged
     * @throws QueueShutDown if the queue is shut down and empty, before or while waiting (this
     *     wins over the timeout and over an invalid timeout)
     * @throws QueueEmpty if the queue is still empty when the timeout passes
     * @throws IllegalArgumentException if {@code timeout} is negative, unless the queue is shut
     *     down and empty
     */
    public T get(Duration timeout) throws InterruptedException, QueueShutDown, QueueEmpty {
        long nanos = toNanos(timeout);
        lock.lockInterruptibly();
        try {
            requireNotAtomic("get(timeout)");
            if (shutdown && items.isEmpty()) {
                throw new QueueShutDown();
            }
            requireNonNegative(timeout);
            while (items.isEmpty()) {
                if (shutdown) {
                    throw new QueueShutDown();
                }
                if (nanos <= 0) {
                    throw new QueueEmpty();
                }
                nanos = getters.park(true, nanos);
            }
            return removeLocked();
        } finally {
            lock.unlock();
        }
    }

    /**
     * Removes and returns the next item if there is one now. Checks for an item before shutdown:
     * a shut-down queue with items left still returns them.
     *
     * @return the next item
     * @throws QueueShutDown if the queue is empty and shut down
     * @throws QueueEmpty if the queue is empty and open
     */
    public T getNowait() throws QueueShutDown, QueueEmpty {
        lock.lock();
        try {
            if (items.isEmpty()) {
                if (shutdown) {
                    throw new QueueShutDown();
                }
                throw new QueueEmpty();
            }
            return removeLocked();
        } finally {
            lock.unlock();
        }
    }

    // ---- task accounting -----------------------------------------------------------------------

    /**
     * Marks one item taken by {@code get} as finished. Works the same before and after either
     * kind of shutdown.
     *
     * @throws IllegalStateException with the message {@code "taskDone() called too many times"}
     *     if there are no unfinished tasks
     */
    public void taskDone() {
        lock.lock();
        try {
            tasks.done();
        } finally {
            lock.unlock();
        }
    }

    /**
     * Waits until every item put has been marked done by {@link #taskDone()} or removed by an
     * immediate shutdown. Returns at once if the count is zero. Checks the count once, as asyncio
     * does: it returns once the count has been zero at some moment after the call began, even if a
     * later put raised it again before this thread ran. Never throws {@code QueueShutDown}, and a
     * shutdown wakes it only by bringing the count to zero.
     *
     * <p>BLOCKS-UNTIL: the unfinished count has reached zero since the call began.
     *
     * @throws InterruptedException if interrupted before or while waiting, or after being released
     *     but before running again
     */
    public void join() throws InterruptedException {
        awaitCountReachedZero(false, 0);
    }

    /**
     * Waits at most {@code timeout} for what {@link #join()} waits for.
     *
     * @param timeout how long to wait; zero means do not wait
     * @return {@code true} if the count was zero, or reached zero, within the timeout
     * @throws InterruptedException if interrupted before or while waiting, or after being released
     *     but before running again
     * @throws IllegalArgumentException if {@code timeout} is negative
     */
    public boolean join(Duration timeout) throws InterruptedException {
        long nanos = toNanos(timeout);
        requireNonNegative(timeout);
        return awaitCountReachedZero(true, nanos);
    }

    private boolean awaitCountReachedZero(boolean timed, long nanos) throws InterruptedException {
        lock.lockInterruptibly();
        try {
            requireNotAtomic("join()");
            return tasks.awaitZero(timed, nanos);
        } finally {
            lock.unlock();
        }
    }

    // ---- shutdown ------------------------------------------------------------------------------

    /**
     * Shuts the queue down gracefully: {@code shutdown(false)}.
     *
     * @see #shutdown(boolean)
     */
    public void shutdown() {
        shutdown(false);
    }

    /**
     * Shuts the queue down; permanent, idempotent, and never blocks (beyond taking the lock). Every
     * later put throws {@code QueueShutDown}; gets do once the queue is empty. Every thread blocked
     * in {@code get} or {@code put} is woken to re-check.
     *
     * <p>If {@code immediate}, also removes every queued item, subtracting one unfinished task per
     * item removed (never below zero), and wakes {@code join()} callers if the count is then zero.
     * Items taken by {@code get} before the shutdown are not affected: their {@code taskDone()}
     * calls still count, and {@code join()} still waits for them.
     *
     * <p>A graceful shutdown never throws, nor does an immediate one on a first-in-first-out or
     * last-in-first-out queue. On a priority queue, the drain compares items, and what the
     * comparator throws propagates from here (SQ-20): the queue is shut down and every blocked
     * getter and putter woken all the same, but the drain stops where it failed (the items drained
     * until then are gone and counted off, the one being taken is lost, the rest stay queued) and
     * {@code join()} is not released.
     *
     * @param immediate {@code false} to let consumers drain the queue, {@code true} to drop what is
     *     queued
     * @return the items an immediate shutdown removed, in the order {@code get} would have
     *     returned them; empty for a graceful shutdown
     */
    public List<T> shutdown(boolean immediate) {
        lock.lock();
        try {
            // 1. Stop the queue from growing; permanent.
            shutdown = true;
            try {
                // 2. If immediate, drain, one unfinished task per item, clamped at zero, and
                //    release join() only if nothing is outstanding (items already taken by get()
                //    still need their taskDone()).
                return immediate ? drainLocked() : List.of();
            } finally {
                // 3. Wake every getter and every putter, not just one: they wait for different
                //    outcomes now (an item that may still be there, or QueueShutDown), and each
                //    re-checks the queue when it runs. This is the signalAll() of
                //    one-Condition-per-waiter. In a finally block, so that a throwing comparator
                //    cannot strand a waiter.
                getters.wakeAll();
                putters.wakeAll();
            }
        } finally {
            lock.unlock();
        }
    }

    // ---- observers -----------------------------------------------------------------------------

    /** {@return the number of items in the queue} */
    public int qsize() {
        lock.lock();
        try {
            return items.size();
        } finally {
            lock.unlock();
        }
    }

    /** {@return whether the queue holds no items} */
    public boolean empty() {
        return qsize() == 0;
    }

    /** {@return whether the queue is bounded and holds {@code maxsize} items} A shut-down queue can be full. */
    public boolean full() {
        lock.lock();
        try {
            return isFull();
        } finally {
            lock.unlock();
        }
    }

    /** {@return the bound given at creation; zero or negative means unbounded} */
    public int maxsize() {
        return maxsize;
    }

    /** {@return whether {@code shutdown} has been called} */
    public boolean isShutdown() {
        lock.lock();
        try {
            return shutdown;
        } finally {
            lock.unlock();
        }
    }

    /** {@return the number of items put and not yet marked done (or drained)} */
    public int unfinishedTasks() {
        lock.lock();
        try {
            return tasks.unfinished();
        } finally {
            lock.unlock();
        }
    }

    /**
     * {@return the number of threads waiting in line in {@code get}} A thread that has been woken
     * but has not run yet is no longer in line (Python's {@code len(q._getters)}).
     */
    public int waitingGetters() {
        lock.lock();
        try {
            return getters.size();
        } finally {
            lock.unlock();
        }
    }

    /**
     * {@return the number of threads waiting in line in {@code put}} A thread that has been woken
     * but has not run yet is no longer in line (Python's {@code len(q._putters)}).
     */
    public int waitingPutters() {
        lock.lock();
        try {
            return putters.size();
        } finally {
            lock.unlock();
        }
    }

    /**
     * {@return the number of threads waiting in {@code join} for the count to reach zero} Threads
     * released by the count reaching zero no longer count, even before they run.
     */
    public int waitingJoiners() {
        lock.lock();
        try {
            return tasks.joiners();
        } finally {
            lock.unlock();
        }
    }

    /**
     * {@return Python's {@code str(queue)} for this state} For example
     * {@code <Queue maxsize=2 _queue=[1, 2] _putters[1] tasks=2 shutdown>}: the class name
     * ({@code Queue}, {@code LifoQueue} or {@code PriorityQueue}), {@code maxsize}, then only what is
     * not empty or zero: the items in storage order, the waiting getters and putters, the
     * unfinished count, and {@code shutdown}.
     */
    @Override
    public String toString() {
        PythonRepr state;
        lock.lock();
        try {
            state = new PythonRepr(items.pythonName(), maxsize, items.inStorageOrder(), getters.size(), putters.size(),
                    tasks.unfinished(), shutdown);
        } finally {
            lock.unlock();
        }
        return state.toString(); // outside the lock: it calls the items' own toString
    }

    // ---- several operations as one ------------------------------------------------------------

    /**
     * Steps for {@link #atomically}: calls to the queue's non-blocking operations.
     *
     * @param <T> the queue's item type
     * @param <X> what the steps may throw
     */
    @FunctionalInterface
    public interface Steps<T, X extends Exception> {
        /**
         * Runs the steps on {@code queue}.
         *
         * @param queue the queue
         * @throws X what a step throws
         */
        void run(ShutdownQueue<T> queue) throws X;
    }

    /**
     * Runs {@code steps}, calls to this queue's non-blocking operations ({@code putNowait},
     * {@code getNowait}, {@code taskDone}, {@code shutdown}, the observers), as one atomic step: no
     * other thread sees the queue in between, and a thread that a step wakes cannot run until the
     * steps are over; it is <em>in transit</em>, and re-checks the queue when it runs. This is what
     * asyncio gives every task between two {@code await}s, and what the in-transit cases of
     * {@code specs/probes.md} (C3 to C9) are made of: for example
     * {@code queue.atomically(q -> { q.putNowait(x); q.shutdown(true); })} wakes a blocked getter
     * for {@code x} and drains {@code x} before that getter runs (SQ-21).
     *
     * @param steps the operations
     * @param <X> what the steps may throw
     * @throws X what a step throws; the steps before it have taken effect
     * @throws IllegalStateException if a step calls a blocking operation ({@code put}, {@code get},
     *     {@code join}), which would let other threads in while it waits (if the thread's interrupt
     *     status is set, that call throws {@code InterruptedException} first, as it does anywhere)
     */
    public <X extends Exception> void atomically(Steps<T, X> steps) throws X {
        Objects.requireNonNull(steps, "steps");
        lock.lock();
        try {
            @Nullable Thread outer = atomic; // atomically() inside atomically() is one step too
            atomic = Thread.currentThread();
            try {
                steps.run(this);
            } finally {
                atomic = outer;
            }
        } finally {
            lock.unlock();
        }
    }

    /** A blocking call inside {@link #atomically} would wait with the lock released: refused. */
    @GuardedBy("lock")
    private void requireNotAtomic(String call) {
        if (atomic == Thread.currentThread()) {
            throw new IllegalStateException(call + " inside atomically(): a blocking call would let other threads in "
                    + "while it waits; use the Nowait forms there");
        }
    }

    // ---- test seams (package-private) ----------------------------------------------------------

    /**
     * Runs {@code action} while holding the queue's lock. Threads that {@code action} wakes cannot
     * run until it returns: they are <em>in transit</em>, like a woken asyncio task that has not
     * been scheduled yet. {@link #atomically} does the same for steps that are queue operations;
     * this serves the tests whose steps are more than that, such as interrupting a woken thread
     * before it runs (decision 0021).
     */
    void runLocked(Runnable action) {
        lock.lock();
        try {
            action.run();
        } finally {
            lock.unlock();
        }
    }

    /**
     * Whether {@code thread} waits in the getter or putter line and is still parked there: false
     * once an interrupt or a timeout has reached it. The trace replayer waits for this to turn
     * false after it interrupts a blocked thread inside {@link #atomically}, so that a wake-up that
     * follows in the same step skips the cancelled waiter, as asyncio's does.
     */
    boolean isParkedInLine(Thread thread) {
        lock.lock();
        try {
            return getters.isParked(thread) || putters.isParked(thread);
        } finally {
            lock.unlock();
        }
    }

    /** The queued items in the order {@code get} would return them. */
    List<T> itemsInGetOrder() {
        lock.lock();
        try {
            return items.inRemovalOrder();
        } finally {
            lock.unlock();
        }
    }

    // ---- internals: call only while holding the lock ------------------------------------------

    @GuardedBy("lock")
    private boolean isFull() {
        return maxsize > 0 && items.size() >= maxsize;
    }

    /** Every put goes through here before it adds, so no item is ever added after a shutdown. */
    @GuardedBy("lock")
    private void requireOpen() throws QueueShutDown {
        if (shutdown) {
            throw new QueueShutDown();
        }
    }

    /**
     * Python's {@code put_nowait} after its checks: store, count, wake one getter. A priority
     * queue's comparator that throws while storing leaves the item stored but not counted and
     * nobody woken, as CPython's does (SQ-20).
     */
    @GuardedBy("lock")
    private void addLocked(T item) {
        assert lock.isHeldByCurrentThread() && !shutdown && !isFull();
        items.add(item);
        tasks.added();
        getters.wakeNext();
    }

    /**
     * The drain of an immediate shutdown: one task less per item, clamped at zero, and
     * {@code join()} released if nothing is outstanding. A comparator that throws stops the drain
     * where it is, as in CPython: the items drained so far are gone and counted off, the one being
     * taken is lost, and the rest stay queued (SQ-20).
     */
    @GuardedBy("lock")
    private List<T> drainLocked() {
        assert lock.isHeldByCurrentThread() && shutdown;
        List<T> removed = new ArrayList<>(items.size());
        while (!items.isEmpty()) {
            removed.add(items.remove());
            tasks.drainedOne();
        }
        tasks.releaseJoinersIfZero();
        return List.copyOf(removed);
    }

    /** Python's {@code get_nowait} after its checks: take, wake one putter. */
    @GuardedBy("lock")
    private T removeLocked() {
        assert lock.isHeldByCurrentThread() && !items.isEmpty();
        T item = items.remove();
        putters.wakeNext();
        return item;
    }

    private static long toNanos(Duration timeout) {
        return TimeUnit.NANOSECONDS.convert(Objects.requireNonNull(timeout, "timeout"));
    }

    private static void requireNonNegative(Duration timeout) {
        if (timeout.isNegative()) {
            throw new IllegalArgumentException("timeout must not be negative: " + timeout);
        }
    }
}
