package dev.drain.pool;

import java.util.List;

/**
 * How a run ended. {@link Results#outcome()} reports it once the run is over, and the iteration
 * that reaches the end turns it into what the consumer sees: nothing for {@link Completed}, a
 * {@link PoolFailure} for {@link Failed}, a {@link PoolAborted} for {@link Aborted}.
 */
public sealed interface RunOutcome {

    /**
     * Every item pulled from the source was handled and succeeded (the source ran out, or a stop
     * was requested and the queued work drained).
     *
     * @param stopRequested whether {@link WorkerPool#requestStop()} ended intake early
     */
    record Completed(boolean stopRequested) implements RunOutcome {}

    /**
     * Some items failed permanently; intake stopped at the first, and the queued work drained.
     *
     * @param failures exactly the permanent failures, in order
     * @param stopRequested whether {@link WorkerPool#requestStop()} was also called
     */
    record Failed(List<ItemFailure<?>> failures, boolean stopRequested) implements RunOutcome {
        /** Copies the list. */
        public Failed {
            failures = List.copyOf(failures);
        }
    }

    /**
     * {@link WorkerPool#abort()} ended the run.
     *
     * @param discarded the queued items the abort dropped (never handled)
     * @param cancelled the items whose attempts the abort cancelled
     * @param failures permanent failures from before the abort
     */
    record Aborted(List<?> discarded, List<?> cancelled, List<ItemFailure<?>> failures) implements RunOutcome {
        /** Copies the lists. */
        public Aborted {
            discarded = List.copyOf(discarded);
            cancelled = List.copyOf(cancelled);
            failures = List.copyOf(failures);
        }
    }

    /**
     * The consumer closed the {@link Results} (or was interrupted) before the end; everything
     * was cancelled and waited for.
     *
     * @param discarded the queued items that were dropped
     * @param cancelled the items whose attempts were cancelled
     * @param interrupted whether the consumer's thread was interrupted (rather than closing)
     */
    record Abandoned(List<?> discarded, List<?> cancelled, boolean interrupted) implements RunOutcome {
        /** Copies the lists. */
        public Abandoned {
            discarded = List.copyOf(discarded);
            cancelled = List.copyOf(cancelled);
        }
    }

    /**
     * The source threw while the pool pulled from it. Intake stopped there, the queued work
     * drained, and the iteration that reaches the end throws {@code cause} itself.
     *
     * @param cause what the source threw
     * @param failures permanent item failures, if any, before the source failed
     */
    record SourceFailed(RuntimeException cause, List<ItemFailure<?>> failures) implements RunOutcome {
        /** Copies the list. */
        public SourceFailed {
            failures = List.copyOf(failures);
        }
    }

    /**
     * A thread of the pool itself failed: a bug in drain. The iteration that reaches the end
     * throws an {@link IllegalStateException} with this cause.
     *
     * @param cause what the pool's thread threw
     */
    record Crashed(Throwable cause) implements RunOutcome {}
}
