package dev.drain.pool;

import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.locks.LockSupport;
import org.jspecify.annotations.Nullable;

/**
 * The run's one timer: the deadlines of the attempts being waited for, one slot per thread that
 * supervises attempts (each worker, and the producer), and a watchdog thread that wakes a
 * supervisor whose deadline has passed (decision 0022). A supervisor {@linkplain #arm arms} its
 * slot, waits for its attempt without a timeout, and {@linkplain #disarm disarms} the slot when
 * the wait ends; it decides for itself that the deadline has passed, by the clock, whenever it
 * wakes: the watchdog only wakes it.
 *
 * <p>Why one thread can serve every slot without being told about new deadlines: every attempt of
 * a run has the same timeout, so a deadline armed at time {@code t} is {@code t + timeout}, never
 * earlier than any deadline armed before it (give or take the moment between a supervisor
 * reading the clock and writing its slot). The watchdog scans the slots, wakes the overdue, and
 * sleeps until the earliest deadline it saw, or for a whole timeout if it saw none; a deadline
 * armed while it sleeps falls due after it wakes. So a fast attempt costs two writes to its slot
 * and no timer, where a timed wait per attempt puts a timer on the JDK's delay scheduler and
 * cancels it again; and the watchdog sleeps for about a timeout at a time while attempts are
 * fast.
 *
 * <p>Only the first wait of an attempt, the common one, is served here; the rounds of interrupts
 * after a timeout (WP-4) are rare, and use timed waits of their own.
 */
final class Deadlines {
    /** A free slot. An armed slot holds a deadline that is never this value. */
    private static final long FREE = 0;

    /** The timeout of every attempt, in nanoseconds (capped at {@link PoolConfig#LONGEST_NANOS}, so that a deadline does not overflow). */
    private final long timeout;
    /** Per slot: the deadline of the wait in progress, or {@link #FREE}. Written by the slot's thread, cleared by it or by the watchdog. */
    private final AtomicLongArray deadlines;
    /**
     * Per slot: the thread that armed it. Written by that thread before it arms the slot, read by
     * the watchdog after it has read the armed deadline (the volatile write and read order them).
     */
    private final Thread[] owners;
    /** Whether the watchdog should end; set once, by {@link #stop()}. */
    private volatile boolean stopped;
    /** The watchdog's thread, once {@link #watch()} runs; written by it, read by {@link #stop()}. */
    private volatile @Nullable Thread watchdog;

    /** Deadlines for {@code slots} supervising threads, each attempt given {@code timeoutNanos}. */
    Deadlines(int slots, long timeoutNanos) {
        this.timeout = Math.min(timeoutNanos, PoolConfig.LONGEST_NANOS);
        this.deadlines = new AtomicLongArray(slots);
        this.owners = new Thread[slots];
    }

    /** {@return the timeout of every attempt, in nanoseconds} */
    long timeout() {
        return timeout;
    }

    /** The slot of the worker numbered {@code worker}, or of the producer (worker {@code -1}). */
    int slotOf(int worker) {
        return worker < 0 ? owners.length - 1 : worker;
    }

    /** Arms {@code slot} for the calling thread; {@return the deadline, {@code timeout} from now} */
    long arm(int slot) {
        long due = System.nanoTime() + timeout;
        long deadline = due == FREE ? due + 1 : due;
        owners[slot] = Thread.currentThread();
        deadlines.set(slot, deadline);
        return deadline;
    }

    /** Frees {@code slot}: its thread no longer waits. */
    void disarm(int slot) {
        deadlines.set(slot, FREE);
    }

    /**
     * The watchdog: until {@link #stop()}, wakes each thread whose deadline has passed, then sleeps
     * until the next deadline. An interrupt only wakes it to look again: it ends when stopped.
     */
    void watch() {
        watchdog = Thread.currentThread();
        while (!stopped) {
            long now = System.nanoTime();
            long next = now + timeout;
            for (int slot = 0; slot < owners.length; slot++) {
                long deadline = deadlines.get(slot);
                if (deadline == FREE) {
                    continue;
                }
                if (deadline - now <= 0) {
                    if (deadlines.compareAndSet(slot, deadline, FREE)) {
                        LockSupport.unpark(owners[slot]);
                    }
                } else if (deadline - next < 0) {
                    next = deadline;
                }
            }
            if (!stopped) {
                LockSupport.parkNanos(this, next - now);
            }
            Thread.interrupted(); // the watchdog decides by stopped alone (decision 0015)
        }
    }

    /** Ends the watchdog; call once every supervisor has finished. */
    void stop() {
        stopped = true;
        Thread thread = watchdog;
        if (thread != null) {
            LockSupport.unpark(thread);
        }
    }
}
