package dev.drain.pool;

import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The pool's own thread factory: virtual threads (and one platform thread per run, the watchdog)
 * named {@code <pool>-<role>-<n>}, counted while they run. The count is what the leak checks compare before and after a run (Python's
 * {@code asyncio.all_tasks()}); the names let a JSON thread dump of the JVM be cross-checked.
 */
final class PoolThreads {
    private final String pool;
    private final AtomicLong serial = new AtomicLong();
    private final AtomicInteger running = new AtomicInteger();

    PoolThreads(String pool) {
        this.pool = pool;
    }

    /** A factory for threads of one role ({@code driver}, {@code producer}, {@code worker}, {@code attempt}). */
    ThreadFactory factory(String role) {
        return task -> Thread.ofVirtual()
                .name(pool + "-" + role + "-" + serial.incrementAndGet())
                .unstarted(counted(task));
    }

    /**
     * A factory of daemon platform threads for one role ({@code watchdog}): for the one thread of a
     * run that must get the CPU whatever the handlers compute (decision 0025). Daemon, so that
     * not even a run whose owner never closes it can keep the JVM alive through it.
     */
    ThreadFactory platformFactory(String role) {
        return task -> Thread.ofPlatform().daemon(true)
                .name(pool + "-" + role + "-" + serial.incrementAndGet())
                .unstarted(counted(task));
    }

    private Runnable counted(Runnable task) {
        return () -> {
            running.incrementAndGet();
            try {
                task.run();
            } finally {
                running.decrementAndGet();
            }
        };
    }

    /** {@return how many threads from this factory are running now} */
    int running() {
        return running.get();
    }
}
