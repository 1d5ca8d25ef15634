package dev.drain.pool;

import dev.drain.queue.QueueFull;
import dev.drain.queue.QueueShutDown;
import dev.drain.queue.ShutdownQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * The pool's side of the {@link MetricsSink}: the sink is user code, so it runs on a thread of its
 * own, the reporter, and never on a worker, the producer, the driver or the caller of
 * {@code requestStop()} or {@code abort()} (decision 0016). Whatever the sink does (throws any
 * {@code Throwable}, swallows or sets an interrupt, blocks for a while) it does to the reporter
 * alone. Events reach it through an unbounded {@link ShutdownQueue}, in the order they were
 * recorded; their details are built there too, so an item's {@code toString} also runs on the
 * reporter.
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
 * Without a sink every method returns at once and there is no reporter thread.
 */
final class Reporter {
    /** How many events the run's threads may be ahead of the sink. */
    static final int BACKLOG = 256;

    /**
     * One event; {@code holdsRoom} if it took one of the {@link #BACKLOG} permits. An event with a
     * {@code flushed} latch is no event, only a mark in the queue (see {@link #flush()}).
     */
    private record Event(String name, Supplier<String> detail, boolean holdsRoom, @Nullable CountDownLatch flushed) {}

    private final @Nullable MetricsSink sink;
    private final ShutdownQueue<Event> events = new ShutdownQueue<>(0);
    private final Semaphore room = new Semaphore(BACKLOG);
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
    void record(String name, Supplier<String> detail) {
        if (sink == null) {
            return;
        }
        while (true) {
            try {
                room.acquire();
                break;
            } catch (InterruptedException e) {
                Lifecycle<?> run = lifecycle;
                if (run != null && run.isCancelling()) {
                    return; // the run is being cancelled and the sink is behind: this event is dropped
                }
                // a stray interrupt: the pool's threads decide by the run's phase (decision 0015)
            }
        }
        enqueue(new Event(name, detail, true, null));
    }

    /** An event from any thread; never waits. */
    void recordNow(String name, Supplier<String> detail) {
        if (sink != null) {
            enqueue(new Event(name, detail, false, null));
        }
    }

    private void enqueue(Event event) {
        try {
            events.putNowait(event); // unbounded: never full
        } catch (QueueShutDown e) {
            release(event); // the run is over; nobody will deliver it
            if (event.flushed() != null) {
                event.flushed().countDown();
            }
        } catch (QueueFull e) {
            throw new AssertionError("unreachable: an unbounded queue is never full", e);
        }
    }

    /** The reporter thread: delivers every event, in order, until {@link #shutdown()} and the backlog is empty. */
    void deliver() {
        while (true) {
            Event event;
            try {
                event = events.get();
            } catch (QueueShutDown e) {
                return;
            } catch (InterruptedException e) {
                continue; // the reporter ends only when the driver shuts the queue down
            }
            try {
                send(event);
            } finally {
                release(event);
            }
        }
    }

    private void send(Event event) {
        if (event.flushed() != null) {
            event.flushed().countDown(); // every event before the mark has been delivered
            return;
        }
        MetricsSink target = sink;
        if (target == null || broken) {
            return;
        }
        try {
            target.record(event.name(), event.detail().get());
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

    private void release(Event event) {
        if (event.holdsRoom()) {
            room.release();
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
        enqueue(new Event("flush", () -> "", false, delivered));
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
        events.shutdown();
    }

    /** {@return how many calls to the sink threw} */
    long raised() {
        return raised.get();
    }
}
