package dev.drain.pool;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.jspecify.annotations.Nullable;

/**
 * The pool's side of the {@link Settler}: every fate the {@link Ledger} records becomes one
 * {@link Settlement}, offered here, and the run's {@code settler} thread hands them to the
 * settler in batches (WP-22, decision 0039). The settler is user code, so, like the metrics sink,
 * it runs on a thread of its own; unlike the sink's, its failures are kept: the settlements of a
 * batch that threw are <em>unsettled</em>, and the outcome names them.
 *
 * <ul>
 *   <li>{@link #offer} with {@code mayWait} (a worker settling its item) waits while
 *       {@code backlog} settlements are outstanding, unless the run is being cancelled: a slow
 *       store slows the pool instead of filling the heap. Every other offer (the watchdog's, an
 *       abort's, the driver's) never waits; there are at most {@code queueSize + workers + 1}
 *       of those. No offer is ever dropped.</li>
 *   <li>The settler thread takes at most {@code batchSize} settlements at a time, in the order they
 *       were offered, and calls the settler outside the lock.</li>
 *   <li>A call that throws leaves its batch unsettled and stops the run's intake (as an item's
 *       permanent failure does); later batches are still offered. A {@link VirtualMachineError}
 *       also crashes the run, and every later settlement is unsettled without a call.</li>
 *   <li>{@link #finish} (the driver, after the seal: no fate can be recorded any more) waits until
 *       every settlement has been offered to the settler and every call has returned.</li>
 * </ul>
 * Without a settler every method returns at once, nothing is kept, and there is no settler thread.
 *
 * @param <T> the item type
 */
final class Settling<T> {
    /** The backlog, in batches: how far the workers may be ahead of the store. */
    static final int BACKLOG_BATCHES = 4;

    /** A run without a settler. */
    static <T> Settling<T> none() {
        return new Settling<>(null, 1, new Reporter(null));
    }

    private final @Nullable Settler<T> settler;
    private final int batchSize;
    private final int backlog;
    private final Reporter reporter;
    private final ReentrantLock lock = new ReentrantLock();
    /** Signalled when a settlement is offered or the settling finishes: the settler thread waits on it. */
    private final Condition queuedOrFinished = lock.newCondition();
    /**
     * Signalled when a batch has been settled (or left unsettled), and when the run starts being
     * cancelled: workers wait on it for room, the driver for the last batch. Both wait for
     * different things, so it is signalled to all.
     */
    private final Condition settledOrCancelled = lock.newCondition();
    /** Offered and not yet taken by the settler thread, in order. */
    @GuardedBy("lock")
    private final ArrayDeque<Settlement<T>> queued = new ArrayDeque<>();
    /** Offered and not yet settled or left unsettled: queued, or in the batch the settler is settling. */
    @GuardedBy("lock")
    private int outstanding;
    /** Set by {@link #finish}: nothing more will be offered, and the settler thread ends once it has settled what is queued. */
    @GuardedBy("lock")
    private boolean finished;
    /** The settlements that the store did not acknowledge, in the order they were offered. */
    @GuardedBy("lock")
    private final List<Settlement<T>> unsettled = new ArrayList<>();
    /** What the first failing call threw; later causes are suppressed in it. */
    @GuardedBy("lock")
    private @Nullable Throwable failure;
    /** Set when the settler thread could not go on ({@link #ended}): offers are unsettled at once, and nobody waits. */
    @GuardedBy("lock")
    private boolean dead;
    /** The run this settling serves; set once, by {@link #attach}, before the run starts. */
    private volatile @Nullable Lifecycle<?> lifecycle;
    /** Set by the settler thread alone when the settler threw a VirtualMachineError. */
    private boolean broken;

    Settling(@Nullable Settler<T> settler, int batchSize, Reporter reporter) {
        this.settler = settler;
        this.batchSize = batchSize;
        this.backlog = Math.multiplyExact(batchSize, BACKLOG_BATCHES);
        this.reporter = reporter;
    }

    /** Attaches the run's lifecycle: a failing settler stops or crashes it, and its cancellation frees waiting workers. */
    void attach(Lifecycle<?> lifecycle) {
        this.lifecycle = lifecycle;
    }

    /** {@return whether there is a settler, and so a settler thread} */
    boolean hasSettler() {
        return settler != null;
    }

    /**
     * Offers one fate; with {@code mayWait}, waits while {@code backlog} settlements are
     * outstanding and the run is not being cancelled. An interrupt only wakes the wait to look at
     * the run's phase (decision 0015); the settlement is never dropped.
     */
    void offer(Settlement<T> settlement, boolean mayWait) {
        if (settler == null) {
            return;
        }
        lock.lock();
        try {
            while (mayWait && outstanding >= backlog && !finished && !isCancelling()) {
                try {
                    settledOrCancelled.await();
                } catch (InterruptedException e) {
                    // woken: look at the run's phase again
                }
            }
            if (dead) { // the settler thread could not go on: nothing more is settled
                unsettled.add(settlement);
                return;
            }
            if (finished) { // unreachable: every fate is recorded before the seal; kept, not lost
                unsettled.add(settlement);
                failure = Lifecycle.keepFirst(failure, new IllegalStateException(
                        "unreachable: a settlement offered after the run was sealed"));
                return;
            }
            queued.add(settlement);
            outstanding++;
            queuedOrFinished.signal();
        } finally {
            lock.unlock();
        }
    }

    private boolean isCancelling() {
        Lifecycle<?> run = lifecycle;
        return run != null && run.isCancelling();
    }

    /** The run is being cancelled: workers waiting for room offer at once. Never blocks for long (the lifecycle's lock may be held). */
    void cancelled() {
        lock.lock();
        try {
            settledOrCancelled.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /**
     * The settler thread: settles every offered settlement, in order, until {@link #finish} and
     * nothing is queued. Catches everything: if this thread cannot go on (a bug in drain, the JVM
     * out of memory), the run crashes, everything not settled is unsettled, and nobody waits for it.
     */
    void deliver() {
        @Nullable List<Settlement<T>> batch = null;
        try {
            for (batch = take(); batch != null; batch = take()) {
                Throwable thrown = broken ? null : settle(batch);
                if (thrown != null) {
                    failed(batch.size(), thrown); // before the driver, waiting for this batch, can decide
                }
                account(batch, thrown);
            }
        } catch (Throwable e) {
            ended(batch, e);
        }
    }

    /** Books the answer for {@code batch}: settled, or unsettled if the call threw (or was never made). */
    private void account(List<Settlement<T>> batch, @Nullable Throwable thrown) {
        lock.lock();
        try {
            if (broken || thrown != null) {
                unsettled.addAll(batch);
                if (thrown != null) {
                    failure = Lifecycle.keepFirst(failure, thrown);
                }
            }
            outstanding -= batch.size();
            settledOrCancelled.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /** The settler thread cannot go on: the run crashes, and what it had not settled is unsettled. */
    private void ended(@Nullable List<Settlement<T>> batch, Throwable cause) {
        Lifecycle<?> run = lifecycle;
        if (run != null) {
            run.crashed(cause);
        }
        lock.lock();
        try {
            dead = true;
            if (batch != null) {
                for (Settlement<T> s : batch) {
                    if (!unsettled.contains(s)) {
                        unsettled.add(s);
                    }
                }
            }
            unsettled.addAll(queued);
            queued.clear();
            outstanding = 0;
            failure = Lifecycle.keepFirst(failure, cause);
            settledOrCancelled.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /** Calls the settler once; {@return what it threw, or {@code null} if it settled the batch} */
    private @Nullable Throwable settle(List<Settlement<T>> batch) {
        Settler<T> target = settler;
        if (target == null) {
            return null;
        }
        // The pool never interrupts this thread for the settler: it must not see an interrupt
        // that the JDK's close of a forgotten scope left set (WP-20 ends such a run anyway).
        boolean _ = Thread.interrupted();
        try {
            target.settle(List.copyOf(batch));
            return null;
        } catch (VirtualMachineError e) {
            broken = true; // the JVM may be in trouble: the settler is not called again
            return e;
        } catch (Throwable e) { // Exception, InterruptedException, Error: the batch is unsettled
            return e;
        }
    }

    /** A batch was not settled: the run stops pulling, or crashes on a {@link VirtualMachineError}; reported. */
    private void failed(int size, Throwable cause) {
        Lifecycle<?> run = lifecycle;
        if (run != null) {
            if (cause instanceof VirtualMachineError) {
                run.crashed(cause);
            } else {
                run.settlementFailed();
            }
        }
        reporter.recordNow(MetricsEvent.SETTLEMENT_FAILED, () -> "batch=" + size + " cause=" + Text.of(cause));
    }

    /**
     * Waits until settlements are queued, and takes at most {@code batchSize} of them; {@return the
     * batch, or {@code null} once finished with nothing queued} An interrupt only wakes it to look
     * again: the settler thread ends only when the settling has finished.
     */
    private @Nullable List<Settlement<T>> take() {
        lock.lock();
        try {
            while (queued.isEmpty()) {
                if (finished) {
                    return null;
                }
                try {
                    queuedOrFinished.await();
                } catch (InterruptedException e) {
                    // woken: look again
                }
            }
            List<Settlement<T>> batch = new ArrayList<>(Math.min(batchSize, queued.size()));
            while (batch.size() < batchSize && !queued.isEmpty()) {
                batch.add(queued.poll());
            }
            return batch;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Nothing more will be offered (the run is sealed): waits until every settlement has been
     * offered to the settler and its call has returned. With {@code settlerStarted} false (the
     * run could not start its threads), what is queued is unsettled at once. The wait ignores
     * interrupts and keeps them.
     */
    void finish(boolean settlerStarted) {
        if (settler == null) {
            return;
        }
        boolean interrupted = false;
        lock.lock();
        try {
            finished = true;
            queuedOrFinished.signal();
            if (!settlerStarted && !queued.isEmpty()) {
                failure = Lifecycle.keepFirst(failure, new IllegalStateException(
                        "the run could not start its threads, so the settler was never called"));
                unsettled.addAll(queued);
                outstanding -= queued.size();
                queued.clear();
            }
            while (outstanding > 0) {
                try {
                    settledOrCancelled.await();
                } catch (InterruptedException e) {
                    interrupted = true;
                }
            }
        } finally {
            lock.unlock();
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    /** {@return the settlements the store did not acknowledge, in the order they were offered} */
    List<Settlement<T>> unsettled() {
        lock.lock();
        try {
            return List.copyOf(unsettled);
        } finally {
            lock.unlock();
        }
    }

    /** {@return what the first failing call threw, if any call failed} */
    @Nullable Throwable failure() {
        lock.lock();
        try {
            return failure;
        } finally {
            lock.unlock();
        }
    }
}
