package dev.drain.pool;

/**
 * Where a {@link WorkerPool} reports what happens, for observability. Best effort: the pool calls
 * it from one thread of its own (the run's {@code metrics} thread), event by event in the order
 * they happened, never from a worker or from the caller of {@code requestStop()} or
 * {@code abort()}. Anything it throws is counted ({@link PoolStats#metricsRaised()}) and otherwise
 * ignored, and nothing it does to its thread's interrupt status matters; only a
 * {@link VirtualMachineError} ends the run. A sink much slower than the pool slows the pool: a
 * thread of the run waits while {@code 256} events are undelivered, and if the run is cancelled
 * (an abort, a crash, an abandon) while it waits, that event is dropped, so a slow sink may not
 * hear every event of a cancelled run. The events are the constants of {@link MetricsEvent}
 * (WP-8).
 */
@FunctionalInterface
public interface MetricsSink {
    /**
     * Records one event.
     *
     * @param event what happened
     * @param detail a short description, for example {@code "item=7 attempt=2 worker=1 cause=java.io.IOException: reset"}
     * @throws Exception freely (an {@code Error} too): the pool counts it and carries on
     */
    void record(MetricsEvent event, String detail) throws Exception;
}
