package dev.drain.queue;

import java.io.Serial;

/**
 * Thrown by {@link ShutdownQueue#getNowait getNowait} on an empty queue that is still open, and by
 * {@link ShutdownQueue#get(java.time.Duration) get(timeout)} when the timeout passes first:
 * Python's {@code asyncio.QueueEmpty} (and {@code queue.Empty} for the timed form).
 */
public final class QueueEmpty extends Exception {
    @Serial
    private static final long serialVersionUID = 1L;

    /** Creates the exception with the message {@code "queue is empty"}. */
    public QueueEmpty() {
        super("queue is empty");
    }
}
