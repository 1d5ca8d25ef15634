package dev.drain.pool;

import java.util.Optional;

/**
 * What a {@link MetricsSink} is told about: each constant is one kind of event, with the name it
 * has in logs and reports ({@link #id()}, for example {@code "attempt.failed"}) and the form of its
 * detail. For each item, its events reach the sink in the order they happened: the first is
 * {@link #ITEM_ACCEPTED}, and {@link #ITEM_DISCARDED}, {@link #ATTEMPT_CANCELLED},
 * {@link #ITEM_FAILED} or the last {@link #ATTEMPT_SUCCEEDED} settles it, and comes last but for
 * the {@link #ATTEMPT_STUCK} that follows the failure of a stuck attempt's item (WP-8, WP-15).
 * An event whose thread waits for room in the sink's backlog when the run is cancelled is dropped
 * ({@link MetricsSink}).
 */
public enum MetricsEvent {
    /**
     * The producer pulled an item and hands it to the intake; from here on it is a worker's, or
     * an abort drops it. Detail: {@code item=…}.
     */
    ITEM_ACCEPTED("item.accepted"),
    /** An attempt was forked. Detail: {@code item=… attempt=… worker=…}. */
    ATTEMPT_STARTED("attempt.started"),
    /** The handler returned within the timeout. Detail: {@code item=… attempt=… worker=…}. */
    ATTEMPT_SUCCEEDED("attempt.succeeded"),
    /** The handler threw within the timeout. Detail: {@code item=… attempt=… worker=… cause=…}. */
    ATTEMPT_FAILED("attempt.failed"),
    /**
     * A failed attempt will be retried. Detail: {@code item=… next_attempt=…}, and {@code
     * deferred_until=…} for a retry handed to the store (WP-29), which then settles the item: its
     * last event in this run.
     */
    ATTEMPT_RETRY("attempt.retry"),
    /** An attempt outlived {@code itemTimeout}; the first interrupt follows. Detail: {@code … timeout=…}. */
    ATTEMPT_TIMEOUT("attempt.timeout"),
    /** An attempt still ran after an interrupt and is interrupted again. Detail: {@code … round=2} or {@code round=3}. */
    ATTEMPT_ESCALATED("attempt.escalated"),
    /** An attempt survived every round of interrupts (WP-4's limit). Detail: the {@link StuckAttempt}'s message. */
    ATTEMPT_STUCK("attempt.stuck"),
    /** An abort, a crash or an abandon cancelled an item's attempt. Detail: {@code item=…}. */
    ATTEMPT_CANCELLED("attempt.cancelled"),
    /** An item failed permanently. Detail: {@code item=… attempts=… cause=…}. */
    ITEM_FAILED("item.failed"),
    /** An abort, a crash or an abandon dropped an item before any worker took it. Detail: {@code item=…}. */
    ITEM_DISCARDED("item.discarded"),
    /** {@link WorkerPool#requestStop()}, its first call. Detail: the pool's name. */
    POOL_STOP_REQUESTED("pool.stop_requested"),
    /**
     * The run is cancelled by {@link WorkerPool#abort()} (its first call) or by a crash (a
     * {@link VirtualMachineError} on a pool thread, WP-18). Detail: {@code discarded=…}.
     */
    POOL_ABORT("pool.abort"),
    /**
     * The run was abandoned. Detail: {@code results closed}, {@code consumer interrupted} or
     * {@code owner's scope closed} (see {@link RunOutcome.Abandoned.Reason}).
     */
    POOL_ABANDONED("pool.abandoned"),
    /** The source threw (from {@code hasNext}, {@code next} or {@code close}). Detail: {@code cause=…}. */
    SOURCE_FAILED("source.failed"),
    /** Intake stopped while the producer waited inside the source, which threw on the interrupt. Detail: {@code cause=…}. */
    SOURCE_INTERRUPTED("source.interrupted"),
    /**
     * The {@link Settler} threw: its batch is unsettled, and the run stops pulling (WP-22).
     * Detail: {@code batch=… cause=…}.
     */
    SETTLEMENT_FAILED("settlement.failed"),
    /**
     * The run's outcome is decided: every other thread of the run has finished. The one event that
     * comes after the decision. Detail: {@code outcome=… pulled=… succeeded=… failed=… discarded=… cancelled=…}.
     */
    POOL_DRAINED("pool.drained");

    private final String id;

    MetricsEvent(String id) {
        this.id = id;
    }

    /** {@return the event's name in logs and reports, for example {@code "attempt.failed"}} */
    public String id() {
        return id;
    }

    /**
     * {@return the event whose {@linkplain #id() name} is {@code id}, if there is one}
     *
     * @param id an event's name, for example {@code "attempt.failed"}
     */
    public static Optional<MetricsEvent> ofId(String id) {
        for (MetricsEvent event : values()) {
            if (event.id.equals(id)) {
                return Optional.of(event);
            }
        }
        return Optional.empty();
    }

    /** {@return the event's name, as {@link #id()}} */
    @Override
    public String toString() {
        return id;
    }
}
