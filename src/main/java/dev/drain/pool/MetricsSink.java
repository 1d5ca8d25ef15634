package dev.drain.pool;

/**
 * Where a {@link WorkerPool} reports what happens, for observability. Best effort: the pool calls
 * it from many threads at once, and anything it throws is counted
 * ({@link PoolStats#metricsRaised()}) and otherwise ignored; it never breaks the pool. The events
 * are listed in {@code specs/worker-pool.md}.
 */
@FunctionalInterface
public interface MetricsSink {
    /**
     * Records one event.
     *
     * @param event the event's name, for example {@code "attempt.failed"}
     * @param detail a short description, for example {@code "item=7 attempt=2 worker=1 cause=IOException"}
     * @throws Exception freely: the pool counts it and carries on
     */
    void record(String event, String detail) throws Exception;
}
