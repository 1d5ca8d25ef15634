package dev.drain.pool;

import java.util.List;

/**
 * How a run ended, with the fate of every item that did not produce a result. Reached, typed,
 * through {@link Results#outcome()} once the run is over; the iteration that reaches the end turns
 * it into what the consumer sees: nothing for {@link Completed} and {@link Abandoned}, a
 * {@link PoolFailure} for {@link Failed}, a {@link PoolAborted} for {@link Aborted}, the source's
 * exception for {@link SourceFailed}, the error for {@link Crashed}, and a {@link PoolUnsettled}
 * for {@link Unsettled} (a run whose {@link Settler} failed, around how the run itself ended).
 *
 * <p>Every outcome answers {@link #failures()}, {@link #discarded()} and {@link #cancelled()}
 * (empty where that outcome has none), and these lists are exactly the run's books: their sizes
 * are {@link PoolStats#failed()}, {@link PoolStats#discarded()} and {@link PoolStats#cancelled()},
 * and with {@link PoolStats#succeeded()} and {@link PoolStats#deferred()} (the items whose retry
 * their store keeps, WP-29) they account for every item pulled (WP-2).
 *
 * @param <T> the item type
 */
public sealed interface RunOutcome<T> {

    /** {@return the items that failed permanently, in the order they failed} */
    default List<ItemFailure<T>> failures() {
        return List.of();
    }

    /** {@return the items dropped unhandled by an abort or an abandon, in the order they were dropped} */
    default List<T> discarded() {
        return List.of();
    }

    /** {@return the items whose attempts an abort or an abandon cancelled} */
    default List<T> cancelled() {
        return List.of();
    }

    /** {@return the settlements the run's {@link Settler} did not acknowledge (WP-22); empty but in {@link Unsettled}} */
    default List<Settlement<T>> unsettled() {
        return List.of();
    }

    /**
     * Every item pulled from the source was handled (the source ran out, or a stop was requested
     * and the queued work drained), and each succeeded, or had its retry deferred to its store
     * (WP-29), or, in a run that goes on past its
     * failures ({@link WorkerPool.OnFailure#CONTINUE}, WP-23), failed and was settled as failed
     * on the way. Under the seed's rule ({@link WorkerPool.OnFailure#STOP}) a run with a failure
     * never ends {@code Completed}: it ends {@link Failed}.
     *
     * @param stopRequested whether {@link WorkerPool#requestStop()} ended intake early
     * @param failures under {@code CONTINUE}, the first {@link WorkerPool.Builder#failuresKept}
     *     permanent failures, in order ({@link PoolStats#failed()} counts every one); empty under
     *     {@code STOP}
     * @param <T> the item type
     */
    record Completed<T>(boolean stopRequested, List<ItemFailure<T>> failures) implements RunOutcome<T> {
        /** Copies the list. */
        public Completed {
            failures = List.copyOf(failures);
        }

        /**
         * A run in which every item succeeded.
         *
         * @param stopRequested whether {@link WorkerPool#requestStop()} ended intake early
         */
        public Completed(boolean stopRequested) {
            this(stopRequested, List.of());
        }

        /** {@return {@code Completed[stopRequested=…]}, with {@code failures=[…]} only if there are any} */
        @Override
        public String toString() {
            return "Completed[stopRequested=" + stopRequested + (failures.isEmpty() ? "" : ", failures=" + failures) + "]";
        }
    }

    /**
     * Some items failed permanently; intake stopped at the first, and the queued work drained.
     *
     * @param failures exactly the permanent failures, in order
     * @param stopRequested whether {@link WorkerPool#requestStop()} was also called
     * @param <T> the item type
     */
    record Failed<T>(List<ItemFailure<T>> failures, boolean stopRequested) implements RunOutcome<T> {
        /** Copies the list. */
        public Failed {
            failures = List.copyOf(failures);
        }
    }

    /**
     * The source threw (from {@code hasNext}, {@code next} or {@code close}), or gave {@code null}.
     * Intake stopped there and the queued work drained.
     *
     * @param cause what the source threw (a {@link NullPointerException} for a {@code null} item);
     *     later failures of the source are suppressed in it
     * @param failures permanent item failures, if any
     * @param <T> the item type
     */
    record SourceFailed<T>(Throwable cause, List<ItemFailure<T>> failures) implements RunOutcome<T> {
        /** Copies the list. */
        public SourceFailed {
            failures = List.copyOf(failures);
        }
    }

    /**
     * {@link WorkerPool#abort()} ended the run, or the deadline of a
     * {@link WorkerPool#requestStop(java.time.Duration)} passed before the graceful stop was over
     * (WP-24).
     *
     * @param discarded the queued items the abort dropped (never handled)
     * @param cancelled the items whose attempts the abort cancelled
     * @param failures permanent failures, from before the abort or from attempts that were stuck
     * @param deadlinePassed whether the stop's deadline, not a call to {@code abort()}, aborted the run
     * @param <T> the item type
     */
    record Aborted<T>(List<T> discarded, List<T> cancelled, List<ItemFailure<T>> failures, boolean deadlinePassed)
            implements RunOutcome<T> {
        /** Copies the lists. */
        public Aborted {
            discarded = List.copyOf(discarded);
            cancelled = List.copyOf(cancelled);
            failures = List.copyOf(failures);
        }

        /**
         * A run that {@code abort()} ended.
         *
         * @param discarded the queued items the abort dropped (never handled)
         * @param cancelled the items whose attempts the abort cancelled
         * @param failures permanent failures, from before the abort or from attempts that were stuck
         */
        public Aborted(List<T> discarded, List<T> cancelled, List<ItemFailure<T>> failures) {
            this(discarded, cancelled, failures, false);
        }

        /** {@return {@code Aborted[discarded=…, cancelled=…, failures=…]}, with {@code deadlinePassed=true} only if it did} */
        @Override
        public String toString() {
            return "Aborted[discarded=" + discarded + ", cancelled=" + cancelled + ", failures=" + failures
                    + (deadlinePassed ? ", deadlinePassed=true" : "") + "]";
        }
    }

    /**
     * The consumer gave up on the run before its end: it closed the {@link Results}, was
     * interrupted while it waited, or its thread closed the run's scope without closing the
     * results (see {@link Reason}). Everything was cancelled and waited for, and results not yet
     * delivered were dropped ({@link PoolStats#succeeded()} minus {@link PoolStats#delivered()} of
     * them).
     *
     * @param discarded the queued items that were dropped
     * @param cancelled the items whose attempts were cancelled
     * @param failures permanent failures, from before the end
     * @param reason how the consumer gave up
     * @param <T> the item type
     */
    record Abandoned<T>(List<T> discarded, List<T> cancelled, List<ItemFailure<T>> failures, Reason reason)
            implements RunOutcome<T> {
        /** Copies the lists. */
        public Abandoned {
            discarded = List.copyOf(discarded);
            cancelled = List.copyOf(cancelled);
            failures = List.copyOf(failures);
        }

        /** {@return whether the consumer's thread was interrupted while it waited (WP-14)} */
        public boolean interrupted() {
            return reason == Reason.CONSUMER_INTERRUPTED;
        }

        /** How the consumer gave up on a run. */
        public enum Reason {
            /** {@link Results#close()} before the end (WP-13). */
            RESULTS_CLOSED,
            /** The owner was interrupted while it waited for a result (WP-14). */
            CONSUMER_INTERRUPTED,
            /**
             * The owner's thread closed the run's scope without closing the results: it ended
             * without closing them (the JDK closes a thread's open scopes when it exits), it
             * closed an enclosing scope or the results of an earlier run first, or a
             * {@link ScopedValue} binding around {@code run()} ended while they were open. The
             * pool noticed, ended the run itself and logged a warning naming the run and the
             * owner (WP-20).
             */
            SCOPE_CLOSED;

            /** {@return how the reason reads in events and reports} */
            @Override
            public String toString() {
                return switch (this) {
                    case RESULTS_CLOSED -> "results closed";
                    case CONSUMER_INTERRUPTED -> "consumer interrupted";
                    case SCOPE_CLOSED -> "owner's scope closed";
                };
            }
        }
    }

    /**
     * A thread of the pool could not go on: a {@link VirtualMachineError} thrown by a callback that
     * runs on one (the metrics sink, the source), or a bug in drain. (Text built from user objects,
     * an item's {@code toString} or an exception's message, never crashes the run: what it throws
     * is described instead, WP-18.)
     * The run was cancelled as by {@link WorkerPool#abort()}; the iteration that reaches the end
     * throws the {@code VirtualMachineError} itself, or an {@link IllegalStateException} caused by
     * anything else.
     *
     * @param cause what the pool's thread hit
     * @param discarded the queued items that were dropped
     * @param cancelled the items whose attempts were cancelled
     * @param failures permanent failures, from before the crash
     * @param <T> the item type
     */
    record Crashed<T>(Throwable cause, List<T> discarded, List<T> cancelled, List<ItemFailure<T>> failures)
            implements RunOutcome<T> {
        /** Copies the lists. */
        public Crashed {
            discarded = List.copyOf(discarded);
            cancelled = List.copyOf(cancelled);
            failures = List.copyOf(failures);
        }
    }

    /**
     * The run ended as {@code ended} says, but its {@link Settler} did not acknowledge every
     * settlement (WP-22): some call threw, or threw a {@link VirtualMachineError} (then
     * {@code ended} is {@link Crashed}). A store that delivered these items still holds them as
     * claimed: they are neither done nor released, and come back once its claim expires. Never a
     * success; the iteration that reaches the end throws a {@link PoolUnsettled} (or the
     * {@code VirtualMachineError}).
     *
     * @param ended how the run itself ended: every other outcome, never another {@code Unsettled}
     * @param unsettled exactly the settlements not acknowledged, in the order they were offered
     * @param cause what the first failing call threw; later causes are suppressed in it
     * @param <T> the item type
     */
    record Unsettled<T>(RunOutcome<T> ended, List<Settlement<T>> unsettled, Throwable cause)
            implements RunOutcome<T> {
        /** Copies the list; refuses an {@code Unsettled} inside another, and an empty list. */
        public Unsettled {
            if (ended instanceof Unsettled<T>) {
                throw new IllegalArgumentException("an Unsettled outcome inside another");
            }
            if (unsettled.isEmpty()) {
                throw new IllegalArgumentException("an Unsettled outcome with every settlement acknowledged");
            }
            unsettled = List.copyOf(unsettled);
        }

        @Override
        public List<ItemFailure<T>> failures() {
            return ended.failures();
        }

        @Override
        public List<T> discarded() {
            return ended.discarded();
        }

        @Override
        public List<T> cancelled() {
            return ended.cancelled();
        }
    }
}
