package dev.drain.safe;

import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.function.BooleanSupplier;

/**
 * Waits that must run to their end: for a thread that must not outlive its owner, or for a call
 * whose outcome must be known before the caller goes on. An interrupt does not cut such a wait
 * short; it is kept, and set again on the calling thread when the wait returns, so that the
 * caller's next blocking call sees it (the interrupt is postponed, never swallowed).
 */
public final class Uninterruptibly {
    /** The longest wait counted in nanoseconds (about 292 years); a longer timeout waits as long. */
    private static final Duration LONGEST = Duration.ofNanos(Long.MAX_VALUE);

    private Uninterruptibly() {}

    /** One wait that an interrupt may cut short. */
    @FunctionalInterface
    public interface Wait {
        /**
         * Waits once: until woken, or done.
         *
         * @throws InterruptedException if interrupted while waiting
         */
        void await() throws InterruptedException;
    }

    /**
     * Calls {@code wait} until {@code done} says so, whatever interrupts come; sets the interrupt
     * status again on return if one came. Both are called on the calling thread (under whatever
     * lock it holds, for a condition's wait).
     *
     * @param done whether the wait is over; asked before each wait
     * @param wait one wait
     */
    public static void await(BooleanSupplier done, Wait wait) {
        boolean interrupted = false;
        try {
            while (!done.getAsBoolean()) {
                try {
                    wait.await();
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * Waits until {@code thread} is no longer alive, keeping any interrupt for the caller; as
     * {@link Thread#join()}, returns at once for a thread that was never started, and, unlike it,
     * for the calling thread itself, which cannot wait for its own end.
     *
     * @param thread the thread
     */
    public static void join(Thread thread) {
        if (thread != Thread.currentThread()) {
            await(() -> !thread.isAlive(), thread::join);
        }
    }

    /**
     * Waits until {@code thread} is no longer alive, or {@code timeout} has passed, keeping any
     * interrupt for the caller.
     *
     * @param thread the thread
     * @param timeout the longest wait; any duration (a negative one waits not at all, one longer
     *                than {@code Long.MAX_VALUE} nanoseconds as long as that)
     * @return whether the thread is no longer alive
     */
    public static boolean join(Thread thread, Duration timeout) {
        long nanos = timeout.isNegative() ? 0 : timeout.compareTo(LONGEST) >= 0 ? Long.MAX_VALUE : timeout.toNanos();
        long start = System.nanoTime();
        await(() -> !thread.isAlive() || System.nanoTime() - start >= nanos,
                () -> thread.join(Duration.ofNanos(Math.max(1, nanos - (System.nanoTime() - start)))));
        return !thread.isAlive();
    }

    /**
     * Waits until {@code future} is done, keeping any interrupt for the caller.
     *
     * @param future the future
     * @return whether it completed normally (not exceptionally, not cancelled)
     */
    public static boolean awaitDone(Future<?> future) {
        await(future::isDone, () -> {
            try {
                future.get();
            } catch (ExecutionException | java.util.concurrent.CancellationException e) {
                // done: how it ended is the caller's to read
            }
        });
        return future.state() == Future.State.SUCCESS;
    }
}
