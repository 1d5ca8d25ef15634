package dev.drain.support;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/**
 * Bounded polling: the way tests wait for another thread to reach a state (blocked in a call, a
 * counter reached) without sleeping for a guessed time. A poll that does not succeed within
 * {@link Bounds#WAIT} fails the test, so a bug shows up as a failure, never as a hang.
 */
public final class Waits {
    private Waits() {}

    /** Waits until {@code condition} holds; fails the test if it does not within the bound. */
    public static void until(String what, BooleanSupplier condition) {
        long deadline = System.nanoTime() + Bounds.WAIT.toNanos();
        for (int spins = 0; !condition.getAsBoolean(); spins++) {
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError("timed out after " + Bounds.WAIT + " waiting until " + what);
            }
            if (spins < 1_000) {
                Thread.onSpinWait();
            } else {
                LockSupport.parkNanos(TimeUnit.MICROSECONDS.toNanos(50)); // back off between polls
            }
        }
    }

    /**
     * Waits as {@link #until} does, looking at most once every {@code every}: for a condition that
     * is costly to look at (it takes a lock the awaited thread needs, or reads files that other
     * processes write) and would take the CPU the awaited work needs if looked at in a tight loop.
     */
    public static void untilLookingEvery(Duration every, String what, BooleanSupplier condition) {
        long deadline = System.nanoTime() + Bounds.WAIT.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError("timed out after " + Bounds.WAIT + " waiting until " + what);
            }
            LockSupport.parkNanos(every.toNanos());
        }
    }

    /** Waits until {@code thread} is parked (waiting, with or without a timeout). */
    public static void untilParked(Thread thread) {
        until(thread.getName() + " is parked", () -> switch (thread.getState()) {
            case WAITING, TIMED_WAITING -> true;
            case TERMINATED -> throw new AssertionError(thread.getName() + " ended instead of blocking");
            default -> false;
        });
    }
}
