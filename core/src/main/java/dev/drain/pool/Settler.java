package dev.drain.pool;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;

/**
 * Where a {@link WorkerPool} settles each item's fate durably: the hook through which a store
 * that delivered the items (a job table, a message broker) learns what the run did with them, so
 * that what the run's books record is what the store acknowledges (WP-22).
 *
 * <p>The pool calls it from one thread of the run's own (the run's {@code settler} thread), with
 * batches of at most {@code settleBatch} settlements, in the order their fates were recorded, and
 * never from a worker or from the caller of {@code requestStop()} or {@code abort()}: an abort
 * returns at once whatever the store does. Each settlement is offered exactly once. A settlement is
 * <em>settled</em> once the store has acknowledged it: {@link #settle} has returned, or the stage
 * {@link #submit} returned has completed. The run waits for its settler: it ends only once every
 * settlement has been answered, so a graceful stop ends with everything that completed
 * acknowledged, and a settler that never answers holds the end of the iteration and
 * {@code close()} until it does: bound the store's calls (a statement or request timeout). The
 * pool never interrupts the settler's thread (an abort releases what it dropped through it); only
 * the JDK's close of a scope its owner forgot to close (WP-20) may interrupt a call.
 *
 * <p>A store that acknowledges later than it is told (a broker that commits on a timer) overrides
 * {@link #submit} and {@link #batchesInFlight()}: the pool then hands it the next batch while
 * earlier ones wait for their acknowledgement, at most {@code batchesInFlight()} of them, so the
 * store, not the batch size, sets the rate of acknowledgements.
 *
 * <p>Unlike the metrics sink's, the settler's failures are never ignored. A batch the store did not
 * take (a call that throws, or a stage that completes exceptionally) is unsettled whole: the run
 * stops pulling (as at an item's permanent failure, WP-6), later batches are still offered, and the
 * run ends as {@link RunOutcome.Unsettled}, which names every settlement not acknowledged and the
 * first cause. A {@link VirtualMachineError} also ends the run as {@link RunOutcome.Crashed} inside
 * it, and the settler is not called again.
 *
 * @param <T> the item type
 */
@FunctionalInterface
public interface Settler<T> {
    /**
     * Settles a batch durably: returns only once the store has recorded every settlement in it.
     *
     * @param batch one to {@code settleBatch} settlements, each of a different item
     * @throws Exception if the store did not record the batch (an {@code Error} too): the whole
     *     batch is then unsettled, and the outcome says so
     */
    void settle(List<Settlement<T>> batch) throws Exception;

    /**
     * Hands a batch to the store, which may record it later; the pool calls this, not
     * {@link #settle}. The default settles the batch here, with {@link #settle}, and returns a
     * completed stage.
     *
     * @param batch one to {@code settleBatch} settlements, each of a different item
     * @return a stage that completes once the store has recorded every settlement in the batch, or
     *     completes exceptionally if it did not (the whole batch is then unsettled); it may be
     *     completed on any thread, and must not be {@code null}
     * @throws Exception if the store did not take the batch (an {@code Error} too): as a stage
     *     completed exceptionally
     */
    default CompletionStage<?> submit(List<Settlement<T>> batch) throws Exception {
        settle(batch);
        return CompletableFuture.completedStage(null);
    }

    /**
     * {@return how many submitted batches may wait for their acknowledgement at once} 1 by
     * default: the next batch is submitted once the last one is answered. The pool asks once, when
     * it is built; workers wait while {@code (3 + batchesInFlight()) × settleBatch} settlements are
     * unacknowledged (WP-22).
     */
    default int batchesInFlight() {
        return 1;
    }

    /**
     * {@return whether this store keeps a {@link Settlement.Deferred} item until its retry is due and
     * then hands it out again with its attempts} {@code false} by default: a pool defers its
     * retries (WP-29, {@code WorkerPool.Builder.deferRetriesLongerThan}) only to a settler that
     * says {@code true}, since a store that redelivered it at once would retry it with no wait at
     * all. The pool asks once, when it is built.
     */
    default boolean keepsDeferred() {
        return false;
    }
}
