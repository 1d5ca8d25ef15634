package dev.drain.pool;

import java.io.Serial;
import java.util.List;

/**
 * Thrown by the {@link Results} iteration that reaches the end of a run whose {@link Settler} did
 * not acknowledge every settlement (WP-22). It names those settlements, and its cause is what the
 * first failing call threw; if the run itself also ended with an exception (a
 * {@link PoolFailure}, a {@link PoolAborted}, the source's), that exception is suppressed in this
 * one. The results delivered before the end are real, but the store does not know it: it will
 * deliver the unsettled items again.
 *
 * <p>Java forbids generic exceptions, so the list here is wildcarded; the same outcome, typed,
 * is {@code results.outcome()} (WP-11).
 */
public final class PoolUnsettled extends RuntimeException {
    @Serial
    private static final long serialVersionUID = 1L;

    private final transient RunOutcome.Unsettled<?> outcome;

    /** The exception for {@code outcome}; only the pool creates it. */
    PoolUnsettled(RunOutcome.Unsettled<?> outcome) {
        super("unsettled: the store did not acknowledge " + outcome.unsettled().size() + " settlements",
                outcome.cause());
        this.outcome = outcome;
    }

    /** {@return the settlements the store did not acknowledge, in the order they were offered} */
    public List<? extends Settlement<?>> unsettled() {
        return outcome.unsettled();
    }

    /** {@return the whole outcome} */
    public RunOutcome.Unsettled<?> outcome() {
        return outcome;
    }
}
