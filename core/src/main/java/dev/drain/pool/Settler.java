package dev.drain.pool;

import java.util.List;

/**
 * Where a {@link WorkerPool} settles each item's fate durably: the hook through which a store
 * that delivered the items (a job table, a message broker) learns what the run did with them, so
 * that what the run's books record is what the store acknowledges (WP-22).
 *
 * <p>The pool calls it from one thread of the run's own (the run's {@code settler} thread), with
 * batches of at most {@code settleBatch} settlements, in the order they were offered (each fate is
 * offered as it is recorded), and never from a worker or from the caller of {@code requestStop()}
 * or {@code abort()}: an abort returns at once whatever the store does. Each settlement is offered
 * exactly once. The run waits for its settler: it ends only once every settlement has been offered
 * and every call has returned, so a graceful stop ends with everything that completed
 * acknowledged, and a settler that never returns holds the end of the iteration and
 * {@code close()} until it does: bound the store's calls (a statement or request timeout). The
 * pool never interrupts the settler's thread (an abort releases what it dropped through it); only
 * the JDK's close of a scope its owner forgot to close (WP-20) may interrupt a call.
 *
 * <p>Unlike the metrics sink's, the settler's failures are never ignored. A call that throws
 * leaves its whole batch unsettled: the run stops pulling (as at an item's permanent failure,
 * WP-6), later batches are still offered, and the run ends as {@link RunOutcome.Unsettled}, which
 * names every settlement not acknowledged and the first cause. A {@link VirtualMachineError} also
 * ends the run as {@link RunOutcome.Crashed} inside it, and the settler is not called again.
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
}
