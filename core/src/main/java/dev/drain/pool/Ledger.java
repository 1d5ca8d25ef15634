package dev.drain.pool;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import dev.drain.safe.SafeText;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * The run's books, and the one corridor an item's fate takes: every item pulled from the source
 * comes to exactly one fate (WP-2), recorded here, once, by one call that keeps the books, offers
 * the fate to the {@link Settling} as its one {@link Settlement} (WP-22) and reports its event,
 * and then returns: recording a fate never waits (a worker waits for the store's room afterwards,
 * with its item's fate already known to everyone). An item is pulled, perhaps accepted into the
 * intake, perhaps taken by a worker, and then comes to one of these fates:
 * <ul>
 *   <li><b>succeeded</b>: its handler returned a result (delivered to the consumer, unless the
 *       consumer abandoned the run first);</li>
 *   <li><b>failed</b>: permanently, with an {@link ItemFailure};</li>
 *   <li><b>discarded</b>: dropped unhandled by an abort or an abandon;</li>
 *   <li><b>cancelled</b>: its attempt was stopped by an abort or an abandon;</li>
 *   <li><b>deferred</b>: its attempt failed and its retry, due later than the pool keeps one, was
 *       handed to the store (WP-29).</li>
 * </ul>
 * So at the end {@code pulled == succeeded + failed + discarded + cancelled + deferred}, and the lists of
 * the outcome are these books' lists, copied under the same lock that every fate is recorded
 * under. Every failure is counted; the first {@code failuresKept} are kept with their causes
 * (every one, under the seed's rule, where the lead bounds them; the first
 * {@link WorkerPool.Builder#failuresKept} in a run that goes on past its failures, so that a run of
 * any length keeps a bounded list, WP-23). One lock guards all of it: a fate, its counter and its list change together, and
 * {@link #snapshot} and {@link #fates} see none or all of a change. The settlement is offered
 * under that lock too, so the store hears the fates in the order the books recorded them.
 *
 * <p>Words: a fate is <em>recorded</em> here (the run has decided it); a settlement is
 * <em>settled</em> when the store has acknowledged it, or <em>unsettled</em> when it did not.
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
    /** Where every fate's event goes: the run's sink, if it has one. */
    private final Reporter reporter;

    /** How many failures are kept with their causes; the rest are counted only. */
    private final int failuresKept;

    /** Books whose fates go nowhere: a run without a settler or a sink. */
    Ledger() {
        this(Settling.none(), new Reporter(null), Integer.MAX_VALUE);
    }

    /**
     * Books whose every fate is offered to {@code settling} and reported to {@code reporter},
     * keeping the first {@code failuresKept} failures.
     */
    Ledger(Settling<T> settling, Reporter reporter, int failuresKept) {
        this.settling = settling;
        this.reporter = reporter;
        this.failuresKept = failuresKept;
    }

    @GuardedBy("this")
    private long pulled;
    @GuardedBy("this")
    private long accepted;
    /** Taken by a worker and not yet come to its fate. */
    @GuardedBy("this")
    private long inFlight;
    @GuardedBy("this")
    private long succeeded;
    @GuardedBy("this")
    private long delivered;
    /** Every permanent failure. */
    @GuardedBy("this")
    private long failed;
    /** The first {@link #failuresKept} of them. */
    @GuardedBy("this")
    private final List<ItemFailure<T>> failures = new ArrayList<>();
    @GuardedBy("this")
    private final List<T> discarded = new ArrayList<>();
    @GuardedBy("this")
    private final List<T> cancelled = new ArrayList<>();
    /** Items whose retry the store keeps (WP-29): counted only, as their store holds them. */
    @GuardedBy("this")
    private long deferred;
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
        return succeeded + failed + discarded.size() + cancelled.size() + deferred;
    }

    /** The producer pulled one item: the lead (pulled minus recorded fates) is measured here, exactly (WP-1). {@return the lead now} */
    synchronized long pulled() {
        pulled++;
        long lead = pulled - finished();
        maxLead = Math.max(maxLead, lead);
        return lead;
    }

    /** {@return how many items have been pulled so far} */
    synchronized long pulledSoFar() {
        return pulled;
    }

    synchronized void accepted() {
        accepted++;
    }

    /** A worker took an item to handle. */
    synchronized void taken() {
        inFlight++;
    }

    /** A worker's item succeeded. */
    synchronized void succeeded(T item) {
        inFlight--;
        succeeded++;
        settling.offer(new Settlement.Succeeded<>(item));
    }

    /** An item failed permanently, on its worker (its handler threw, or timed out, for good). */
    void failed(ItemFailure<T> failure) {
        record(failure);
        reporter.recordNow(MetricsEvent.ITEM_FAILED, () -> "item=" + SafeText.of(failure.item()) + " attempts="
                + failure.attempts() + " cause=" + SafeText.of(failure.cause()));
    }

    /**
     * An item failed permanently on the watchdog, which found its attempt {@code stuck} while it
     * still runs (WP-4). Builds no text here: the watchdog never runs user code.
     */
    void stuck(ItemFailure<T> failure, StuckAttempt stuck) {
        failed(failure);
        reporter.recordNow(MetricsEvent.ATTEMPT_STUCK, stuck::getMessage);
    }

    private synchronized void record(ItemFailure<T> failure) {
        inFlight--;
        failed++;
        if (failures.size() < failuresKept) {
            failures.add(failure);
        }
        settling.offer(new Settlement.Failed<>(failure));
    }

    /**
     * A worker's item was cancelled: the run is being cancelled.
     *
     * @param retryAt when its delayed retry was due, if it was waiting for one (WP-28)
     */
    void cancelled(T item, @Nullable Instant retryAt) {
        synchronized (this) {
            inFlight--;
            cancelled.add(item);
            settling.offer(new Settlement.Released<>(item, Settlement.Why.CANCELLED, retryAt));
        }
        reporter.recordNow(MetricsEvent.ATTEMPT_CANCELLED, () -> "item=" + SafeText.of(item));
    }

    /**
     * A worker's item failed an attempt and its retry is the store's (WP-29): it is handed over
     * with the attempts it had and the time its next one is due.
     */
    void deferred(T item, int attempts, Instant retryAt) {
        synchronized (this) {
            inFlight--;
            deferred++;
            settling.offer(new Settlement.Deferred<>(item, attempts, retryAt));
        }
        reporter.recordNow(MetricsEvent.ATTEMPT_RETRY, () -> "item=" + SafeText.of(item) + " next_attempt=" + (attempts + 1)
                + " deferred_until=" + retryAt);
    }

    /** Items dropped before any worker took them (an abort drops them under the lifecycle's lock). */
    void discarded(List<T> items) {
        synchronized (this) {
            discarded.addAll(items);
            for (T item : items) {
                settling.offer(new Settlement.Released<>(item, Settlement.Why.DISCARDED));
            }
        }
        for (T item : items) {
            reporter.recordNow(MetricsEvent.ITEM_DISCARDED, () -> "item=" + SafeText.of(item));
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
        return new PoolStats(pulled, accepted, inFlight, succeeded, delivered, failed, retried, timedOut,
                escalations, discarded.size(), cancelled.size(), deferred, pulled - finished(), maxLead, metricsRaised,
                liveThreads);
    }

    @Override
    public synchronized String toString() {
        return "pulled=" + pulled + " succeeded=" + succeeded + " failed=" + failed + " discarded="
                + discarded.size() + " cancelled=" + cancelled.size() + (deferred == 0 ? "" : " deferred=" + deferred);
    }
}
