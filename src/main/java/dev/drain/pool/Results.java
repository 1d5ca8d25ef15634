package dev.drain.pool;

import java.util.Iterator;
import java.util.Optional;

/**
 * The results of one {@link WorkerPool#run run}, in completion order, and the handle that ends it.
 * Use it in a try-with-resources statement:
 * {@snippet file="TourSnippets.java" region="pool"}
 *
 * <p>{@code hasNext()} blocks until a result arrives or the run ends. The call that reaches the end
 * returns {@code false} if the run {@linkplain RunOutcome.Completed completed}, and throws
 * {@link PoolFailure} if items failed permanently or {@link PoolAborted} if the run was aborted
 * (and throws it again if called again). If the consumer's thread is interrupted while it waits,
 * the run is abandoned as by {@link #close()}, the interrupt status is set again, and
 * {@link java.util.concurrent.CancellationException} is thrown.
 *
 * <p>{@link #close()} before the end abandons the run: queued items are dropped, attempts are
 * cancelled (with the pool's escalating interrupts), and {@code close()} returns only when every
 * thread of the run has finished. After the end it does nothing. Only the consumer's thread
 * should iterate; {@link #stats()} and {@link #outcome()} may be called from any thread.
 *
 * @param <R> the result type
 */
public interface Results<R> extends Iterator<R>, AutoCloseable {

    /** Abandons the run if it is still going, and waits until every thread it started has finished. */
    @Override
    void close();

    /** {@return the run's counters now} */
    PoolStats stats();

    /** {@return how the run ended, once it has} */
    Optional<RunOutcome> outcome();
}
