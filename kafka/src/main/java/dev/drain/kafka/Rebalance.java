package dev.drain.kafka;

import java.util.Collection;
import java.util.HashSet;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;

/**
 * The rebalance callbacks (KC-8), which the consumer runs on the poll thread inside {@code poll}
 * and {@code close}: an assigned partition is tracked from what the group committed; a revoked one
 * loses its buffered deliveries (never pulled, they are the next owner's), has what was settled
 * committed, and is forgotten, so that later settlements of it are stale; a lost one (this member
 * was fenced) has nothing committed, and the batches handed over that settle any of it fail.
 *
 * @param <K> the key type
 * @param <V> the value type
 */
final class Rebalance<K, V> implements ConsumerRebalanceListener {
    /** The poll thread's consumer: these callbacks run on that thread. */
    private final KafkaConsumer<byte[], byte[]> consumer;
    private final Exchange<K, V> exchange;
    private final Tracks tracks;
    private final Commits<K, V> commits;
    private final PollLoop<K, V> loop;

    Rebalance(KafkaConsumer<byte[], byte[]> consumer, Exchange<K, V> exchange, Tracks tracks, Commits<K, V> commits,
            PollLoop<K, V> loop) {
        this.consumer = consumer;
        this.exchange = exchange;
        this.tracks = tracks;
        this.commits = commits;
        this.loop = loop;
    }

    @Override
    public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
        boolean was = exchange.polling(false); // no wakeup while this callback calls the consumer
        try {
            track(partitions);
        } finally {
            exchange.polling(was);
        }
    }

    @Override
    public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
        boolean was = exchange.polling(false);
        try {
            exchange.dropBuffered(partitions);
            commits.serve(); // what was settled is committed before the partitions go
            tracks.forget(partitions);
        } finally {
            exchange.polling(was);
        }
    }

    @Override
    public void onPartitionsLost(Collection<TopicPartition> partitions) {
        exchange.dropBuffered(partitions);
        commits.failHandedOver(partitions);
        tracks.forget(partitions);
    }

    private void track(Collection<TopicPartition> partitions) {
        if (partitions.isEmpty()) {
            return;
        }
        // A wakeup that the poll left pending may land in these calls: a callback that threw
        // would leave the partitions assigned and untracked, so each call is made again.
        Map<TopicPartition, OffsetAndMetadata> committed = PollLoop.despiteWakeups(() -> consumer.committed(new HashSet<>(partitions)));
        for (TopicPartition partition : partitions) {
            OffsetAndMetadata from = committed.get(partition);
            long start = from != null ? from.offset() : PollLoop.despiteWakeups(() -> consumer.position(partition));
            tracks.assign(partition, from, start);
        }
        if (loop.full()) { // this poll must not fill the buffer further with the new partitions' records (KC-2)
            consumer.pause(partitions);
        }
    }
}
