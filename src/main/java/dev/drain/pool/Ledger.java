package dev.drain.pool;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import java.util.ArrayList;
import java.util.List;

/**
 * The run's books: every item pulled from the source, and the one fate each comes to (WP-2). An
 * item is pulled, perhaps accepted into the intake, perhaps taken by a worker, and then settled
 * exactly once:
 * <ul>
 *   <li><b>succeeded</b>: its handler returned a result (delivered to the consumer, unless the
 *       consumer abandoned the run first);</li>
 *   <li><b>failed</b>: permanently, with an {@link ItemFailure};</li>
 *   <li><b>discarded</b>: dropped unhandled by an abort or an abandon;</li>
 *   <li><b>cancelled</b>: its attempt was stopped by an abort or an abandon.</li>
 * </ul>
 * So at the end {@code pulled == succeeded + failed + discarded + cancelled}, and the lists of
 * the outcome are these books' lists, copied under the same lock that every fate is recorded
 * under. One lock guards all of it: a fate, its counter and its list change together, and
 * {@link #snapshot} and {@link #fates} see none or all of a change.
 */
final class Ledger<T> {

    /** The lists of the books, copied: what an outcome carries. */
    record Fates<T>(List<ItemFailure<T>> failures, List<T> discarded, List<T> cancelled) {
        Fates {
            failures = List.copyOf(failures);
            discarded = List.copyOf(discarded);
            cancelled = List.copyOf(cancelled);
        }
    }

    @GuardedBy("this")
    private long pulled;
    @GuardedBy("this")
    private long accepted;
    /** Taken by a worker (or kept by the producer) and not yet settled. */
    @GuardedBy("this")
    private long inFlight;
    @GuardedBy("this")
    private long succeeded;
    @GuardedBy("this")
    private long delivered;
    @GuardedBy("this")
    private final List<ItemFailure<T>> failures = new ArrayList<>();
    @GuardedBy("this")
    private final List<T> discarded = new ArrayList<>();
    @GuardedBy("this")
    private final List<T> cancelled = new ArrayList<>();
    @GuardedBy("this")
    private long maxLead;

    // Events that are not fates.
    @GuardedBy("this")
    private long retried;
    @GuardedBy("this")
    private long timedOut;
    @GuardedBy("this")
    private long escalations;

    @GuardedBy("this")
    private long finished() {
        return succeeded + failures.size() + discarded.size() + cancelled.size();
    }

    /** The producer pulled one item: the lead (pulled minus settled) is measured here, exactly (WP-1). {@return the lead now} */
    synchronized long pulled() {
        pulled++;
        long lead = pulled - finished();
        maxLead = Math.max(maxLead, lead);
        return lead;
    }

    synchronized void accepted() {
        accepted++;
    }

    /** A worker took an item to handle. */
    synchronized void taken() {
        inFlight++;
    }

    synchronized void succeeded() {
        inFlight--;
        succeeded++;
    }

    synchronized void failed(ItemFailure<T> failure) {
        inFlight--;
        failures.add(failure);
    }

    synchronized void cancelled(T item) {
        inFlight--;
        cancelled.add(item);
    }

    /** Items dropped before any worker took them. */
    synchronized void discarded(List<T> items) {
        discarded.addAll(items);
    }

    /** The consumer received one result. */
    synchronized void delivered() {
        delivered++;
    }

    synchronized void retried() {
        retried++;
    }

    synchronized void timedOut() {
        timedOut++;
    }

    synchronized void escalated() {
        escalations++;
    }

    synchronized Fates<T> fates() {
        return new Fates<>(failures, discarded, cancelled);
    }

    /** The counters now, with the two that live elsewhere. */
    synchronized PoolStats snapshot(long metricsRaised, int liveThreads) {
        return new PoolStats(pulled, accepted, inFlight, succeeded, delivered, failures.size(), retried, timedOut,
                escalations, discarded.size(), cancelled.size(), pulled - finished(), maxLead, metricsRaised,
                liveThreads);
    }

    @Override
    public synchronized String toString() {
        return "pulled=" + pulled + " succeeded=" + succeeded + " failed=" + failures.size() + " discarded="
                + discarded.size() + " cancelled=" + cancelled.size();
    }
}
