package dev.drain.pool;

import java.io.Serial;
import java.time.Duration;
import org.jspecify.annotations.Nullable;

/**
 * The cause recorded for an item whose handler was still running after three rounds of
 * interrupts, each {@code itemTimeout} apart. The pool cannot stop a thread that ignores
 * interrupts; it reports the item as failed at once, and its run cannot end until the handler
 * returns. This is the pool's one documented limit (WP-4).
 *
 * <p>Only the pool creates it. Its message, which names the item, is built when it is first asked
 * for, on the thread that asks: the pool's watchdog, which finds the attempt stuck, never runs an
 * item's {@code toString}.
 */
public final class StuckAttempt extends Exception {
    @Serial
    private static final long serialVersionUID = 2L;

    /** The attempt's context, whose item's text the message gives (not serialized: an item need not be). */
    private final transient ItemContext<?> context;
    /** How many rounds of interrupts the attempt outlived. */
    private final int rounds;
    /** How far apart the rounds were: the pool's {@code itemTimeout}. */
    private final Duration apart;
    /** The message, once built; racy but idempotent (every thread builds the same text). */
    private transient volatile @Nullable String message;

    /** An attempt of {@code context} that outlived {@code rounds} rounds of interrupts, {@code apart} apart. */
    StuckAttempt(ItemContext<?> context, int rounds, Duration apart) {
        this.context = context;
        this.rounds = rounds;
        this.apart = apart;
    }

    /** {@return which attempt was stuck, and after how many rounds of interrupts} */
    @Override
    public String getMessage() {
        String built = message;
        if (built == null) {
            built = context + ": the handler was still running after " + rounds + " rounds of interrupts, "
                    + apart + " apart";
            message = built;
        }
        return built;
    }
}
