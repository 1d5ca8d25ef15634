package dev.drain.pool;

import dev.drain.safe.SafeText;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeoutException;
import org.jspecify.annotations.Nullable;

/**
 * Runs one attempt and sees it through, on the worker that owns it: the handler forked in a
 * scope of its own and called there with the item's {@link ItemContext} bound, the worker's
 * {@link Watchdog.Watch} armed around it, and the scope closed once the attempt has ended (WP-3,
 * WP-4, decisions 0007 and 0025). The worker does not time the attempt or interrupt it: the
 * run's watchdog does, from a platform thread, so the worker needs no CPU until the attempt has
 * ended, and then reads the verdict.
 */
final class Supervisor<T, R> {

    /** How one attempt ended, as the pool sees it. */
    sealed interface Attempted<R> {
        record Succeeded<R>(R value) implements Attempted<R> {}

        /** Failed: the handler threw, returned null, or outlived {@code itemTimeout}. */
        record Failed<R>(Throwable cause) implements Attempted<R> {}

        /** The run is being cancelled (abort, abandon, a crash) and the attempt was stopped. */
        record Cancelled<R>() implements Attempted<R> {}

        /** Outlived every round of interrupts; already recorded as a permanent failure. */
        record Stuck<R>() implements Attempted<R> {}
    }

    /** What an attempt that never ran its handler ends with; never seen outside (its verdict decides). */
    private static final class NotBegun extends Exception {
        @java.io.Serial
        private static final long serialVersionUID = 1L;

        NotBegun() {
            super("the attempt ended before its handler began", null, false, false);
        }
    }

    private final PoolConfig<T, R> config;
    private final Lifecycle<T> lifecycle;
    private final Reporter reporter;
    private final Watchdog watchdog;
    /** The name of every attempt's scope. */
    private final String attemptScope;
    /**
     * Per worker, what each of its attempts' scopes is given: the thread factory that hands the
     * attempt's thread to the worker's watch, and the watch's completion. Made once per run, so
     * that an attempt allocates only what is its own (decision 0046).
     */
    private final ThreadFactory[] watchedThreads;
    private final Runnable[] completions;

    Supervisor(PoolConfig<T, R> config, Lifecycle<T> lifecycle, Reporter reporter, Watchdog watchdog) {
        this.config = config;
        this.lifecycle = lifecycle;
        this.reporter = reporter;
        this.watchdog = watchdog;
        this.attemptScope = config.name() + "-attempt";
        ThreadFactory attemptThreads = config.threads().factory("attempt");
        this.watchedThreads = new ThreadFactory[config.workers()];
        this.completions = new Runnable[config.workers()];
        for (int w = 0; w < config.workers(); w++) {
            Watchdog.Watch watch = watchdog.watchOf(w);
            watchedThreads[w] = runnable -> watch.attach(attemptThreads.newThread(runnable));
            completions[w] = watch::completed;
        }
    }

    /**
     * Runs one attempt. {@code onStuck} runs, on the watchdog, at the moment the attempt has
     * outlived every round (while it still runs), to record the item's failure at once; it must
     * not wait and must not run user code.
     */
    Attempted<R> attempt(ItemContext<T> context, Runnable onStuck) {
        if (reporter.hasSink()) { // the detail's supplier is made only for a sink
            reporter.record(MetricsEvent.ATTEMPT_STARTED, context::toString);
        }
        PoolEvents.Attempt event = new PoolEvents.Attempt();
        event.begin();
        Attempted<R> result = supervise(context, onStuck);
        event.end();
        event.commitFor(config.name(), context, switch (result) {
            case Attempted.Succeeded<R> s -> "succeeded";
            case Attempted.Failed<R> f -> f.cause() instanceof TimeoutException ? "timed out" : "failed";
            case Attempted.Cancelled<R> c -> "cancelled";
            case Attempted.Stuck<R> s -> "stuck";
        });
        return result;
    }

    /**
     * BLOCKS-UNTIL: the handler has returned or thrown. For a handler that outlives every round,
     * that is the one unbounded wait: the documented limit.
     */
    private Attempted<R> supervise(ItemContext<T> context, Runnable onStuck) {
        Watchdog.Watch watch = watchdog.watchOf(context.worker());
        watch.arm(context, watchdog.timeout(), PoolEvents.labelIfRecording(context), onStuck);
        Watchdog.Verdict verdict;
        Structured.@Nullable Ending<R> ending = null;
        try {
            try (Structured.Single<R> single = Structured.Single.fork(attemptScope, watchedThreads[context.worker()],
                    () -> {
                        if (!watch.begin()) {
                            throw new NotBegun(); // timed out or cancelled before its thread ran: the verdict says which
                        }
                        // bound here, on the attempt's own thread, for the handler's call alone
                        return ScopedValue.where(ItemContext.CURRENT, context)
                                .call(() -> config.handler().handle(context.item()));
                    }, completions[context.worker()])) {
                if (lifecycle.isCancelling()) {
                    watchdog.wake(); // the run was cancelled while this attempt started: have it stopped now
                }
                single.awaitEnd();
                ending = single.ending();
            }
        } finally {
            verdict = watch.disarm(); // the attempt has ended (or never started): the verdict is final
        }
        return switch (verdict) {
            case IN_TIME -> ended(context, java.util.Objects.requireNonNull(ending));
            case TIMED_OUT -> new Attempted.Failed<>(
                    new TimeoutException(context + " outlived itemTimeout " + config.itemTimeout()));
            case CANCELLED -> new Attempted.Cancelled<>();
            case STUCK -> new Attempted.Stuck<>();
        };
    }

    private Attempted<R> ended(ItemContext<T> context, Structured.Ending<R> ending) {
        return switch (ending) {
            case Structured.Ending.Returned<R> r when r.value() == null && config.deliversResults() ->
                    new Attempted.Failed<>(new NullPointerException("the handler returned null for " + context));
            case Structured.Ending.Returned<R> r -> {
                if (reporter.hasSink()) {
                    reporter.record(MetricsEvent.ATTEMPT_SUCCEEDED, context::toString);
                }
                yield new Attempted.Succeeded<>(r.value());
            }
            case Structured.Ending.Threw<R> t -> {
                reporter.record(MetricsEvent.ATTEMPT_FAILED, () -> context + " cause=" + SafeText.of(t.error()));
                yield new Attempted.Failed<>(t.error());
            }
        };
    }
}
