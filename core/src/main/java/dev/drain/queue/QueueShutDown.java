package dev.drain.queue;

import java.io.Serial;

/**
 * Thrown by {@link ShutdownQueue#put put}, {@link ShutdownQueue#putNowait putNowait}, and by
 * {@link ShutdownQueue#get get} and {@link ShutdownQueue#getNowait getNowait} once the queue is
 * both shut down and empty: Python's {@code asyncio.QueueShutDown}.
 *
 * <p>Like its Python original it is not a {@link QueueEmpty} or a {@link QueueFull}: code that
 * polls a queue must decide what a shutdown means to it. {@code taskDone()} and {@code join()}
 * never throw it.
 *
 * <p>It is an expected outcome, handled where the call is, so it records no stack trace unless
 * {@code -Ddev.drain.queue.stackTraces=true} (specs/shutdown-queue.md SQ-19, decision 0012).
 */
public final class QueueShutDown extends Exception {
    @Serial
    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception with the message {@code "queue is shut down"}, and without a stack trace
     * unless the system property {@code dev.drain.queue.stackTraces} is {@code true}.
     */
    public QueueShutDown() {
        super("queue is shut down", null, true, StackTraces.recorded());
    }
}
