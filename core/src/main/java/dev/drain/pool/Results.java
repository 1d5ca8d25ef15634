package dev.drain.pool;

import java.util.Iterator;
import java.util.Optional;

/**
 * The results of one {@link WorkerPool#run run}, in completion order, and the handle that owns
 * the run: the face of the run's outermost {@code StructuredTaskScope}, opened by {@code run()} on
 * the calling thread. Use it in a try-with-resources statement on that thread:
 * {@snippet file="TourSnippets.java" region="pool"}
 *
 * <h2>Who may call what</h2>
 * The thread that called {@code run()} owns the results, as it owns a scope it opened: only it
 * calls {@link #hasNext()}, {@link #next()} and {@link #close()}; from any other thread (another
 * consumer, a handler, the metrics sink) they throw {@link WrongThreadException}. To end a run from
 * another thread, call {@link WorkerPool#requestStop()} or {@link WorkerPool#abort()}, which work
 * from any thread. {@link #stats()} and {@link #outcome()} may be called from any thread. Like a
 * scope, the results are structured: a {@link ScopedValue} binding around {@code run()} must
 * enclose their whole use, and results of two runs opened by one thread close in reverse order
 * (otherwise {@code StructureViolationException}).
 *
 * <h2>The iteration</h2>
 * {@code hasNext()} blocks until a result arrives or the run ends. The call that reaches the end
 * first waits until every thread of the run has finished, then returns {@code false} if the run
 * {@linkplain RunOutcome.Completed completed}, and throws {@link PoolFailure} if items failed
 * permanently, {@link PoolAborted} if the run was aborted, the source's exception if it failed,
 * or the {@link VirtualMachineError} that crashed it (an {@link IllegalStateException} for a bug
 * in drain), and throws it again if called again. If
 * the owner is interrupted while it waits, the run is abandoned as by {@link #close()}, the
 * interrupt status is set again, and {@link java.util.concurrent.CancellationException} is thrown.
 *
 * <h2>Closing</h2>
 * {@code close()} before the end abandons the run: queued items are dropped, attempts are
 * cancelled (with the pool's escalating interrupts), undelivered results are dropped, and
 * {@code close()} returns only when every thread of the run has finished; then it closes the
 * scope. After the end it only closes the scope. After {@code close()}, {@code hasNext()} returns
 * {@code false}.
 *
 * <p>Results that are never closed do not hang: when the owner's thread ends with them open, or
 * closes an enclosing scope, an earlier run's results or a {@code ScopedValue} binding around them
 * first, the JDK closes the run's scope, and the run notices within about 100 ms, ends itself as
 * {@linkplain RunOutcome.Abandoned abandoned} ({@code SCOPE_CLOSED}) and logs a {@code WARNING}
 * naming the run and its owner; closing out of order then throws
 * {@code StructureViolationException} (WP-20). Close them in a try-with-resources statement.
 *
 * @param <T> the item type
 * @param <R> the result type
 */
public interface Results<T, R> extends Iterator<R>, AutoCloseable {

    /**
     * Abandons the run if it is still going, waits until every thread it started has finished,
     * and closes its scope.
     *
     * @throws WrongThreadException if called by a thread other than the one that called {@code run()}
     */
    @Override
    void close();

    /** {@return the run's counters now; any thread} */
    PoolStats stats();

    /** {@return how the run ended, once it has; any thread} */
    Optional<RunOutcome<T>> outcome();
}
