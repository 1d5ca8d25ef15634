package dev.drain.queue;

import java.io.Serial;

/**
 * Thrown by {@link ShutdownQueue#putNowait putNowait} on a full queue that is still open, and by
 * {@link ShutdownQueue#put(Object, java.time.Duration) put(item, timeout)} when the timeout passes
 * first: Python's {@code asyncio.QueueFull} (and {@code queue.Full} for the timed form).
 *
 * <p>It is an expected outcome, handled where the call is, so it records no stack trace unless
 * {@code -Ddev.drain.queue.stackTraces=true} (specs/shutdown-queue.md SQ-19, decision 0012).
 */
public final class QueueFull extends Exception {
    @Serial
    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception with the message {@code "queue is full"}, and without a stack trace
     * unless the system property {@code dev.drain.queue.stackTraces} is {@code true}.
     */
    public QueueFull() {
        super("queue is full", null, true, StackTraces.recorded());
    }
}
