package dev.drain.pool;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import dev.drain.safe.Uninterruptibly;
import java.time.Duration;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Iterator;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;
import java.util.stream.Stream;

/**
 * The JVM's shutdown (SIGTERM, SIGINT, {@code System.exit}) as a graceful stop with a deadline,
 * for the runs drained through it (WP-27): one line in a service's {@code main}.
 * {@snippet :
 * try (StopOnShutdown shutdown = StopOnShutdown.install(Duration.ofSeconds(25))) {
 *     while (!shutdown.received()) {
 *         RunOutcome<Job> outcome = shutdown.drain(builder.build(), table.claims());
 *         // ... look at the outcome, wait for more work ...
 *     }
 * }
 * }
 * {@link #install} registers one JVM shutdown hook. When the JVM begins to shut down, the hook
 * calls {@link WorkerPool#requestStop(Duration) requestStop(deadline)} on every run in
 * {@link #drain} at that moment, and then holds the JVM until every run has ended, its settlement
 * included, and this registration is closed (the service has left its try-with-resources block,
 * having closed its store after the last run), or until {@code deadline + grace} has passed,
 * whichever comes first: a graceful stop acknowledges every completed item before the process
 * exits; at the deadline the stop becomes an abort, which releases what was unfinished; the grace
 * is the abort's time to land and be settled. Close it: a registration left open holds every exit
 * of the JVM, a normal one too, for {@code deadline + grace}. A handler that ignores every interrupt cannot hold the process past
 * {@code deadline + grace}: the hook returns, and the JVM halts with that one attempt running (its
 * item was never acknowledged, and a durable store delivers it again).
 *
 * <p>A shutdown between runs needs nothing: no item is held. A run that {@code drain} starts after
 * the shutdown began starts stopped, pulls nothing and ends at once, so a service loop that checks
 * {@link #received()} after each run ends by itself. Several threads may drain pools through one
 * {@code StopOnShutdown} at once; each keeps the run's ownership rules (WP-17). {@link #close()}
 * removes the hook (a call while the JVM is shutting down leaves it to run).
 *
 * <p>Kubernetes sends SIGKILL {@code terminationGracePeriodSeconds} (30 by default) after SIGTERM:
 * choose {@code deadline + grace} below it, with room for the JVM's own exit: after the last hook,
 * HotSpot waits up to about 0.3 s for threads in native code (the virtual threads' I/O poller
 * among them), so a process that used sockets exits about 0.35 s after its hooks end
 * ({@code benchmarks/results/service.md} measures it).
 */
public final class StopOnShutdown implements AutoCloseable {

    /** How long the hook holds the JVM past the deadline unless told otherwise: the abort's time to land and settle. */
    public static final Duration DEFAULT_GRACE = Duration.ofSeconds(1);

    private static final AtomicLong HOOKS = new AtomicLong();

    private final Duration deadline;
    private final Duration grace;
    private final Thread hook;

    private final ReentrantLock lock = new ReentrantLock();
    /** Signalled when a run drained through this object ends, and when it is closed. */
    private final Condition aRunEnded = lock.newCondition();
    /** The pools whose runs are in {@link #drain} now. */
    @GuardedBy("lock")
    private final Set<WorkerPool<?, ?>> running = Collections.newSetFromMap(new IdentityHashMap<>());
    /** Whether the JVM has begun to shut down. */
    @GuardedBy("lock")
    private boolean received;
    /** When the stop becomes an abort, in {@link System#nanoTime()}'s terms; set once {@link #received}. */
    @GuardedBy("lock")
    private long stopDeadline;
    @GuardedBy("lock")
    private boolean closed;

    private StopOnShutdown(Duration deadline, Duration grace) {
        this.deadline = deadline;
        this.grace = grace;
        this.hook = Thread.ofPlatform().name("drain-stop-on-shutdown-" + HOOKS.incrementAndGet()).unstarted(this::onShutdown);
    }

    /**
     * Registers the hook, with a grace of {@link #DEFAULT_GRACE}.
     *
     * @param deadline how long a graceful stop may take once the JVM begins to shut down; not negative
     * @return the registration; close it to remove the hook
     */
    public static StopOnShutdown install(Duration deadline) {
        return install(deadline, DEFAULT_GRACE);
    }

    /**
     * Registers the hook.
     *
     * @param deadline how long a graceful stop may take once the JVM begins to shut down; not negative
     * @param grace how much longer the hook holds the JVM for the runs to end once aborted; not negative
     * @return the registration; close it to remove the hook
     * @throws IllegalStateException if the JVM is already shutting down
     */
    public static StopOnShutdown install(Duration deadline, Duration grace) {
        Objects.requireNonNull(deadline, "deadline");
        Objects.requireNonNull(grace, "grace");
        if (deadline.isNegative() || grace.isNegative()) {
            throw new IllegalArgumentException("deadline and grace must not be negative, were " + deadline + " and " + grace);
        }
        StopOnShutdown installed = new StopOnShutdown(deadline, grace);
        Runtime.getRuntime().addShutdownHook(installed.hook);
        return installed;
    }

    /**
     * Runs {@code pool} over {@code source} to its end on the calling thread, as
     * {@link WorkerPool#drain(Iterator)}, under this hook: a shutdown stops it with the deadline.
     *
     * @param pool a pool that has not run
     * @param source the items
     * @param <T> the item type
     * @return the run's outcome
     * @throws IllegalStateException if this registration is closed, or the pool has run before
     */
    public <T> RunOutcome<T> drain(WorkerPool<T, ?> pool, Iterator<? extends T> source) {
        return guarded(pool, () -> pool.drain(source), () -> { });
    }

    /**
     * As {@link #drain(WorkerPool, Iterator)}, over {@code source}'s iterator.
     *
     * @param pool a pool that has not run
     * @param source the items
     * @param <T> the item type
     * @return the run's outcome
     */
    public <T> RunOutcome<T> drain(WorkerPool<T, ?> pool, Iterable<? extends T> source) {
        return guarded(pool, () -> pool.drain(source), () -> { });
    }

    /**
     * As {@link #drain(WorkerPool, Iterator)}, over a stream, which is closed on every path (by
     * the pool, or here if the call is refused).
     *
     * @param pool a pool that has not run
     * @param source the items
     * @param <T> the item type
     * @return the run's outcome
     */
    public <T> RunOutcome<T> drain(WorkerPool<T, ?> pool, Stream<? extends T> source) {
        return guarded(pool, () -> pool.drain(source), source::close);
    }

    /** {@return the hook's thread} Package-private so that a test can tell whether it is registered. */
    Thread hook() {
        return hook;
    }

    /** {@return whether the JVM has begun to shut down} A service loop ends when it has. */
    public boolean received() {
        lock.lock();
        try {
            return received;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Removes the hook; a call while the JVM shuts down lets the hook return (once every run has
     * ended), so that the JVM exits. Idempotent; any thread.
     */
    @Override
    public void close() {
        lock.lock();
        try {
            if (closed) {
                return;
            }
            closed = true;
            aRunEnded.signalAll();
        } finally {
            lock.unlock();
        }
        try {
            Runtime.getRuntime().removeShutdownHook(hook);
        } catch (IllegalStateException e) {
            // the JVM is shutting down: the hook runs, or has run
        }
    }

    /**
     * Runs {@code run} with {@code pool} known to the hook; a refused call runs {@code closeSource}
     * (the source was handed over: it is closed on every path, WP-16). A pool is known to the hook
     * for as long as the call that added it runs: a second call for the same pool (refused by the
     * pool, which runs once) leaves the first one's entry alone.
     */
    private <T> RunOutcome<T> guarded(WorkerPool<T, ?> pool, Supplier<RunOutcome<T>> run, Runnable closeSource) {
        try {
            Objects.requireNonNull(pool, "pool");
        } catch (NullPointerException e) {
            closeSource.run();
            throw e;
        }
        boolean added;
        lock.lock();
        try {
            if (closed) {
                closeSource.run();
                throw new IllegalStateException("this StopOnShutdown is closed: install another");
            }
            added = running.add(pool);
            if (received) {
                pool.requestStopAt(stopDeadline); // the shutdown has begun: the run starts stopped
            }
        } finally {
            lock.unlock();
        }
        try {
            return run.get();
        } finally {
            if (added) {
                lock.lock();
                try {
                    running.remove(pool);
                    aRunEnded.signalAll();
                } finally {
                    lock.unlock();
                }
            }
        }
    }

    /**
     * What the hook's thread runs: stops every run in {@link #drain} with the deadline, then waits
     * until they have all ended and this registration is closed, or {@code deadline + grace} has
     * passed. Package-private so that a test can run it without shutting its JVM down.
     */
    void onShutdown() {
        lock.lock();
        try {
            if (received) {
                return;
            }
            received = true;
            long now = System.nanoTime();
            stopDeadline = now + PoolConfig.cappedNanos(deadline);
            for (WorkerPool<?, ?> pool : running) {
                pool.requestStopAt(stopDeadline);
            }
            long until = stopDeadline + PoolConfig.cappedNanos(grace);
            Uninterruptibly.await(() -> allEndedOrPast(until), () -> awaitARunEnded(until));
        } finally {
            lock.unlock();
        }
    }

    /** Waits, with the lock held, until a run ends or {@code until}; one wait of the loop in {@link Uninterruptibly#await}. */
    @SuppressWarnings("WaitNotInLoop") // the loop, and the predicate, are Uninterruptibly.await's
    private void awaitARunEnded(long until) throws InterruptedException {
        long _ = aRunEnded.awaitNanos(until - System.nanoTime());
    }

    /**
     * {@return whether every run has ended and this registration is closed, or {@code until} has
     * passed} Called by {@link #onShutdown()}'s wait, which holds the lock.
     */
    @SuppressWarnings("GuardedBy") // Error Prone cannot see that the lambda that calls this runs under the lock its caller holds
    private boolean allEndedOrPast(long until) {
        return (running.isEmpty() && closed) || System.nanoTime() - until >= 0;
    }

    @Override
    public String toString() {
        lock.lock();
        try {
            return "StopOnShutdown[deadline=" + deadline + ", grace=" + grace + ", " + (received ? "received" : "waiting")
                    + ", " + running.size() + " running" + (closed ? ", closed" : "") + "]";
        } finally {
            lock.unlock();
        }
    }
}
