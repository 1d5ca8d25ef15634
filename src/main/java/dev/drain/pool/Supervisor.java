package dev.drain.pool;

import java.util.concurrent.TimeoutException;

/**
 * Runs one attempt and sees it through: the item's {@link ItemContext} bound, the handler forked
 * in a scope of its own, awaited with the pool's own deadline, and interrupted in up to
 * {@value #INTERRUPT_ROUNDS} rounds before its scope is closed (WP-3, WP-4, decision 0007).
 * Called by a worker (or by the producer for the item it held at a stop), which owns the
 * attempt's scope.
 */
final class Supervisor<T, R> {

    /**
     * How many times an attempt that outlived its time, or whose run is being cancelled, is
     * interrupted, {@code itemTimeout} apart, before it is reported stuck (WP-4). The JDK's scopes
     * interrupt once; a handler that swallows one or two interrupts is still stopped here.
     */
    static final int INTERRUPT_ROUNDS = 3;

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

    /** Why the first wait for an attempt ended. */
    private enum Waited { COMPLETED, TIMED_OUT, CANCELLED }

    private final PoolConfig<T, R> config;
    private final Lifecycle<T> lifecycle;
    private final Ledger<T> ledger;
    private final Reporter reporter;
    private final Deadlines deadlines;

    Supervisor(PoolConfig<T, R> config, Lifecycle<T> lifecycle, Ledger<T> ledger, Reporter reporter,
               Deadlines deadlines) {
        this.config = config;
        this.lifecycle = lifecycle;
        this.ledger = ledger;
        this.reporter = reporter;
        this.deadlines = deadlines;
    }

    /**
     * Runs one attempt. {@code onStuck} runs, on this thread, at the moment the attempt has
     * outlived every round (while it still runs), to record the item's failure at once.
     */
    Attempted<R> attempt(ItemContext<T> context, Runnable onStuck) {
        reporter.record("attempt.started", context::toString);
        PoolEvents.Attempt event = new PoolEvents.Attempt();
        event.begin();
        Attempted<R> result = ScopedValue.where(ItemContext.CURRENT, context).call(() -> supervise(context, onStuck));
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
     * BLOCKS-UNTIL: the handler has returned. For a handler that outlives every round, that is the
     * one unbounded wait: the documented limit.
     */
    private Attempted<R> supervise(ItemContext<T> context, Runnable onStuck) {
        try (Structured.Single<R> single = Structured.Single.fork(config.name() + "-attempt",
                config.threads().factory("attempt"), () -> config.handler().handle(context.item()))) {
            Waited waited = awaitCompletionOrCancellation(single, deadlines.slotOf(context.worker()));
            if (waited == Waited.COMPLETED) {
                return ended(context, single.ending());
            }
            if (waited == Waited.TIMED_OUT) {
                ledger.timedOut();
                new PoolEvents.Timeout().commitFor(config.name(), context);
                reporter.record("attempt.timeout", () -> context + " timeout=" + config.itemTimeout());
            }
            for (int round = 1; round <= INTERRUPT_ROUNDS && !single.isCompleted(); round++) {
                if (round > 1) {
                    escalated(context, round);
                }
                single.interrupt();
                awaitIgnoringInterrupts(single, deadlines.timeout());
            }
            if (!single.isCompleted()) {
                onStuck.run();
                while (!single.isCompleted()) {
                    awaitIgnoringInterrupts(single, Long.MAX_VALUE);
                }
                return new Attempted.Stuck<>();
            }
            return waited == Waited.TIMED_OUT
                    ? new Attempted.Failed<>(new TimeoutException(context + " outlived itemTimeout " + config.itemTimeout()))
                    : new Attempted.Cancelled<>();
        }
    }

    /**
     * Waits for the attempt until its deadline, which the run's {@link Deadlines} watch: the wait
     * itself has no timeout, and the watchdog wakes this thread when the deadline has passed. An
     * interrupt of this thread only wakes it to look at the run's phase: a cancellation ends the
     * wait, anything else does not (decision 0015).
     */
    private Waited awaitCompletionOrCancellation(Structured.Single<R> single, int slot) {
        long deadline = deadlines.arm(slot);
        try {
            while (true) {
                if (single.isCompleted()) {
                    return Waited.COMPLETED; // even in a cancelled run: a result produced is delivered (WP-12)
                }
                if (lifecycle.isCancelling()) {
                    return Waited.CANCELLED;
                }
                if (deadline - System.nanoTime() <= 0) {
                    return Waited.TIMED_OUT;
                }
                try {
                    single.awaitWake();
                } catch (InterruptedException e) {
                    // woken: look at the phase again
                }
            }
        } finally {
            deadlines.disarm(slot);
        }
    }

    /** Waits at most {@code nanos} for the attempt; interrupts change nothing here, the rounds go on. */
    private static void awaitIgnoringInterrupts(Structured.Single<?> single, long nanos) {
        long deadline = System.nanoTime() + Math.min(nanos, Long.MAX_VALUE / 2);
        while (!single.isCompleted()) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                return;
            }
            try {
                single.await(left);
            } catch (InterruptedException e) {
                // the escalation is already under way; the wait goes on
            }
        }
    }

    private Attempted<R> ended(ItemContext<T> context, Structured.Ending<R> ending) {
        return switch (ending) {
            case Structured.Ending.Returned<R> r when r.value() == null ->
                    new Attempted.Failed<>(new NullPointerException("the handler returned null for " + context));
            case Structured.Ending.Returned<R> r -> {
                reporter.record("attempt.succeeded", context::toString);
                yield new Attempted.Succeeded<>(r.value());
            }
            case Structured.Ending.Threw<R> t -> {
                reporter.record("attempt.failed", () -> context + " cause=" + Text.of(t.error()));
                yield new Attempted.Failed<>(t.error());
            }
        };
    }

    private void escalated(ItemContext<T> context, int round) {
        ledger.escalated();
        reporter.record("attempt.escalated", () -> context + " round=" + round);
        new PoolEvents.Escalation().commitFor(config.name(), context, round);
    }
}
