package dev.drain.pool;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import java.util.ArrayDeque;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * The pool's side of the {@link MetricsSink}: the sink is user code, so it runs on a thread of its
 * own, the reporter, and never on a worker, the producer, the driver or the caller of
 * {@code requestStop()} or {@code abort()} (decision 0016). Whatever the sink does (throws any
 * {@code Throwable}, swallows or sets an interrupt, blocks for a while) it does to the reporter
 * alone. Events reach it in the order they were recorded; their details are built there too, so an
 * item's {@code toString} also runs on the reporter.
 *
 * <ul>
 *   <li>{@link #record} (the run's own threads) waits while {@value #BACKLOG} events are
 *       undelivered: a slow sink slows the pool instead of filling the heap. A wait cut short by
 *       the run's cancellation drops that event.</li>
 *   <li>{@link #recordNow} (any thread: stop, abort, abandon) never waits.</li>
 *   <li>A call to the sink that throws is counted ({@link #raised()}) and otherwise ignored; a
 *       {@link VirtualMachineError} also ends the run ({@code crash}), and the sink is not called
 *       again.</li>
 *   <li>{@link #shutdown()} (the driver, at the very end) lets the reporter deliver what is left
 *       and finish.</li>
 * </ul>
 * The reporter takes every queued event at once and delivers the batch outside the lock, so a
 * recording thread only appends under a short lock and wakes the reporter when it waits; the room
 * the batch held is given back when the whole batch has been delivered (decision 0023).
 * Without a sink every method returns at once and there is no reporter thread.
 */
final class Reporter {
    /** How many events the run's threads may be ahead of the sink. */
    static final int BACKLOG = 256;

    /**
     * One event; {@code holdsRoom} if it counts against the {@link #BACKLOG}. An event with a
     * {@code flushed} latch (and no {@code kind}) is no event, only a mark in the queue (see
     * {@link #flush()}).
     */
    private record Event(@Nullable MetricsEvent kind, Supplier<String> detail, boolean holdsRoom,
                         @Nullable CountDownLatch flushed) {}

    private final @Nullable MetricsSink sink;
    private final ReentrantLock lock = new ReentrantLock();
    /** Signalled when an event is queued or the reporter is shut down: the reporter waits on it. */
    private final Condition queuedOrShutDown = lock.newCondition();
    /** Signalled when delivered events give their room back: recording threads wait on it. */
    private final Condition hasRoom = lock.newCondition();
    /** Events recorded and not yet taken by the reporter, in order. */
    @GuardedBy("lock")
    private ArrayDeque<Event> queued = new ArrayDeque<>();
    /** Events that hold room and are not yet delivered (queued, or in the batch the reporter is delivering). */
    @GuardedBy("lock")
    private int undelivered;
    /** Whether {@link #shutdown()} was called. */
    @GuardedBy("lock")
    private boolean shutDown;
    private final AtomicLong raised = new AtomicLong();
    /** The run this reporter serves; set once, by {@link #attach}, before the run starts. */
    private volatile @Nullable Lifecycle<?> lifecycle;
    /** Set by the reporter thread alone when the sink threw a VirtualMachineError. */
    private boolean broken;

    Reporter(@Nullable MetricsSink sink) {
        this.sink = sink;
    }

    /** Attaches the run's lifecycle: the reporter ends the run on a fatal sink error, and sees a cancellation. */
    void attach(Lifecycle<?> lifecycle) {
        this.lifecycle = lifecycle;
    }

    /** {@return whether there is a sink, and so a reporter thread} */
    boolean hasSink() {
        return sink != null;
    }

    /** An event from one of the run's threads: waits while the sink is {@value #BACKLOG} events behind. */
    void record(MetricsEvent kind, Supplier<String> detail) {
        if (sink == null) {
            return;
        }
        lock.lock();
        try {
            while (undelivered >= BACKLOG && !shutDown) {
                try {
                    hasRoom.await();
                } catch (InterruptedException e) {
                    Lifecycle<?> run = lifecycle;
                    if (run != null && run.isCancelling()) {
                        return; // the run is being cancelled and the sink is behind: this event is dropped
                    }
                    // a stray interrupt: the pool's threads decide by the run's phase (decision 0015)
                }
            }
            enqueue(new Event(kind, detail, true, null));
        } finally {
            lock.unlock();
        }
    }

    /** An event from any thread; never waits. */
    void recordNow(MetricsEvent kind, Supplier<String> detail) {
        if (sink == null) {
            return;
        }
        lock.lock();
        try {
            enqueue(new Event(kind, detail, false, null));
        } finally {
            lock.unlock();
        }
    }

    /** Queues {@code event} for the reporter; once shut down, drops it (nobody will deliver it). */
    @GuardedBy("lock")
    private void enqueue(Event event) {
        if (shutDown) {
            if (event.flushed() != null) {
                event.flushed().countDown();
            }
            return;
        }
        queued.add(event);
        if (event.holdsRoom()) {
            undelivered++;
        }
        queuedOrShutDown.signal();
    }

    /** The reporter thread: delivers every event, in order, until {@link #shutdown()} and the backlog is empty. */
    void deliver() {
        ArrayDeque<Event> spare = new ArrayDeque<>();
        for (ArrayDeque<Event> batch = take(spare); batch != null; batch = take(spare)) {
            int holding = 0;
            for (Event event : batch) {
                holding += event.holdsRoom() ? 1 : 0;
            }
            try {
                for (Event event : batch) {
                    // The reporter's interrupts mean nothing (it ends only when shut down), and the
                    // sink must not see one that its previous call left set.
                    Thread.interrupted();
                    send(event);
                }
            } finally {
                giveBack(holding);
                batch.clear();
                spare = batch;
            }
        }
    }

    /**
     * Waits until events are queued, and takes them all, leaving {@code spare} (empty) in their
     * place; {@return the batch, or {@code null} once shut down with nothing queued} The reporter
     * ends only when the driver shuts it down: an interrupt only wakes it to look again.
     */
    private @Nullable ArrayDeque<Event> take(ArrayDeque<Event> spare) {
        lock.lock();
        try {
            while (queued.isEmpty()) {
                if (shutDown) {
                    return null;
                }
                try {
                    queuedOrShutDown.await();
                } catch (InterruptedException e) {
                    // woken: look again
                }
            }
            ArrayDeque<Event> batch = queued;
            queued = spare;
            return batch;
        } finally {
            lock.unlock();
        }
    }

    /** Gives back the room of {@code delivered} events and wakes the threads waiting for it. */
    private void giveBack(int delivered) {
        if (delivered == 0) {
            return;
        }
        lock.lock();
        try {
            undelivered -= delivered;
            hasRoom.signalAll();
        } finally {
            lock.unlock();
        }
    }

    private void send(Event event) {
        if (event.flushed() != null) {
            event.flushed().countDown(); // every event before the mark has been delivered
            return;
        }
        MetricsSink target = sink;
        MetricsEvent kind = event.kind();
        if (target == null || kind == null || broken) {
            return;
        }
        String detail = Text.built(event.detail()); // user text: never the sink's failure, never a crash
        try {
            target.record(kind, detail);
        } catch (VirtualMachineError e) {
            raised.incrementAndGet();
            broken = true; // the JVM may be in trouble; the run ends, and the sink is left alone
            Lifecycle<?> run = lifecycle;
            if (run != null) {
                run.crashed(e);
            }
        } catch (Throwable e) { // Exception, InterruptedException, Error: counted, and the run goes on (WP-8)
            raised.incrementAndGet();
        }
    }

    /**
     * Waits until every event recorded so far has been delivered (the sink has seen it, or thrown):
     * the driver's last look before it decides the outcome, so that a sink that is behind can
     * still end the run with a {@link VirtualMachineError} (WP-18). The wait ignores interrupts
     * and keeps them; call it only once the reporter thread has been started.
     */
    void flush() {
        if (sink == null) {
            return;
        }
        CountDownLatch delivered = new CountDownLatch(1);
        lock.lock();
        try {
            enqueue(new Event(null, () -> "", false, delivered));
        } finally {
            lock.unlock();
        }
        boolean interrupted = false;
        while (delivered.getCount() > 0) {
            try {
                delivered.await();
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    /** No more events: the reporter delivers what is queued, then finishes. */
    void shutdown() {
        lock.lock();
        try {
            shutDown = true;
            queuedOrShutDown.signal();
            hasRoom.signalAll(); // a recording thread waiting for room drops its event
        } finally {
            lock.unlock();
        }
    }

    /** {@return how many calls to the sink threw} */
    long raised() {
        return raised.get();
    }
}
