package dev.drain.pool;

import dev.drain.safe.SafeText;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * The pool's side of the {@link MetricsSink}: the sink is user code, so it runs on a thread of its
 * own, the reporter, and never on a worker, the producer, the driver or the caller of
 * {@code requestStop()} or {@code abort()} (decision 0016). Whatever the sink does (throws any
 * {@code Throwable}, swallows or sets an interrupt, blocks for a while) it does to the reporter
 * alone. Events reach it in the order they were recorded; their details are built there too, so an
 * item's {@code toString} also runs on the reporter. A {@link Handoff} carries them, in batches of
 * everything queued (decision 0023).
 *
 * <ul>
 *   <li>{@link #record} (the run's own threads) waits while {@value #BACKLOG} events are
 *       undelivered: a slow sink slows the pool instead of filling the heap. A wait given up
 *       because the run is being cancelled ({@link #releaseWaiters}) drops that event.</li>
 *   <li>{@link #recordNow} (any thread: stop, abort, abandon, an item's fate) never waits.</li>
 *   <li>A call to the sink that throws is counted ({@link #raised()}) and otherwise ignored; a
 *       {@link VirtualMachineError} also ends the run (what {@link #deliver}'s caller passed), and
 *       the sink is not called again.</li>
 *   <li>{@link #shutdown()} (the driver, at the very end) lets the reporter deliver what is left
 *       and finish.</li>
 * </ul>
 * Without a sink every method returns at once and there is no reporter thread.
 */
final class Reporter {
    /** How many events the run's threads may be ahead of the sink. */
    static final int BACKLOG = 256;

    private record Event(MetricsEvent kind, Supplier<String> detail) {}

    private final @Nullable MetricsSink sink;
    private final Handoff<Event> events = new Handoff<>(Integer.MAX_VALUE, 1, BACKLOG - 1);
    private final AtomicLong raised = new AtomicLong();

    Reporter(@Nullable MetricsSink sink) {
        this.sink = sink;
    }

    /** {@return whether there is a sink, and so a reporter thread} */
    boolean hasSink() {
        return sink != null;
    }

    /** An event from one of the run's threads: waits while the sink is {@value #BACKLOG} events behind. */
    void record(MetricsEvent kind, Supplier<String> detail) {
        if (sink != null && events.reserve()) { // given up: the run is being cancelled, and the event is dropped
            events.offer(new Event(kind, detail));
        }
    }

    /** An event from any thread; never waits. */
    void recordNow(MetricsEvent kind, Supplier<String> detail) {
        if (sink != null) {
            events.offer(new Event(kind, detail));
        }
    }

    /** The run is being cancelled: a thread waiting for room gives up, and its event is dropped. Never blocks for long. */
    void releaseWaiters() {
        events.releaseWaiters();
    }

    /**
     * The reporter thread: delivers every event, in order, until {@link #shutdown()} and nothing is
     * left; a {@link VirtualMachineError} from the sink goes to {@code onFatal} (the run crashes).
     */
    void deliver(Consumer<Throwable> onFatal) {
        MetricsSink target = sink;
        if (target != null) {
            events.deliver(new ToTheSink(target, onFatal));
        }
    }

    /** Hands each batch to the sink, event by event; keeps nothing, answers at once. */
    private final class ToTheSink implements Handoff.Receiver<Event> {
        private final MetricsSink sink;
        private final Consumer<Throwable> onFatal;
        /** Set, on the reporter thread alone, once the sink threw a VirtualMachineError: it is not called again. */
        private boolean broken;

        ToTheSink(MetricsSink sink, Consumer<Throwable> onFatal) {
            this.sink = sink;
            this.onFatal = onFatal;
        }

        @Override
        public CompletionStage<?> deliver(List<Event> batch) {
            for (Event event : batch) {
                if (broken) {
                    break;
                }
                // The reporter's interrupts mean nothing (it ends only when shut down), and the
                // sink must not see one that its previous call left set.
                boolean _ = Thread.interrupted();
                send(event);
            }
            return CompletableFuture.completedStage(null);
        }

        private void send(Event event) {
            String detail = SafeText.built(event.detail()); // user text: never the sink's failure, never a crash
            try {
                sink.record(event.kind(), detail);
            } catch (VirtualMachineError e) {
                raised.incrementAndGet();
                broken = true; // the JVM may be in trouble; the run ends, and the sink is left alone
                onFatal.accept(e);
            } catch (Throwable e) { // Exception, InterruptedException, Error: counted, and the run goes on (WP-8)
                raised.incrementAndGet();
            }
        }

        @Override
        public void answered(List<Event> batch, @Nullable Throwable cause) {
            // delivered: the sink has seen each event, or thrown
        }

        @Override
        public void lost(List<Event> batch, Throwable cause) {
            onFatal.accept(cause); // the reporter thread itself failed: a bug in drain, or the JVM's trouble
        }
    }

    /**
     * Waits until every event recorded so far has been delivered (the sink has seen it, or thrown):
     * the driver's last look before it decides the outcome, so that a sink that is behind can
     * still end the run with a {@link VirtualMachineError} (WP-18). The wait ignores interrupts
     * and keeps them; call it only once the reporter thread has been started.
     */
    void flush() {
        if (sink != null) {
            events.awaitAnswered();
        }
    }

    /** No more events: the reporter delivers what is queued, then finishes; later events are dropped. */
    void shutdown() {
        events.close();
    }

    /** {@return how many calls to the sink threw} */
    long raised() {
        return raised.get();
    }
}
