package dev.drain.pool;

import java.io.Serial;

/**
 * The cause recorded for an item whose handler was still running after three rounds of
 * interrupts, each {@code itemTimeout} apart. The pool cannot stop a thread that ignores
 * interrupts; it reports the item as failed at once, and its run cannot end until the handler
 * returns. This is the pool's one documented limit.
 */
public final class StuckAttempt extends Exception {
    @Serial
    private static final long serialVersionUID = 1L;

    /**
     * Creates the exception.
     *
     * @param message what was stuck, and for how long
     */
    public StuckAttempt(String message) {
        super(message);
    }
}
