package dev.drain.pool;

import java.io.Serial;
import java.util.List;

/**
 * Thrown by the {@link Results} iteration that reaches the end of a run that was
 * {@linkplain WorkerPool#abort() aborted}. It names what the abort left unprocessed: the items
 * that were queued and dropped, and the items whose attempts were cancelled. None of them counts
 * as processed. The results delivered before the end are real; this exception is never a success.
 *
 * <p>Java forbids generic exceptions, so the lists here are wildcarded; the same outcome, typed,
 * is {@code results.outcome()} (WP-11).
 */
public final class PoolAborted extends RuntimeException {
    @Serial
    private static final long serialVersionUID = 1L;

    private final transient RunOutcome.Aborted<?> outcome;

    /**
     * The exception for {@code outcome}, what the abort left behind, in a run in which {@code failed}
     * items failed for good (more than {@code outcome.failures()} lists in a run that goes on past
     * its failures and keeps the first few, WP-23); only the pool creates it.
     */
    PoolAborted(RunOutcome.Aborted<?> outcome, long failed) {
        super((outcome.deadlinePassed() ? "aborted at the deadline of a graceful stop: " : "aborted: ")
                + outcome.discarded().size() + " items discarded (never started), "
                + outcome.cancelled().size() + " in-flight items cancelled, "
                + failed + " items failed" + (failed > outcome.failures().size()
                        ? " (the first " + outcome.failures().size() + " kept)" : ""));
        this.outcome = outcome;
    }

    /** {@return the items that were queued and dropped} */
    public List<?> discarded() {
        return outcome.discarded();
    }

    /** {@return the items whose attempts were cancelled} */
    public List<?> cancelled() {
        return outcome.cancelled();
    }

    /** {@return the permanent failures of the run} */
    public List<ItemFailure<?>> failures() {
        return List.copyOf(outcome.failures());
    }

    /** {@return the whole outcome} */
    public RunOutcome.Aborted<?> outcome() {
        return outcome;
    }
}
