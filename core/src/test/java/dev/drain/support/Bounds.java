package dev.drain.support;

import java.time.Duration;

/**
 * How long a test waits before it calls a wait a hang. Generous, because a bound exists to turn a
 * hang into a failure, not to measure speed; scaled by {@code -Ddrain.test.factor=N} on slow
 * machines, as JSR-166's {@code jsr166.delay.factor} does.
 */
public final class Bounds {
    private Bounds() {}

    /** The scale factor, from {@code drain.test.factor} (default 1). */
    public static final int FACTOR = Integer.getInteger("drain.test.factor", 1);

    /** The longest any single wait in a test may take before the test fails. */
    public static final Duration WAIT = Duration.ofSeconds(20L * FACTOR);

    /**
     * A timeout that a test expects to pass (for example a timed get on an empty queue): short, so
     * the test stays quick, and never used to order events.
     */
    public static final Duration SHORT = Duration.ofMillis(50);
}
