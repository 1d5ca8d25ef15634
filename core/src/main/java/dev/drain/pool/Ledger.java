package dev.drain.pool;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;

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
 *
 * <p>Each fate, once recorded, is offered to the run's {@link Settling} as its one
 * {@link Settlement} (WP-22), outside this lock: a worker's offer may wait for the store, and the
 * books must stay readable meanwhile. Lock order: the ledger, then the settling's lock (read by
 * {@link #fates}); an offer takes the settling's lock alone.
 */
final class Ledger<T> {

    /** The lists of the books, copied: what an outcome carries. */
    record Fates<T>(List<ItemFailure<T>> failures, List<T> discarded, List<T> cancelled,
                    List<Settlement<T>> unsettled, @Nullable Throwable settleFailure) {
        Fates {
            failures = List.copyOf(failures);
            discarded = List.copyOf(discarded);
            cancelled = List.copyOf(cancelled);
            unsettled = List.copyOf(unsettled);
        }
    }

    /** Where every fate goes once it is recorded: the run's settler, if it has one. */
    private final Settling<T> settling;

    /** Books whose fates go nowhere: a run without a settler. */
    Ledger() {
        this(Settling.none());
    }

    /** Books whose every fate is offered to {@code settling}. */
    Ledger(Settling<T> settling) {
        this.settling = settling;
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

    /** A worker's item succeeded; its settlement may wait for room. */
    void succeeded(T item) {
        synchronized (this) {
            inFlight--;
            succeeded++;
        }
        settling.offer(new Settlement.Succeeded<>(item), true);
    }

    /**
     * An item failed permanently: on its worker ({@code mayWait}), or on the watchdog, which
     * found its attempt stuck and must never wait.
     */
    void failed(ItemFailure<T> failure, boolean mayWait) {
        synchronized (this) {
            inFlight--;
            failures.add(failure);
        }
        settling.offer(new Settlement.Failed<>(failure), mayWait);
    }

    /** A worker's item was cancelled (the run is being cancelled, so its settlement does not wait). */
    void cancelled(T item) {
        synchronized (this) {
            inFlight--;
            cancelled.add(item);
        }
        settling.offer(new Settlement.Released<>(item, Settlement.Why.CANCELLED), false);
    }

    /** Items dropped before any worker took them; never waits (an abort drops them under the lifecycle's lock). */
    void discarded(List<T> items) {
        synchronized (this) {
            discarded.addAll(items);
        }
        for (T item : items) {
            settling.offer(new Settlement.Released<>(item, Settlement.Why.DISCARDED), false);
        }
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

    /** {@return the books' lists, and what the store did not acknowledge (final once the settling has finished)} */
    synchronized Fates<T> fates() {
        return new Fates<>(failures, discarded, cancelled, settling.unsettled(), settling.failure());
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
