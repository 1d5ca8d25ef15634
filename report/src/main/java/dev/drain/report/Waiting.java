package dev.drain.report;

import java.time.Duration;
import java.util.Iterator;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/**
 * The cases' bounded waits and their counting source: a case that would hang is a bug, reported
 * as a failed case after {@link #BOUND}, never a hung report.
 */
final class Waiting {
    private Waiting() {}

    /** How long any wait in a case may take before the case is reported as hung. */
    static final Duration BOUND = Duration.ofSeconds(20);

    /** The items 0, 1, ... up to {@code limit}, remembering which were pulled. */
    static final class CountingSource implements Iterator<Integer> {
        private final int limit;
        private final Set<Integer> pulled = ConcurrentHashMap.newKeySet();
        private int next;

        CountingSource(int limit) {
            this.limit = limit;
        }

        @Override
        public boolean hasNext() {
            return next < limit;
        }

        @Override
        public Integer next() {
            pulled.add(next);
            return next++;
        }

        Set<Integer> pulled() {
            return new TreeSet<>(pulled);
        }
    }

    /** Waits for a latch, at most {@link #BOUND}. */
    static void await(CountDownLatch latch) {
        try {
            if (!latch.await(BOUND.toNanos(), TimeUnit.NANOSECONDS)) {
                throw new IllegalStateException("a case waited longer than " + BOUND);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }

    static void await(CyclicBarrier barrier) {
        try {
            barrier.await(BOUND.toNanos(), TimeUnit.NANOSECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        } catch (Exception e) {
            throw new IllegalStateException("a barrier in a case broke", e);
        }
    }

    static void join(Thread thread) {
        try {
            if (!thread.join(BOUND)) {
                throw new IllegalStateException(thread + " did not finish within " + BOUND);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted", e);
        }
    }

    /** Polls {@code condition} until it holds, at most {@link #BOUND}. */
    static void until(BooleanSupplier condition) {
        long deadline = System.nanoTime() + BOUND.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                throw new IllegalStateException("a case waited longer than " + BOUND);
            }
            LockSupport.parkNanos(TimeUnit.MICROSECONDS.toNanos(100)); // a short poll between looks
        }
    }
}
