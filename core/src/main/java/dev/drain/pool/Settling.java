package dev.drain.pool;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import dev.drain.safe.Fatal;
import dev.drain.safe.SafeText;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * The pool's side of the {@link Settler}: every fate the {@link Ledger} records is offered here as
 * one {@link Settlement}, and the run's {@code settler} thread submits them to the settler in
 * batches (WP-22, decision 0039). The settler is user code, so, like the metrics sink, it runs on a
 * thread of its own; unlike the sink's, its failures are kept: the settlements of a batch it did
 * not take are <em>unsettled</em>, and the outcome names them. A {@link Handoff} carries them.
 *
 * <ul>
 *   <li>{@link #offer} never waits, so recording a fate never waits for the store. A worker waits
 *       for room at its own chosen points (before it records a success or a deferral, {@link #reserve}, keeping
 *       a place for it; after it records a failure, {@link #awaitRoom}) while {@code (BACKLOG_BATCHES + batchesInFlight − 1) ×
 *       batchSize} settlements are unacknowledged, unless the run is being cancelled: a slow store
 *       slows the pool instead of filling the heap. No offer is ever dropped.</li>
 *   <li>The settler thread submits at most {@code batchSize} settlements at a time, in the order
 *       they were offered, and keeps at most the settler's {@link Settler#batchesInFlight()}
 *       batches unacknowledged.</li>
 *   <li>A batch the store did not take is unsettled, and the settler thread tells the run through
 *       what {@link #deliver}'s caller passed: the run stops pulling (as at an item's permanent
 *       failure), and later batches are still submitted. A {@link VirtualMachineError} crashes
 *       the run instead, and every later settlement is unsettled without a call.</li>
 *   <li>{@link #finish} (the driver, after the seal: no fate can be recorded any more) waits until
 *       every settlement has been answered.</li>
 * </ul>
 * Without a settler every method returns at once, nothing is kept, and there is no settler thread.
 *
 * @param <T> the item type
 */
final class Settling<T> {
    /** The backlog, in batches, with one batch in flight: how far the workers may be ahead of the store. */
    static final int BACKLOG_BATCHES = 4;

    /** A run without a settler. */
    static <T> Settling<T> none() {
        return new Settling<>(null, 1, 1, new Reporter(null));
    }

    private final @Nullable Settler<T> settler;
    /** Where a failed batch is reported ({@code settlement.failed}), from the settler thread. */
    private final Reporter reporter;
    private final Handoff<Settlement<T>> settlements;
    /** The settlements that the store did not acknowledge, in the order they were offered. */
    @GuardedBy("this")
    private final List<Settlement<T>> unsettled = new ArrayList<>();
    /** The same settlements, by identity: a batch a failing settler thread had begun to keep is kept once. */
    @GuardedBy("this")
    private final Set<Settlement<T>> kept = Collections.newSetFromMap(new IdentityHashMap<>());
    /** What the first failing call threw; later causes are suppressed in it. */
    @GuardedBy("this")
    private @Nullable Throwable failure;

    /**
     * @param settler the store's settler, or {@code null} for none
     * @param batchSize the most settlements per call
     * @param batchesInFlight the most batches submitted and not yet acknowledged (the settler's own)
     * @param reporter where a failed batch is reported
     */
    Settling(@Nullable Settler<T> settler, int batchSize, int batchesInFlight, Reporter reporter) {
        this.settler = settler;
        this.reporter = reporter;
        int backlog = Math.multiplyExact(batchSize, BACKLOG_BATCHES + batchesInFlight - 1);
        this.settlements = new Handoff<>(batchSize, batchesInFlight, backlog - 1);
    }

    /** {@return whether there is a settler, and so a settler thread} */
    boolean hasSettler() {
        return settler != null;
    }

    /**
     * Offers one fate; never waits. Call in the order the fates are recorded (the ledger calls it
     * under its own lock). Once the settling has finished or its thread has failed, the settlement
     * is unsettled at once: kept, not lost.
     */
    void offer(Settlement<T> settlement) {
        if (settler != null && !settlements.offer(settlement)) {
            keep(List.of(settlement), new IllegalStateException(
                    "unreachable: a settlement offered after the run was sealed, or after the settler thread failed"));
        }
    }

    /**
     * BLOCKS-UNTIL: fewer settlements than the backlog are unacknowledged, or the run is being
     * cancelled ({@link #releaseWaiters}), or the settling has finished; then keeps a place for
     * the caller's next settlement, so that the backlog is never passed. Interrupts only wake it to
     * look again.
     */
    void reserve() {
        if (settler != null) {
            boolean _ = settlements.reserve();
        }
    }

    /** As {@link #reserve}, but keeps no place: for a worker whose settlement was offered already. */
    void awaitRoom() {
        if (settler != null) {
            settlements.awaitRoom();
        }
    }

    /** The run is being cancelled: workers waiting for room go on at once. Never blocks for long. */
    void releaseWaiters() {
        settlements.releaseWaiters();
    }

    /**
     * The settler thread: submits every offered settlement, in order, until {@link #finish} and
     * nothing is left unanswered. A batch the store did not take runs {@code onFailed} (the run
     * stops pulling); a {@link VirtualMachineError}, from the settler or from this thread itself,
     * goes to {@code onFatal} (the run crashes).
     */
    void deliver(Runnable onFailed, Consumer<Throwable> onFatal) {
        Settler<T> target = settler;
        if (target != null) {
            settlements.deliver(new ToTheStore(target, onFailed, onFatal));
        }
    }

    /** Submits each batch to the store, and keeps what it did not take. */
    private final class ToTheStore implements Handoff.Receiver<Settlement<T>> {
        private final Settler<T> store;
        private final Runnable onFailed;
        private final Consumer<Throwable> onFatal;
        /** Set, on the settler thread alone, once the store threw a VirtualMachineError: it is not called again. */
        private boolean broken;

        ToTheStore(Settler<T> store, Runnable onFailed, Consumer<Throwable> onFatal) {
            this.store = store;
            this.onFailed = onFailed;
            this.onFatal = onFatal;
        }

        @Override
        public CompletionStage<?> deliver(List<Settlement<T>> batch) {
            if (broken) {
                return CompletableFuture.failedStage(new NotSubmitted());
            }
            // The settler's own stage is user code: its answer is copied into one of ours, so that
            // nothing it does (complete twice, throw from whenComplete) reaches the hand-off.
            CompletableFuture<@Nullable Void> answer = new CompletableFuture<>();
            try {
                CompletionStage<?> stage = Objects.requireNonNull(store.submit(List.copyOf(batch)),
                        "the settler's submit returned null instead of a stage");
                stage.whenComplete((ignore, cause) -> {
                    if (cause == null) {
                        answer.complete(null);
                    } else {
                        answer.completeExceptionally(cause);
                    }
                });
            } catch (Throwable e) { // Exception, InterruptedException, Error: the batch is unsettled
                answer.completeExceptionally(e);
            }
            return answer;
        }

        @Override
        public void answered(List<Settlement<T>> batch, @Nullable Throwable cause) {
            if (cause == null) {
                return; // acknowledged
            }
            Throwable thrown = unwrap(cause);
            if (thrown instanceof NotSubmitted) {
                keep(batch, null); // the store broke earlier: its cause is kept already
                return;
            }
            keep(batch, thrown); // before the driver, waiting for this batch, can decide
            if (Fatal.is(thrown)) {
                broken = true; // the JVM may be in trouble: the settler is not called again
                onFatal.accept(thrown);
            } else {
                onFailed.run();
            }
            reporter.recordNow(MetricsEvent.SETTLEMENT_FAILED, () -> "batch=" + batch.size() + " cause=" + SafeText.of(thrown));
        }

        @Override
        public void lost(List<Settlement<T>> batch, Throwable cause) {
            onFatal.accept(cause); // the settler thread itself failed: a bug in drain, or the JVM's trouble
            keep(batch, cause);
        }
    }

    /** A batch not submitted, because the store broke on an earlier one. */
    private static final class NotSubmitted extends Exception {
        @java.io.Serial
        private static final long serialVersionUID = 1L;

        NotSubmitted() {
            super("not submitted: the settler threw a VirtualMachineError on an earlier batch", null, false, false);
        }
    }

    /** What a stage failed with: the cause inside a {@link java.util.concurrent.CompletionException}, if it is one. */
    private static Throwable unwrap(Throwable cause) {
        return cause instanceof java.util.concurrent.CompletionException && cause.getCause() != null
                ? cause.getCause() : cause;
    }

    /** Keeps {@code batch} as unsettled, and {@code cause} (if any) as the first failure or suppressed in it. */
    private synchronized void keep(List<Settlement<T>> batch, @Nullable Throwable cause) {
        for (Settlement<T> settlement : batch) {
            if (kept.add(settlement)) {
                unsettled.add(settlement);
            }
        }
        if (cause != null) {
            failure = Lifecycle.keepFirst(failure, cause);
        }
    }

    /**
     * Nothing more will be offered (the run is sealed): waits until every settlement has been
     * answered. With {@code settlerStarted} false (the run could not start its threads), what is
     * queued is unsettled at once. The wait ignores interrupts and keeps them.
     */
    void finish(boolean settlerStarted) {
        if (settler == null) {
            return;
        }
        settlements.close();
        if (!settlerStarted) {
            List<Settlement<T>> never = settlements.takeQueued();
            if (!never.isEmpty()) {
                keep(never, new IllegalStateException("the run could not start its threads, so the settler was never called"));
            }
        }
        settlements.awaitAnswered();
    }

    /** {@return the settlements the store did not acknowledge, in the order they were offered} */
    synchronized List<Settlement<T>> unsettled() {
        return List.copyOf(unsettled);
    }

    /** {@return what the first failing call threw, if any call failed} */
    synchronized @Nullable Throwable failure() {
        return failure;
    }
}
