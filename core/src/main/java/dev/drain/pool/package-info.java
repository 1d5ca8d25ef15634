/**
 * A worker pool built on the JDK's structured concurrency: {@link dev.drain.pool.WorkerPool},
 * its {@link dev.drain.pool.Results}, and the types that say how a run ended.
 *
 * <p>Python to Java: {@code await} is a blocking call on a virtual thread; {@code CancelledError}
 * is an interrupt; an {@code asyncio.Task} is a thread forked by a
 * {@code StructuredTaskScope}; a {@code ContextVar} is a {@link ScopedValue};
 * an {@code ExceptionGroup} of failures is a {@link dev.drain.pool.PoolFailure}.
 *
 * <p>The numbered clauses ({@code WP-1} ...) that the tests cite are in
 * {@code specs/worker-pool.md}.
 */
@NullMarked
package dev.drain.pool;

import org.jspecify.annotations.NullMarked;
