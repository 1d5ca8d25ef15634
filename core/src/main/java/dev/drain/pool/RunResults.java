package dev.drain.pool;

import dev.drain.queue.QueueShutDown;
import dev.drain.queue.ShutdownQueue;
import dev.drain.safe.Fatal;
import java.util.NoSuchElementException;
import java.util.Objects;
import java.util.Optional;
import java.util.Queue;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletionException;
import org.jspecify.annotations.Nullable;

/**
 * The consumer's side of a run: the face of the run's boundary scope, owned, like that scope, by
 * the thread that called {@code run()}. That thread iterates and closes; any other thread that
 * tries gets a {@link WrongThreadException} saying what to call instead. The iteration that
 * reaches the end first waits until every thread of the run has finished, so the end of the
 * iteration is the end of the run.
 */
final class RunResults<T, R> implements Results<T, R> {

    private final Thread owner = Thread.currentThread();
    private final Structured.Boundary boundary;
    private final ShutdownQueue<R> outbox;
    /** Results that came after the run began to be cancelled while the outbox was full: read after it. */
    private final Queue<R> late;
    private final Lifecycle<T> lifecycle;
    private final Ledger<T> ledger;
    private final Reporter reporter;
    private final PoolThreads threads;

    // Confined to the owner thread.
    /** The result hasNext() has taken but next() has not returned. */
    private @Nullable R next;
    /** Whether the iteration has reached the end: every thread of the run has finished. */
    private boolean atEnd;
    /** What the end throws, again on every later call; null for a normal end. */
    private @Nullable RuntimeException endFailure;
    private @Nullable Error endError;

    RunResults(Structured.Boundary boundary, ShutdownQueue<R> outbox, Queue<R> late, Lifecycle<T> lifecycle,
               Ledger<T> ledger, Reporter reporter, PoolThreads threads) {
        this.boundary = boundary;
        this.outbox = outbox;
        this.late = late;
        this.lifecycle = lifecycle;
        this.ledger = ledger;
        this.reporter = reporter;
        this.threads = threads;
    }

    @Override
    public boolean hasNext() {
        requireOwner("hasNext()");
        if (lifecycle.phase() == Lifecycle.Phase.CLOSED) {
            next = null;
            return false; // closed: the consumer is done with them
        }
        if (next != null) {
            return true;
        }
        if (atEnd) {
            return end();
        }
        try {
            next = outbox.get();
            return true;
        } catch (QueueShutDown e) {
            // The outbox shuts down once the run has ended (or at once, if it was abandoned, when
            // nothing more is read): what waited behind it comes next, then the run's last threads.
            R behind = late.poll();
            if (behind != null) {
                next = behind;
                return true;
            }
            awaitEveryThread();
            return end();
        } catch (InterruptedException e) {
            abandonInterrupted(); // WP-14: Python's CancelledError out of `async for`
            CancellationException cancelled = new CancellationException("interrupted while waiting for results");
            cancelled.initCause(e);
            throw cancelled;
        }
    }

    /**
     * Reads and drops every result until the run has ended, and {@return its outcome} (WP-25):
     * every outcome is returned, but a crash by a {@link VirtualMachineError}, which is thrown. An
     * interrupt abandons the run (WP-14); the outcome is then returned with the interrupt status set.
     */
    RunOutcome<T> drainToEnd() {
        requireOwner("drain()");
        try {
            while (lifecycle.phase() != Lifecycle.Phase.CLOSED && !atEnd) {
                if (next != null || late.poll() != null) {
                    next = null;
                    ledger.delivered();
                    continue;
                }
                try {
                    next = outbox.get();
                } catch (QueueShutDown e) {
                    if (late.isEmpty()) {
                        awaitEveryThread();
                    }
                }
            }
        } catch (InterruptedException e) {
            abandonInterrupted();
        }
        RunOutcome<T> outcome = Objects.requireNonNull(lifecycle.outcome(), "the outcome is decided before the run's threads finish");
        RunOutcome<T> ended = outcome instanceof RunOutcome.Unsettled<T> u ? u.ended() : outcome;
        if (ended instanceof RunOutcome.Crashed<T> c && c.cause() instanceof VirtualMachineError error) {
            throw error; // the JVM's trouble is never returned as a value
        }
        return outcome;
    }

    @Override
    public R next() {
        requireOwner("next()");
        if (!hasNext()) {
            throw new NoSuchElementException("no more results: the run is " + lifecycle.phase());
        }
        R result = Objects.requireNonNull(next);
        next = null;
        ledger.delivered();
        return result;
    }

    @Override
    public void close() {
        requireOwner("close()");
        if (lifecycle.phase() == Lifecycle.Phase.CLOSED) {
            return;
        }
        if (!atEnd) {
            lifecycle.abandon(RunOutcome.Abandoned.Reason.RESULTS_CLOSED); // WP-13: a no-op if the run has already ended
            awaitEveryThread();
        }
        // Runs this thread opened after this one and has not closed: closing this scope makes the
        // JDK close theirs first, under them, and then throw StructureViolationException. End
        // them first, so that the JDK's wait for their threads is short (WP-20).
        boundary.endNewerRuns();
        try {
            boundary.close();
        } finally {
            lifecycle.closed();
        }
    }

    @Override
    public PoolStats stats() {
        return ledger.snapshot(reporter.raised(), threads.running());
    }

    @Override
    public Optional<RunOutcome<T>> outcome() {
        return Optional.ofNullable(lifecycle.outcome());
    }

    @Override
    public String toString() {
        return "Results[" + lifecycle + ", " + ledger + "]";
    }

    /** The owner was interrupted while it waited (WP-14): abandons the run, waits for its threads, and keeps the interrupt. */
    private void abandonInterrupted() {
        lifecycle.abandon(RunOutcome.Abandoned.Reason.CONSUMER_INTERRUPTED);
        awaitEveryThread();
        Thread.currentThread().interrupt();
    }

    /** Waits until every thread of the run has finished; an interrupt is kept for the caller, not acted on. */
    private void awaitEveryThread() {
        boundary.awaitAll();
        atEnd = true;
    }

    /** The end of the iteration: {@code false}, or the outcome's exception (the same one on every call). */
    private boolean end() {
        next = null;
        if (endFailure == null && endError == null) {
            RunOutcome<T> outcome = Objects.requireNonNull(lifecycle.outcome(), "the outcome is decided before the run's threads finish");
            if (outcome instanceof RunOutcome.Unsettled<T> u) {
                throwLater(u.ended());
                if (endError == null || !Fatal.is(endError)) { // the JVM's trouble comes first, as it is
                    PoolUnsettled unsettled = new PoolUnsettled(u);
                    Throwable ended = endFailure != null ? endFailure : endError;
                    if (ended != null) {
                        unsettled.addSuppressed(ended);
                    }
                    endFailure = unsettled;
                    endError = null;
                }
            } else {
                throwLater(outcome);
            }
        }
        if (endError != null) {
            throw endError;
        }
        if (endFailure != null) {
            throw endFailure;
        }
        return false;
    }

    /** Sets what the end of the iteration throws for {@code outcome} (never {@link RunOutcome.Unsettled}): nothing, or one throwable. */
    private void throwLater(RunOutcome<T> outcome) {
        switch (outcome) {
            case RunOutcome.Completed<T> c -> { }
            case RunOutcome.Abandoned<T> a -> { }
            case RunOutcome.Failed<T> f -> endFailure = new PoolFailure(f.failures());
            case RunOutcome.Aborted<T> a -> endFailure = new PoolAborted(a, ledger.snapshot(0, 0).failed());
            case RunOutcome.SourceFailed<T> s -> rethrowLater(s.cause());
            case RunOutcome.Crashed<T> c -> {
                if (c.cause() instanceof VirtualMachineError error) {
                    endError = error;
                } else {
                    endFailure = new IllegalStateException("a thread of the pool failed (a bug in drain)", c.cause());
                }
            }
            case RunOutcome.Unsettled<T> u -> throw new IllegalStateException("unreachable: an Unsettled inside another");
        }
    }

    /** What the source threw, as the end of the iteration throws it: unchecked as it is, checked wrapped. */
    private void rethrowLater(Throwable cause) {
        switch (cause) {
            case RuntimeException e -> endFailure = e;
            case Error e -> endError = e;
            default -> endFailure = new CompletionException("the source threw " + cause.getClass().getName(), cause);
        }
    }

    private void requireOwner(String call) {
        Thread current = Thread.currentThread();
        if (current != owner) {
            throw new WrongThreadException(call + " on " + describe(current) + ", but these results belong to "
                    + describe(owner) + ", which called run(): only that thread iterates and closes them."
                    + " From other threads, call WorkerPool.requestStop() or WorkerPool.abort()");
        }
    }

    private static String describe(Thread thread) {
        return "thread \"" + thread.getName() + "\" (#" + thread.threadId() + ")";
    }
}
