package dev.drain.kafka;

import dev.drain.pool.Settlement;
import dev.drain.pool.Settler;
import dev.drain.safe.Uninterruptibly;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ExecutionException;
import org.jspecify.annotations.Nullable;

/**
 * The source's settler ({@link KafkaSource#settler()}), called by the pool's settler thread: for
 * each batch it writes the dead letters ({@link DeadLetters}, KC-5) and hands the batch to the poll
 * thread ({@link #handOver}); the batch is acknowledged by the commit that records it (KC-4).
 *
 * <p>The pool calls {@link #submit}, which returns the commit's future without waiting, and keeps
 * up to {@link #batchesInFlight()} batches waiting for their commits (decision 0053), so one commit
 * carries every batch that arrived in its interval. The future is completed by the poll thread
 * with no lock held. {@link #settle}, for a caller that wants to wait, waits for the commit, and
 * withdraws a batch the poll thread has not taken when its thread is interrupted.
 *
 * @param <K> the key type
 * @param <V> the value type
 */
final class GroupSettler<K, V> implements Settler<Delivery<K, V>> {
    private final Exchange<K, V> exchange;
    private final DeadLetters<K, V> deadLetters;
    private final String name;
    private final int batchesInFlight;

    GroupSettler(Settings settings, Exchange<K, V> exchange, DeadLetters<K, V> deadLetters) {
        this.exchange = exchange;
        this.deadLetters = deadLetters;
        this.batchesInFlight = settings.batchesInFlight();
        this.name = "the settler of the Kafka source of " + settings.topics() + " (group " + settings.group() + ")";
    }

    @Override
    public void settle(List<Settlement<Delivery<K, V>>> batch) throws Exception {
        deadLetters.write(batch);
        awaitCommitted(handOver(batch));
    }

    /** Writes the batch's dead letters, hands it over, and {@return the future of the commit that records it} */
    @Override
    public CompletionStage<?> submit(List<Settlement<Delivery<K, V>>> batch) throws Exception {
        deadLetters.write(batch);
        return handOver(batch).committed();
    }

    @Override
    public int batchesInFlight() {
        return batchesInFlight;
    }

    /**
     * Hands {@code batch} to the poll thread, whose dead letters are written, and wakes it if it is
     * polling; does not wait for the commit. {@return the request: its {@link Request#committed()}
     * future is completed normally once the commit that records the batch has succeeded, and
     * exceptionally if that commit failed, the batch's partitions were lost, or the source ended
     * first}
     *
     * @throws IllegalStateException if the source is closed: nothing of the batch will be committed
     */
    Request<K, V> handOver(List<Settlement<Delivery<K, V>>> batch) {
        Request<K, V> request = new Request<>(batch);
        exchange.handOver(request);
        return request;
    }

    /**
     * Waits for the commit of a batch handed over, and throws what it failed with. If the wait is
     * interrupted before the poll thread took the batch, the batch is withdrawn (nothing of it will
     * be committed) and the interrupt thrown; once taken, its commit is under way and its outcome
     * must be known: the wait goes on, and the interrupt is kept.
     */
    private static void awaitCommitted(Request<?, ?> request) throws Exception {
        CompletableFuture<@Nullable Void> committed = request.committed();
        try {
            committed.get();
        } catch (InterruptedException e) {
            if (request.withdraw()) {
                throw e; // not taken: nothing of it will be committed
            }
            // taken: its commit is under way, and its outcome must be known; the interrupt is kept
            boolean succeeded = Uninterruptibly.awaitDone(committed);
            Thread.currentThread().interrupt(); // the interrupt that cut the first wait short
            if (!succeeded) {
                rethrow(committed.exceptionNow());
            }
        } catch (ExecutionException e) {
            rethrow(Objects.requireNonNull(e.getCause(), "a commit failed without a cause"));
        }
    }

    private static void rethrow(Throwable cause) throws Exception {
        if (cause instanceof Exception exception) {
            throw exception;
        }
        throw (Error) cause;
    }

    @Override
    public String toString() {
        return name;
    }
}
