package dev.drain.support;

import java.time.Duration;

/**
 * The handler no deadline can stop: the one a child JVM's service runs for the item that must
 * hold its stop until the deadline and past it (WP-24, WP-27), in the core's and the adapters'
 * process tests.
 */
public final class Stubborn {
    private Stubborn() {}

    /** Ignores every interrupt, for as long as its JVM lives: never returns. */
    @SuppressWarnings("InfiniteLoopStatement")
    public static void ignoreEveryInterrupt() {
        while (true) {
            try {
                Thread.sleep(Duration.ofMinutes(1));
            } catch (InterruptedException e) {
                // ignored, on purpose
            }
        }
    }
}
