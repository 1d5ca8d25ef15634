package dev.drain.pool;

import dev.drain.safe.Fatal;
import dev.drain.safe.SafeText;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;

/**
 * Each item a worker takes, from its first attempt to its fate: the attempts (WP-3, WP-4), the
 * retry policy (WP-5) and its backoff with the run's retry room (WP-28), and the fate, decided
 * once by an {@link InHand} and recorded in the {@link Ledger} (WP-2, WP-6, WP-23). Called on the
 * workers; an item parked for a retry may come back on another worker.
 */
final class Handling<T, R> {

    private final PoolConfig<T, R> config;
    private final Lifecycle<T> lifecycle;
    private final Ledger<T> ledger;
    private final Settling<T> settling;
    private final Reporter reporter;
    private final Supervisor<T, R> supervisor;
    /** Hands a success's result to the consumer (the run's outbox). */
    private final Consumer<R> deliver;
    /** Items waiting for a delayed retry (WP-28); empty unless the pool has a backoff. */
    private final RetryRoom<InHand> room;

    Handling(PoolConfig<T, R> config, Lifecycle<T> lifecycle, Ledger<T> ledger, Settling<T> settling, Reporter reporter,
             Supervisor<T, R> supervisor, Consumer<R> deliver) {
        this.config = config;
        this.lifecycle = lifecycle;
        this.ledger = ledger;
        this.settling = settling;
        this.reporter = reporter;
        this.supervisor = supervisor;
        this.deliver = deliver;
        this.room = new RetryRoom<>(config.workers());
    }

    /** {@return the retry room, for the workers' loop} */
    RetryRoom<InHand> room() {
        return room;
    }

    /** The run is being cancelled: what waits for a retry is dropped, each item's next attempt cancelled. Never waits. */
    void cancelWaiting() {
        for (RetryRoom.Waiting<InHand> waiting : room.drop()) {
            waiting.held().cancelledBeforeRetry(waiting.due());
        }
    }

    /**
     * Attempts a fresh item from the attempt after those its store says it had (WP-29), as
     * {@link #handle(InHand, int, int)} does; if the user's {@code priorAttempts} throws, the item
     * fails with that as its cause, after its one attempt in this run that never ran.
     */
    void handleFresh(T item, int worker) {
        InHand held = new InHand(item);
        int first;
        try {
            first = config.firstAttempt(item);
        } catch (Throwable e) { // the user's function: anything (a checked one too, thrown sneakily); the item alone pays for it
            if (Fatal.isBeyondTheCall(e)) {
                held.cancelled();
                throw e;
            }
            if (lifecycle.isCancelling()) {
                held.cancelled(); // perhaps the cancellation's interrupt: the item is the store's again, not dead
            } else {
                held.failed(1, e);
            }
            return;
        }
        handle(held, first, worker);
    }

    /**
     * Attempts {@code held}'s item from attempt {@code first} until it succeeds, fails permanently,
     * is parked for a delayed retry, is deferred to its store, or the run is cancelled; records its
     * fate once.
     */
    void handle(InHand held, int first, int worker) {
        boolean parked = false;
        try {
            for (int attempt = first; !held.isDecided() && !parked; attempt++) {
                ItemContext<T> context = new ItemContext<>(held.item, attempt, worker, config.attemptDeadline());
                switch (supervisor.attempt(context, () -> held.stuck(context))) {
                    case Supervisor.Attempted.Succeeded<R> s -> {
                        held.succeeded();
                        if (config.deliversResults()) {
                            deliver.accept(s.value());
                        }
                    }
                    case Supervisor.Attempted.Stuck<R> s -> { } // decided by the watchdog when it found it stuck
                    case Supervisor.Attempted.Cancelled<R> c -> held.cancelled();
                    case Supervisor.Attempted.Failed<R> f -> parked = retryOrFail(held, context, f.cause());
                }
            }
        } finally {
            if (!parked && !held.isDecided()) {
                held.cancelled(); // this thread is failing mid-item: the crash is reported by its caller
            }
        }
    }

    /**
     * A failed attempt: the item fails for good, is cancelled, is retried at once (on this worker),
     * or waits for its retry (WP-28); {@return whether it was parked in the retry room}
     */
    private boolean retryOrFail(InHand held, ItemContext<T> context, Throwable cause) {
        if (!config.isRetryable(cause) || context.attempt() > config.maxRetries()) {
            held.failed(context.attempt(), cause);
            return false;
        }
        Duration delay = config.backoff().delayBefore(context.attempt(),
                ThreadLocalRandom.current());
        if (config.defers(delay)) { // longer than the pool keeps a retry: the store keeps it (WP-29), even in a
            Instant retryAt = Instant.now().plus(delay); // cancellation, so that the attempt just made is counted
            PoolLog.deferring(config.name(), context, cause, retryAt);
            held.deferred(context.attempt(), retryAt);
            return false;
        }
        long due = System.nanoTime() + delay.toNanos();
        if (lifecycle.isCancelling()) { // it would be retried, but the run is being cancelled
            if (delay.isZero()) {
                held.cancelled();
            } else {
                held.cancelledBeforeRetry(due);
            }
            return false;
        }
        ledger.retried();
        PoolLog.retrying(config.name(), context, cause);
        reporter.record(MetricsEvent.ATTEMPT_RETRY, () -> "item=" + SafeText.of(context.item()) + " next_attempt="
                + (context.attempt() + 1) + (delay.isZero() ? "" : " delay=" + delay));
        if (delay.isZero()) {
            return false;
        }
        return switch (room.park(held, context.attempt() + 1, due)) {
            case PARKED -> true;
            case DROPPED -> {
                held.cancelledBeforeRetry(due);
                yield false;
            }
            case FULL -> {
                waitUntil(due); // the room holds one item per worker: this one waits on its worker
                if (lifecycle.isCancelling()) {
                    held.cancelledBeforeRetry(due);
                }
                yield false;
            }
        };
    }

    /** Waits until {@code due} ({@link System#nanoTime()}), or until the run is being cancelled. */
    private void waitUntil(long due) {
        for (long left = due - System.nanoTime(); left > 0 && !lifecycle.isCancelling(); left = due - System.nanoTime()) {
            LockSupport.parkNanos(this, left);
            boolean _ = Thread.interrupted(); // woken to look at the phase (decision 0015)
        }
    }

    /**
     * One item in a worker's hands: its fate is decided exactly once, by one of these, which
     * records it in the ledger (which never waits). The worker decides it, except for a stuck
     * attempt, which the watchdog decides while the attempt still runs; the watch's lock orders
     * that write before the worker's next read. A slow store holds the worker (WP-22), at the one
     * point where that changes nothing else: before a success or a deferral is recorded (the
     * item stays in the worker's hands, one of WP-1's {@code workers}), and after a failure is
     * recorded and has stopped the intake.
     */
    final class InHand {
        final T item;
        /** Written by the worker, or by the watchdog under the item's watch's lock; read by the worker. */
        private volatile boolean decided;

        InHand(T item) {
            this.item = item;
        }

        boolean isDecided() {
            return decided;
        }

        /** Waits for the store's room, keeping a place, then records the success. */
        void succeeded() {
            settling.reserve();
            decide();
            ledger.succeeded(item);
        }

        void cancelled() {
            decide();
            ledger.cancelled(item, null);
        }

        /** Cancelled while it waited for a retry due at {@code due} ({@link System#nanoTime()}): its store learns when. */
        void cancelledBeforeRetry(long due) {
            decide();
            ledger.cancelled(item, Instant.now().plusNanos(due - System.nanoTime()));
        }

        /** Waits for the store's room, keeping a place, then hands the retry to the store (WP-29). */
        void deferred(int attempts, Instant retryAt) {
            settling.reserve();
            decide();
            ledger.deferred(item, attempts, retryAt);
        }

        /** Records the failure and stops the intake, then waits for the store's room. */
        void failed(int attempts, Throwable cause) {
            decide();
            ItemFailure<T> failure = new ItemFailure<>(item, attempts, cause);
            ledger.failed(failure);
            lifecycle.itemFailed(); // WP-6: intake stops at the first permanent failure; the queue drains (not WP-23)
            PoolLog.failed(config.name(), failure, config.stopsAtFailure());
            settling.awaitRoom();
        }

        /**
         * On the watchdog: the attempt outlived every round and still runs, so the item fails now
         * (WP-4). Builds no text: the cause's message is built when it is read.
         */
        void stuck(ItemContext<T> context) {
            decide();
            StuckAttempt cause = new StuckAttempt(context, Watchdog.INTERRUPT_ROUNDS, config.itemTimeout());
            ledger.stuck(new ItemFailure<>(item, context.attempt(), cause), cause);
            lifecycle.itemFailed();
            PoolLog.stuck(config.name(), context.worker(), context.attempt(), config.itemTimeout());
        }

        private void decide() {
            if (decided) {
                throw new IllegalStateException("unreachable: an item's fate decided twice");
            }
            decided = true;
        }
    }
}
