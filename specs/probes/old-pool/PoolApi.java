package dev.drain.pool;

import java.util.List;

/**
 * The twin of src/test/java/dev/drain/pool/PoolApi.java for the pool as it was before the run
 * was structured (commit c0f4fe4), when Results had one type parameter, RunOutcome was not
 * generic and the metrics sink took an event's id as a String.
 * specs/probes/properties-on-the-old-pool.sh puts it in place of the current one.
 */
final class PoolApi {
    private PoolApi() {}

    /** What a run's end says of its books; the same record as the current twin's. */
    record End(String outcome, List<Integer> failed, List<Integer> discarded, List<Integer> cancelled, long pulled,
               long succeeded, long failedCount, long discardedCount, long cancelledCount, long inFlight,
               long delivered, long maxLead, List<Settlement<Integer>> unsettled, boolean deadlinePassed) {}

    /** The current twin's sink of event ids; the old sink took ids already. */
    @FunctionalInterface
    interface IdSink {
        void record(String event, String detail) throws Exception;
    }

    static MetricsSink sink(IdSink sink) {
        return sink::record;
    }

    static End end(Results<Integer> results) {
        RunOutcome outcome = results.outcome().orElseThrow(() -> new AssertionError("the run has not ended"));
        PoolStats stats = results.stats();
        List<Integer> failed = List.of();
        List<Integer> discarded = List.of();
        List<Integer> cancelled = List.of();
        switch (outcome) {
            case RunOutcome.Failed f -> failed = failedItems(f.failures());
            case RunOutcome.SourceFailed s -> failed = failedItems(s.failures());
            case RunOutcome.Aborted a -> {
                failed = failedItems(a.failures());
                discarded = integers(a.discarded());
                cancelled = integers(a.cancelled());
            }
            case RunOutcome.Abandoned a -> {
                discarded = integers(a.discarded());
                cancelled = integers(a.cancelled());
            }
            case RunOutcome.Completed c -> { }
            case RunOutcome.Crashed c -> { }
        }
        return new End(outcome.getClass().getSimpleName(), failed, discarded, cancelled, stats.pulled(),
                stats.succeeded(), stats.failed(), stats.discarded(), stats.cancelled(), stats.inFlight(), -1,
                stats.maxLead(), List.of(), false);
    }

    /** The old pool cannot go on past a permanent failure (WP-23 came later): it stops, and the property on it fails there. */
    static void continuing(WorkerPool.Builder<Integer, Integer> builder) {
        // nothing to set
    }

    /** The old pool has no backoff (WP-28 came later): it retries at once. */
    static void backoff(WorkerPool.Builder<Integer, Integer> builder, java.time.Duration delay) {
        // nothing to set
    }

    /** The old pool has no deadline (WP-24 came later): a stop, and an abort from a timer of the caller's own. */
    static void stopWithin(WorkerPool<Integer, Integer> pool, java.time.Duration within) {
        pool.requestStop();
        Thread.ofVirtual().name("old-pool-deadline").start(() -> {
            try {
                Thread.sleep(within);
            } catch (InterruptedException e) {
                return;
            }
            pool.abort();
        });
    }

    /** The old pool has no settler (WP-22 came later): nothing settles its fates, and the property on them fails there. */
    static void settled(WorkerPool.Builder<Integer, Integer> builder, Settler<Integer> settler, int batch) {
        // nothing to give it
    }

    private static List<Integer> failedItems(List<ItemFailure<?>> failures) {
        return failures.stream().map(f -> (Integer) f.item()).toList();
    }

    private static List<Integer> integers(List<?> items) {
        return items.stream().map(Integer.class::cast).toList();
    }
}
