package dev.drain.pool;

import dev.drain.safe.Fatal;
import dev.drain.safe.SafeText;
import java.lang.System.Logger.Level;
import java.time.Duration;
import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * What a run writes to the log, and at which level: the one home of drain's log lines (WP-26).
 * They go to {@code System.getLogger("dev.drain.pool")} (the JDK's {@code java.util.logging} unless
 * the application installs another {@code System.LoggerFinder}, as SLF4J's and Log4j's bridges do),
 * so the core needs no logging library. The rule: log what nobody else is told; what the run
 * throws to its reader is logged at {@code DEBUG} only, never logged and thrown.
 * <ul>
 *   <li>{@code ERROR}: a permanent failure in a run that goes on past it (WP-23), with its stack
 *       trace: the store and this line are the only places it goes.</li>
 *   <li>{@code WARNING}: an attempt that outlived every interrupt round (its thread still runs);
 *       a run that ended aborted (by {@code abort()} or at a stop's deadline), abandoned, crashed
 *       or unsettled, with its counts; a run whose owner closed its scope under it (WP-20).</li>
 *   <li>{@code INFO}: a graceful stop once the intake has stopped (how many items were pulled;
 *       what it holds then drains), and the end of a stopped run, with its counts.</li>
 *   <li>{@code DEBUG}: a retry with its cause; a permanent failure that the run throws in its
 *       {@link PoolFailure}; the end of every other run.</li>
 * </ul>
 * A line is built only if its level is loggable. What the logger throws is dropped (a
 * {@link VirtualMachineError} is rethrown): logging never decides a fate. A line logged on the
 * watchdog carries no user text (no item, no exception message), because the watchdog never runs
 * user code.
 */
final class PoolLog {
    /** The logger's name. */
    static final String NAME = "dev.drain.pool";

    private static final System.Logger LOGGER = System.getLogger(NAME);

    private PoolLog() { }

    /** A permanent failure, on the worker that recorded it; {@code thrown} says whether the run's end throws it (WP-6). */
    static void failed(String pool, ItemFailure<?> failure, boolean thrown) {
        log(thrown ? Level.DEBUG : Level.ERROR, () -> "drain: run " + pool + ": item " + SafeText.of(failure.item())
                + " failed for good after " + failure.attempts() + (failure.attempts() == 1 ? " attempt" : " attempts")
                + (thrown ? "" : "; settled as failed, the run goes on"), failure.cause());
    }

    /** A retry, on the worker: {@code context}'s attempt threw {@code cause}, which is retryable. */
    static void retrying(String pool, ItemContext<?> context, Throwable cause) {
        log(Level.DEBUG, () -> "drain: run " + pool + ": " + context + " failed, retrying: " + SafeText.of(cause), null);
    }

    /** On a worker: {@code context}'s attempt failed with {@code cause}, and its retry, due at {@code retryAt}, is the store's (WP-29). */
    static void deferring(String pool, ItemContext<?> context, Throwable cause, java.time.Instant retryAt) {
        log(Level.DEBUG, () -> "drain: run " + pool + ": " + context + " failed, its retry handed to the store for "
                + retryAt + ": " + SafeText.of(cause), null);
    }

    /** On the watchdog: worker {@code worker}'s attempt {@code attempt} outlived every round; no user text. */
    static void stuck(String pool, int worker, int attempt, Duration itemTimeout) {
        log(Level.WARNING, () -> "drain: run " + pool + ": worker " + worker + "'s attempt " + attempt + " outlived "
                + Watchdog.INTERRUPT_ROUNDS + " interrupt rounds of " + itemTimeout + " and still runs; its item has"
                + " failed (StuckAttempt), and the run ends only once the attempt returns", null);
    }

    /** On the producer, once it has put its last item: a requested stop ended the intake after {@code pulled} items. */
    static void stopping(String pool, long pulled) {
        log(Level.INFO, () -> "drain: run " + pool + " stopping: intake stopped after " + pulled
                + " items; the queued and in-flight work drains", null);
    }

    /** On the driver: the run ended with {@code outcome}; {@code books} are its counts. */
    static void ended(String pool, RunOutcome<?> outcome, String books) {
        RunOutcome<?> ended = outcome instanceof RunOutcome.Unsettled<?> u ? u.ended() : outcome;
        Level level = switch (ended) {
            case RunOutcome.Aborted<?> a -> Level.WARNING;
            case RunOutcome.Abandoned<?> a -> Level.WARNING;
            case RunOutcome.Crashed<?> c -> Level.WARNING;
            case RunOutcome.Completed<?> c when c.stopRequested() -> Level.INFO;
            default -> outcome instanceof RunOutcome.Unsettled<?> ? Level.WARNING : Level.DEBUG;
        };
        log(level, () -> "drain: run " + pool + " ended " + describe(outcome) + ": " + books, null);
    }

    /** On the watchdog: the run's owner is closing the run's scope without having closed its results (WP-20). */
    static void scopeClosed(String pool, Thread owner) {
        log(Level.WARNING, () -> "drain: run " + pool + " abandoned: its owner, thread \"" + owner.getName() + "\" (#"
                + owner.threadId() + "), is closing the run's scope without having closed its Results (a forgotten"
                + " close(), the results of an earlier run closed first, or a ScopedValue binding that ended around"
                + " them); close the results in a try-with-resources statement on the thread that called run()", null);
    }

    /** {@return how {@code outcome} reads in a log line} */
    private static String describe(RunOutcome<?> outcome) {
        return switch (outcome) {
            case RunOutcome.Completed<?> c -> c.stopRequested() ? "Completed (stopped)" : "Completed";
            case RunOutcome.Aborted<?> a -> a.deadlinePassed() ? "Aborted (the stop's deadline passed)" : "Aborted";
            case RunOutcome.Abandoned<?> a -> "Abandoned (" + a.reason() + ")";
            case RunOutcome.Unsettled<?> u -> "Unsettled (" + u.unsettled().size() + " settlements not acknowledged), "
                    + describe(u.ended());
            default -> outcome.getClass().getSimpleName();
        };
    }

    private static void log(Level level, Supplier<String> line, @Nullable Throwable thrown) {
        try {
            if (LOGGER.isLoggable(level)) {
                if (thrown == null) {
                    LOGGER.log(level, line.get());
                } else {
                    LOGGER.log(level, line.get(), thrown);
                }
            }
        } catch (Throwable e) { // the logger, or a throwable's getMessage() inside its formatter
            if (Fatal.is(e)) {
                throw e;
            }
        }
    }
}
