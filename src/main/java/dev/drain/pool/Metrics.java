package dev.drain.pool;

import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * The pool's side of the {@link MetricsSink}: every event goes through {@link #record}, which
 * never lets the sink's exceptions out and counts them instead (contract point 8).
 */
final class Metrics {
    private final @Nullable MetricsSink sink;
    private final AtomicLong raised = new AtomicLong();

    Metrics(@Nullable MetricsSink sink) {
        this.sink = sink;
    }

    /** Sends one event; the detail is built only if there is a sink. */
    void record(String event, Supplier<String> detail) {
        MetricsSink target = sink;
        if (target == null) {
            return;
        }
        try {
            target.record(event, detail.get());
        } catch (InterruptedException e) {
            raised.incrementAndGet();
            Thread.currentThread().interrupt(); // counted, and never swallowed
        } catch (Exception e) {
            raised.incrementAndGet();
        }
    }

    /** {@return how many calls to the sink threw} */
    long raised() {
        return raised.get();
    }
}
