package dev.drain.kafka;

import dev.drain.pool.Settlement;
import java.util.Collection;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.common.TopicPartition;
import org.jspecify.annotations.Nullable;

/**
 * One batch the settler handed to the poll thread ({@link GroupSettler#handOver}), and the outcome
 * of the commit that records it (KC-4).
 *
 * <p>A request is QUEUED until the poll thread takes it to serve (or to fail it, when its partitions
 * are lost), or until the settler withdraws it: whichever comes first wins, through one
 * compare-and-set, so that a withdrawn batch is never committed and a taken one always gets its
 * outcome. The future is completed once, by the poll thread after it took the request or when it
 * ends, never with the exchange's lock held.
 *
 * @param <K> the key type
 * @param <V> the value type
 */
final class Request<K, V> {
    private static final int QUEUED = 0;
    private static final int TAKEN = 1;
    private static final int WITHDRAWN = 2;

    /** The settlements, as handed over: immutable. */
    final List<Settlement<Delivery<K, V>>> batch;
    /** Completed by the poll thread: normally once the commit that records the batch succeeded, else exceptionally. */
    private final CompletableFuture<@Nullable Void> committed = new CompletableFuture<>();
    /** QUEUED, then TAKEN by the poll thread or WITHDRAWN by the settler; written by both, through compare-and-set only. */
    private final AtomicInteger state = new AtomicInteger(QUEUED);

    Request(List<Settlement<Delivery<K, V>>> batch) {
        this.batch = List.copyOf(batch);
    }

    /**
     * {@return the future of the commit that records the batch}: completed normally once that
     * commit has succeeded, exceptionally if it failed, if the batch's partitions were lost, or if
     * the source ended before committing it (KC-4, KC-7, KC-8, KC-11)
     */
    CompletableFuture<@Nullable Void> committed() {
        return committed;
    }

    /** {@return whether the poll thread may serve it (it was not withdrawn)}; poll thread only. */
    boolean take() {
        return state.compareAndSet(QUEUED, TAKEN);
    }

    /** {@return whether the settler withdrew it before the poll thread took it}: then nothing of it is committed. */
    boolean withdraw() {
        return state.compareAndSet(QUEUED, WITHDRAWN);
    }

    /** {@return whether any settlement of the batch is of one of {@code partitions}} */
    boolean touches(Collection<TopicPartition> partitions) {
        for (Settlement<Delivery<K, V>> settlement : batch) {
            if (partitions.contains(settlement.item().topicPartition())) {
                return true;
            }
        }
        return false;
    }
}
