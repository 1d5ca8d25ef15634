package dev.drain.queue;

import java.io.Serial;

/**
 * Thrown by {@link ShutdownQueue#getNowait getNowait} on an empty queue that is still open, and by
 * {@link ShutdownQueue#get(java.time.Duration) get(timeout)} when the timeout passes first:
 * Python's {@code asyncio.QueueEmpty} (and {@code queue.Empty} for the timed form).
 *
 * <p>It is an expected outcome, handled where the call is, so it records no stack trace unless
 * {@code -Ddev.drain.queue.stackTraces=true} (specs/shutdown-queue.md SQ-19, decision 0012).
 */
public final class QueueEmpty extends Exception {
    @Serial
    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception with the message {@code "queue is empty"}, and without a stack trace
     * unless the system property {@code dev.drain.queue.stackTraces} is {@code true}.
     */
    public QueueEmpty() {
        super("queue is empty", null, true, StackTraces.recorded());
    }
}
