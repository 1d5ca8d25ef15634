/**
 * A blocking queue with Python 3.13's {@code asyncio.Queue} shutdown semantics:
 * {@link dev.drain.queue.ShutdownQueue} and its three exceptions.
 *
 * <p>Python to Java, in one table:
 * <table class="striped">
 *   <caption>Vocabulary</caption>
 *   <thead><tr><th>Python 3.13 {@code asyncio}</th><th>this package</th></tr></thead>
 *   <tbody>
 *     <tr><td>{@code await q.put(x)} / {@code await q.get()}</td>
 *         <td>{@code put(x)} / {@code get()}, blocking the calling (virtual) thread</td></tr>
 *     <tr><td>{@code put_nowait} / {@code get_nowait} / {@code task_done}</td>
 *         <td>{@code putNowait} / {@code getNowait} / {@code taskDone}</td></tr>
 *     <tr><td>{@code task.cancel()} and {@code CancelledError}</td>
 *         <td>{@link java.lang.Thread#interrupt()} and {@link java.lang.InterruptedException}</td></tr>
 *     <tr><td>{@code QueueShutDown}, {@code QueueEmpty}, {@code QueueFull}</td>
 *         <td>{@link dev.drain.queue.QueueShutDown}, {@link dev.drain.queue.QueueEmpty},
 *             {@link dev.drain.queue.QueueFull} (checked)</td></tr>
 *     <tr><td>{@code ValueError('task_done() called too many times')}</td>
 *         <td>{@code IllegalStateException("taskDone() called too many times")}</td></tr>
 *     <tr><td>{@code asyncio.wait_for(q.get(), t)}</td>
 *         <td>{@code get(Duration)}, with {@code queue.Queue}'s timeout rules</td></tr>
 *     <tr><td>{@code Queue}, {@code LifoQueue}, {@code PriorityQueue}</td>
 *         <td>{@code ShutdownQueue.fifo}, {@code .lifo}, {@code .priority}</td></tr>
 *   </tbody>
 * </table>
 *
 * <p>The numbered clauses ({@code SQ-01} ...) that the tests cite are in
 * {@code specs/shutdown-queue.md}.
 */
@NullMarked
package dev.drain.queue;

import org.jspecify.annotations.NullMarked;
