/**
 * A worker pool built on the JDK's structured concurrency: {@link dev.drain.pool.WorkerPool},
 * its {@link dev.drain.pool.Results}, and the types that say how a run ended.
 *
 * <p>Python to Java: {@code await} is a blocking call on a virtual thread; {@code CancelledError}
 * is an interrupt; an {@code asyncio.Task} is a thread forked by a
 * {@code StructuredTaskScope}; a {@code ContextVar} is a {@link ScopedValue};
 * an {@code ExceptionGroup} of failures is a {@link dev.drain.pool.PoolFailure}.
 *
 * <p>The numbered clauses ({@code WP-1} ... {@code WP-22}) that the tests cite are in
 * {@code specs/worker-pool.md}; the {@link dev.drain.pool.WorkerPool} class javadoc names each.
 *
 * <h2>The API</h2>
 * <ul>
 *   <li>What you build and run: {@link dev.drain.pool.WorkerPool} and its
 *       {@link dev.drain.pool.WorkerPool.Builder}, a {@link dev.drain.pool.Handler}, and the
 *       {@link dev.drain.pool.Results} you iterate and close.</li>
 *   <li>What a handler sees: {@link dev.drain.pool.ItemContext}.</li>
 *   <li>How a run ended: {@link dev.drain.pool.RunOutcome}; thrown at the end of the iteration:
 *       {@link dev.drain.pool.PoolFailure} (its {@link dev.drain.pool.ItemFailure}s, a
 *       {@link dev.drain.pool.StuckAttempt} among the causes), {@link dev.drain.pool.PoolAborted},
 *       {@link dev.drain.pool.PoolUnsettled}; counters: {@link dev.drain.pool.PoolStats}.</li>
 *   <li>Hooks that run on threads of the run's own: the {@link dev.drain.pool.MetricsSink} (its
 *       {@link dev.drain.pool.MetricsEvent}s) and the {@link dev.drain.pool.Settler} (its
 *       {@link dev.drain.pool.Settlement}s).</li>
 *   <li>A service: {@link dev.drain.pool.WorkerPool#forEach} and its
 *       {@link dev.drain.pool.SideEffect}, {@link dev.drain.pool.WorkerPool#drain},
 *       {@link dev.drain.pool.WorkerPool.OnFailure}, a {@link dev.drain.pool.Backoff} for retries, and
 *       {@link dev.drain.pool.StopOnShutdown}, the JVM's shutdown as a stop with a deadline.</li>
 * </ul>
 */
@NullMarked
package dev.drain.pool;

import org.jspecify.annotations.NullMarked;

/*
 * The engine, in reading order (each class's javadoc is its contract):
 *
 *   PoolConfig    the validated settings, and the two bounds they imply (WP-1's lead, the capped timeout)
 *   Lifecycle     the run's one state and every transition (WP-19); acts on the run through Effects
 *   Run           what the driver, the producer and the workers do (a due retry first, then the intake)
 *   Handling      one item from its first attempt to its fate: retries, the backoff; InHand decides the fate
 *   Source        the user's iterator: every call a Pull outcome, closed once
 *   Intake        producer -> workers: QueueIntake (ShutdownQueue) or SentinelIntake (markers)
 *   Supervisor    one attempt, on its worker: forked in a scope of its own, armed on the worker's watch
 *   Structured    the one seam to StructuredTaskScope: Boundary (the run's scope), runAll, Single
 *   ForcedClose   whether the JDK's forced close of a scope reaches the run's (WP-20)
 *   Watchdog      a platform thread: timeouts, interrupt rounds, cancellation, the owner check
 *   Ledger        the books, and the one corridor of a fate: books, settlement, event; never waits
 *   Settling      the fates -> the Settler, on the settler thread (WP-22)
 *   Reporter      the events -> the MetricsSink, on the metrics thread (WP-8)
 *   Handoff       the one hand-off both of them use: offer, wait for room, deliver, answer
 *   RunResults    the consumer's side: the outbox, the end of the iteration, close
 *   PoolThreads   the run's thread factory, counting what runs; PoolEvents: the JFR events
 *   RetryRoom     items waiting for a delayed retry, taken back by any worker once due (WP-28)
 *   PoolLog       what a run logs, and at which level (WP-26)
 *   StopOnShutdown  the JVM's shutdown hook: stops the runs drained through it, holds the JVM (WP-27)
 *
 * Threads, and the locks each takes (x); a lock is only ever taken in this order, left to right,
 * and a thread holding one takes only those to its right:
 *
 *                        Hook  Watch  Lifecycle  Source  Ledger  Settling  Handoff  queues  OPEN
 *   caller (owner)          x     .        x        x       x       x        x        x       x
 *   any thread (stop,       .     .        x        x       x       x        x        x       .
 *     abort)
 *   the shutdown hook       x     .        x        x       x       x        x        x       .
 *   driver                  .     .        x        x       x       x        x        x       x
 *   producer                .     .        x        x       x       x        x        x       .
 *   worker                  .     x        x        x       x       x        x        x       .
 *   attempt                 .     x        .        .       .       .        .        .       .
 *   watchdog                .     x        x        x       x       x        x        x       x
 *   metrics (reporter)      .     .        x        .       x       x        x        x       .
 *   settler                 .     .        x        x       x       x        x        x       .
 *   a store's own thread    .     .        .        .       .       .        x        .       .
 *
 *   Hook       a StopOnShutdown's ReentrantLock: the runs drained through it, whether it fired
 *   Watch      each worker's Watchdog.Watch (a monitor): arm, begin, complete, serve
 *   Lifecycle  the lifecycle's monitor: every transition, and its Effects under it
 *   Source     the source's monitor: who is pulling, for stopPulling's interrupt
 *   Ledger     the ledger's monitor: the books, and the settlement offered under it
 *   Settling   the settling's monitor: the unsettled list and the first failure
 *   Handoff    each hand-off's ReentrantLock (the sink's, the settler's): queued, held, in flight
 *   queues     the intake's and the outbox's ShutdownQueue locks, the sentinel intake's queue, the
 *              retry room's ReentrantLock (taken alone: a worker parks and takes back; an abort drops)
 *   OPEN       Structured.Boundary's registry of open runs (a static monitor), taken alone
 *
 * Nothing calls user code while holding any of them: the handler runs on its attempt's thread, the
 * sink and the settler on their hand-off's delivering thread outside its lock, the source on the
 * producer outside the source's monitor. A store may complete a settler's stage on a thread of its
 * own; that thread takes only the settler hand-off's lock.
 */
