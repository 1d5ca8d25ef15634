package dev.drain.queue;

import java.io.Serial;

/**
 * Thrown by {@link ShutdownQueue#putNowait putNowait} on a full queue that is still open, and by
 * {@link ShutdownQueue#put(Object, java.time.Duration) put(item, timeout)} when the timeout passes
 * first: Python's {@code asyncio.QueueFull} (and {@code queue.Full} for the timed form).
 */
public final class QueueFull extends Exception {
    @Serial
    private static final long serialVersionUID = 1L;

    /** Creates the exception with the message {@code "queue is full"}. */
    public QueueFull() {
        super("queue is full");
    }
}
