package dev.drain.support;

import java.io.IOException;
import java.time.Duration;

/**
 * A backend a handler calls, which goes down once, for a set time, as soon as a set number of
 * calls have succeeded: every call in the outage throws an {@link IOException}, every call before
 * and after it succeeds. For the proofs that a run with a backoff rides out an outage instead of
 * dead-lettering the work that would succeed once the backend is back (WP-28, WP-23).
 */
public final class Outage {
    private final int upFor;
    private final long downNanos;
    /** Guarded by {@code this}: the calls that succeeded before the outage. */
    private int succeededBefore;
    /** Guarded by {@code this}: when the outage began ({@link System#nanoTime()}), once it has. */
    private long downAt;
    /** Guarded by {@code this}: whether the outage has begun. */
    private boolean wentDown;
    /** Guarded by {@code this}: the calls the outage refused. */
    private int refused;

    /**
     * @param upFor how many calls succeed before the backend goes down
     * @param down how long it stays down
     */
    public Outage(int upFor, Duration down) {
        this.upFor = upFor;
        this.downNanos = down.toNanos();
    }

    /**
     * One call to the backend.
     *
     * @param what what the call is about, for the exception's message
     * @throws IOException if the backend is down
     */
    public synchronized void call(String what) throws IOException {
        if (!wentDown) {
            if (++succeededBefore == upFor) {
                wentDown = true;
                downAt = System.nanoTime();
            }
            return;
        }
        if (System.nanoTime() - downAt < downNanos) {
            refused++;
            throw new IOException("the backend is down (" + what + ")");
        }
    }

    /** {@return how many calls the outage refused} */
    public synchronized int refused() {
        return refused;
    }

    /** {@return whether the outage has begun} */
    public synchronized boolean wentDown() {
        return wentDown;
    }
}
