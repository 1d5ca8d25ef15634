package dev.drain.kafka;

import dev.drain.pool.Settlement;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.consumer.CommitFailedException;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.ApiException;
import org.apache.kafka.common.errors.RebalanceInProgressException;
import org.apache.kafka.common.errors.RetriableException;

/**
 * The poll thread's commits (KC-4, KC-7): it serves the batches the settler handed over, marking
 * what is done in the {@link Tracks}, and commits every partition whose watermark or metadata
 * changed in one {@code commitSync}, at most every {@code commitInterval}; then it answers each
 * batch. Everything here runs on the poll thread, in its loop or in a revocation's callback; the
 * counters are read by any thread.
 *
 * @param <K> the key type
 * @param <V> the value type
 */
final class Commits<K, V> {
    private final Thread pollThread;
    /** The poll thread's consumer. */
    private final KafkaConsumer<byte[], byte[]> consumer;
    private final Exchange<K, V> exchange;
    private final Tracks tracks;
    /** The consumer group's id, for the messages. */
    private final String group;
    private final int metadataBudget;
    private final long intervalNanos;
    /** When the last commit began (System.nanoTime); poll thread only. */
    private long lastCommit = System.nanoTime() - TimeUnit.DAYS.toNanos(1);
    /** Written by the poll thread, read by any thread. */
    private final AtomicLong commits = new AtomicLong();
    /** Written by the poll thread, read by any thread. */
    private final AtomicLong refusedCommits = new AtomicLong();
    /** Written by the poll thread, read by any thread. */
    private final AtomicLong staleSettlements = new AtomicLong();

    Commits(Settings settings, KafkaConsumer<byte[], byte[]> consumer, Exchange<K, V> exchange, Tracks tracks, Thread pollThread) {
        this.pollThread = pollThread;
        this.consumer = consumer;
        this.exchange = exchange;
        this.tracks = tracks;
        this.group = settings.group();
        this.metadataBudget = settings.metadataBudget();
        this.intervalNanos = settings.commitInterval().toNanos();
    }

    /** {@return whether a commit interval has passed since the last commit began}; poll thread only. */
    boolean due() {
        assert Thread.currentThread() == pollThread;
        return System.nanoTime() - lastCommit >= intervalNanos;
    }

    /** {@return when the next commit is due, a {@link System#nanoTime} value}; poll thread only. */
    long dueAt() {
        assert Thread.currentThread() == pollThread;
        return lastCommit + intervalNanos;
    }

    /**
     * Serves the batches the settler handed over (KC-4): marks what is done, then commits every
     * partition whose watermark or metadata changed, in one {@code commitSync}; completes the
     * batches when it succeeded, and otherwise undoes the marks and fails them (KC-7). Poll thread only.
     */
    void serve() {
        assert Thread.currentThread() == pollThread;
        List<Request<K, V>> round = exchange.takeRequests();
        // Every batch taken here is answered before this method returns or throws: a settler waits for it.
        Map<TopicPartition, List<Long>> marked = new HashMap<>();
        List<Delivery<K, V>> markedDeliveries = new ArrayList<>();
        boolean sent = false; // whether a commit left this process: before that, a failure wrote nothing
        try {
            List<Delivery<K, V>> released = new ArrayList<>();
            for (Request<K, V> request : round) {
                for (Settlement<Delivery<K, V>> settlement : request.batch) {
                    Delivery<K, V> delivery = settlement.item();
                    PartitionTrack track = tracks.get(delivery.topicPartition());
                    if (track == null || track.assignment != delivery.assignment()) {
                        staleSettlements.incrementAndGet(); // revoked or lost since: the next owner delivers it again
                    } else if (settlement instanceof Settlement.Released<Delivery<K, V>>
                            || settlement instanceof Settlement.Deferred<Delivery<K, V>>) {
                        // outstanding still: the next stream of this source gets it (KC-6); a Deferred never
                        // comes here (this settler does not keep them, WP-29), and would be redelivered, never committed
                        released.add(delivery);
                    } else if (track.done(delivery.offset())) {
                        marked.computeIfAbsent(delivery.topicPartition(), p -> new ArrayList<>()).add(delivery.offset());
                        markedDeliveries.add(delivery);
                    }
                }
            }
            exchange.redeliverLater(released);
            Map<TopicPartition, OffsetAndMetadata> commit = new HashMap<>();
            Map<PartitionTrack, OffsetAndMetadata> writing = new HashMap<>();
            tracks.forEach((partition, track) -> {
                if (track.changed()) {
                    OffsetAndMetadata now = track.toCommit();
                    if (now.metadata().length() > metadataBudget || track.span() > OffsetMap.MAX_SPAN) {
                        throw new KafkaSourceException("the done offsets above the watermark " + now.offset() + " of " + partition
                                + " no longer fit in a commit's metadata (" + now.metadata().length() + " characters, the budget is "
                                + metadataBudget + "): a record below them has been in flight too long");
                    }
                    commit.put(partition, now);
                    writing.put(track, now);
                }
            });
            if (!commit.isEmpty()) {
                lastCommit = System.nanoTime();
                sent = true;
                commitSync(commit);
                writing.forEach(PartitionTrack::committed);
                commits.incrementAndGet();
            }
        } catch (Throwable e) {
            if (!sent || refused(e)) {
                // Nothing was written: the marks are undone, so that no later commit writes them, and
                // their deliveries go to the next stream of this source (KC-7).
                if (e instanceof CommitFailedException || e instanceof RebalanceInProgressException) {
                    refusedCommits.incrementAndGet();
                }
                marked.forEach((partition, offsets) -> {
                    PartitionTrack track = tracks.get(partition);
                    if (track != null) {
                        track.undo(offsets);
                    }
                });
                exchange.redeliverLater(markedDeliveries);
            }
            // Otherwise the outcome is unknown (a timeout: the broker may have written it): the marks
            // are kept, so that no later commit moves the offset back; the batches are named
            // unsettled, and may be committed by the next commit all the same (KC-7).
            if (e instanceof Error) {
                exchange.failing(e); // before the settlers hear of it: the stream has failed by the time they have
            }
            for (Request<K, V> request : round) {
                request.committed().completeExceptionally(e);
            }
            if (e instanceof Error error) {
                throw error; // the poll thread cannot go on: the source fails, and what is queued with it
            }
            return;
        }
        for (Request<K, V> request : round) {
            request.committed().complete(null);
        }
    }

    /**
     * This member lost {@code partitions} without giving them up: nothing of them can be
     * committed, so the batches already handed over that settle any of them fail, and are counted
     * as refused (KC-8). Poll thread only, in the callback.
     */
    void failHandedOver(Collection<TopicPartition> partitions) {
        assert Thread.currentThread() == pollThread;
        List<Request<K, V>> failing = exchange.takeRequestsTouching(partitions);
        refusedCommits.addAndGet(failing.size());
        for (Request<K, V> request : failing) {
            request.committed().completeExceptionally(new KafkaSourceException("this member of " + group + " lost " + partitions
                    + " before their settlements could be committed: the next owner delivers them again"));
        }
    }

    /**
     * {@return whether a commit that was sent and failed certainly wrote nothing}: the group
     * refused it, or the broker answered with an error that is not worth a retry. A timeout, a lost
     * connection or an interrupt leave the outcome unknown (the broker may have written it).
     */
    private static boolean refused(Throwable e) {
        return e instanceof CommitFailedException || e instanceof RebalanceInProgressException
                || (e instanceof ApiException && !(e instanceof RetriableException));
    }

    /** Commits, again if a wakeup cut it short (a wakeup left pending by a poll may land here, KC-4). */
    private void commitSync(Map<TopicPartition, OffsetAndMetadata> commit) {
        PollLoop.despiteWakeups(() -> {
            consumer.commitSync(commit);
            return commit;
        });
    }

    /** {@return how many commits succeeded} */
    long commits() {
        return commits.get();
    }

    /** {@return how many commits the group refused, and batches of partitions this member lost} */
    long refusedCommits() {
        return refusedCommits.get();
    }

    /** {@return how many settlements were dropped because their partition had been revoked or lost} */
    long staleSettlements() {
        return staleSettlements.get();
    }
}
