package dev.drain.pool;

import java.util.List;

/**
 * The few reads of a run's end that differ between the pool's API now and the API it had before
 * the run was structured (when {@code Results} had one type parameter, outcomes were untyped and
 * the sink named events by strings): the pool properties go through here, so that
 * {@code specs/probes/properties-on-the-old-pool.sh} can run them, unchanged, against the old pool, with this file swapped for its twin in
 * {@code specs/probes/old-pool/PoolApi.java}.
 */
final class PoolApi {
    private PoolApi() {}

    /**
     * What a run's end says of its books.
     *
     * @param outcome the outcome's simple class name ({@code Completed}, {@code Aborted}, ...)
     * @param failed the items the outcome lists as failed
     * @param discarded the items it lists as discarded
     * @param cancelled the items it lists as cancelled
     * @param pulled items pulled, by the counters
     * @param succeeded items that succeeded
     * @param failedCount items that failed
     * @param discardedCount items discarded
     * @param cancelledCount items cancelled
     * @param inFlight items in flight
     * @param delivered results the consumer received, or -1 if the API does not count them
     * @param maxLead the largest lead
     * @param unsettled what the store did not acknowledge
     * @param deadlinePassed whether the run was aborted at a stop's deadline (WP-24)
     */
    record End(String outcome, List<Integer> failed, List<Integer> discarded, List<Integer> cancelled, long pulled,
               long succeeded, long failedCount, long discardedCount, long cancelledCount, long inFlight,
               long delivered, long maxLead, List<Settlement<Integer>> unsettled, boolean deadlinePassed) {}

    /** A metrics sink that takes an event by its id ({@code "item.accepted"}), as the old API named it. */
    @FunctionalInterface
    interface IdSink {
        /**
         * Records one event.
         *
         * @param event the event's id
         * @param detail the event's detail
         * @throws Exception freely, as a {@link MetricsSink} may
         */
        void record(String event, String detail) throws Exception;
    }

    /** {@return the pool's sink, passing each event on to {@code sink} by its id} */
    static MetricsSink sink(IdSink sink) {
        return (event, detail) -> sink.record(event.id(), detail);
    }

    /** Gives {@code builder} the settler (WP-22); the old pool's twin has none to give, and leaves it as it is. */
    static void settled(WorkerPool.Builder<Integer, Integer> builder, Settler<Integer> settler, int batch) {
        builder.settler(settler).settleBatch(batch);
    }

    /** Has the run of {@code builder} go on past its permanent failures (WP-23); the old pool's twin cannot, and stops. */
    static void continuing(WorkerPool.Builder<Integer, Integer> builder) {
        builder.onFailure(WorkerPool.OnFailure.CONTINUE);
    }

    /** Has a retry of the run of {@code builder} wait {@code delay} in the retry room (WP-28); the old pool's twin retries at once. */
    static void backoff(WorkerPool.Builder<Integer, Integer> builder, java.time.Duration delay) {
        builder.retryBackoff(Backoff.fixed(delay));
    }

    /** A graceful stop with a deadline (WP-24); the old pool's twin stops, and aborts from a timer of its own. */
    static void stopWithin(WorkerPool<Integer, Integer> pool, java.time.Duration within) {
        pool.requestStop(within);
    }

    /** {@return what the ended run's outcome and counters say} */
    static End end(Results<Integer, Integer> results) {
        RunOutcome<Integer> outcome = results.outcome().orElseThrow(() -> new AssertionError("the run has not ended"));
        PoolStats stats = results.stats();
        // How the run itself ended; what its store did not acknowledge is told apart (WP-22).
        RunOutcome<Integer> ended = outcome instanceof RunOutcome.Unsettled<Integer> u ? u.ended() : outcome;
        return new End(ended.getClass().getSimpleName(), outcome.failures().stream().map(ItemFailure::item).toList(),
                outcome.discarded(), outcome.cancelled(), stats.pulled(), stats.succeeded(), stats.failed(),
                stats.discarded(), stats.cancelled(), stats.inFlight(), stats.delivered(), stats.maxLead(),
                outcome.unsettled(), ended instanceof RunOutcome.Aborted<Integer> a && a.deadlinePassed());
    }
}
