/**
 * drain's JMH benchmarks: {@link dev.drain.queue.ShutdownQueue} and {@link dev.drain.pool.WorkerPool}
 * side by side with the JDK's queues, jox's {@code Channel}, a bare {@code StructuredTaskScope}
 * fork and the virtual-thread-per-task executor, in the same run. {@code benchmarks/run quick}
 * (or {@code full}) builds, runs and writes {@code BENCHMARKS.md}.
 *
 * <p>Every benchmark starts the threads it measures itself (JMH's own threads are platform
 * threads) and joins them before it returns, so no thread outlives the invocation that started it.
 */
package dev.drain.bench;
