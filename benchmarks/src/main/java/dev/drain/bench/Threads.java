package dev.drain.bench;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;

/** Starting, joining and watching the threads a benchmark measures. */
final class Threads {
    private Threads() {}

    /** A task that may throw. */
    @FunctionalInterface
    interface Task {
        void run() throws Exception;
    }

    /** Which kind of thread the benchmark starts; the names are the {@code threads} parameter values. */
    enum Kind {
        virtual,
        platform;

        Thread.Builder builder() {
            return this == virtual ? Thread.ofVirtual() : Thread.ofPlatform();
        }
    }

    /**
     * Runs each task on a new thread from {@code builder}, waits for all of them, and rethrows the
     * first failure. Nothing outlives the call.
     */
    static void runAll(Thread.Builder builder, List<Task> tasks) {
        AtomicReference<Throwable> failure = new AtomicReference<>();
        List<Thread> started = new ArrayList<>(tasks.size());
        for (Task task : tasks) {
            started.add(builder.start(() -> {
                try {
                    task.run();
                } catch (Throwable e) {
                    failure.compareAndSet(null, e);
                }
            }));
        }
        joinAll(started, Duration.ofMinutes(1));
        Throwable failed = failure.get();
        if (failed != null) {
            throw new IllegalStateException("a benchmark thread failed", failed);
        }
    }

    /** Joins every thread, or fails if one is still running after {@code limit} in all. */
    static void joinAll(List<Thread> threads, Duration limit) {
        long deadline = System.nanoTime() + limit.toNanos();
        boolean interrupted = false;
        for (Thread thread : threads) {
            while (thread.isAlive()) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    throw new IllegalStateException(thread + " still running after " + limit + ": a benchmark leaked it");
                }
                try {
                    thread.join(Duration.ofNanos(left));
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * Waits until every thread is parked ({@link Thread.State#WAITING}) and stays so over two
     * looks 2 ms apart, and {@code extra} holds too. A thread parked on a lock that nobody holds
     * is woken at once, so a stable all-waiting picture means every thread is in its condition
     * wait. Fails after 30 seconds.
     */
    static void awaitAllWaiting(List<Thread> threads, BooleanSupplier extra) {
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        int stableLooks = 0;
        while (stableLooks < 2) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("the benchmark's threads did not all block within 30 s");
            }
            boolean all = extra.getAsBoolean();
            for (int i = 0; all && i < threads.size(); i++) {
                all = threads.get(i).getState() == Thread.State.WAITING;
            }
            stableLooks = all ? stableLooks + 1 : 0;
            try {
                Thread.sleep(2);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while waiting for the benchmark's threads to block", e);
            }
        }
    }
}
