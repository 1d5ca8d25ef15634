package dev.drain.kafka;

import dev.drain.pool.RunOutcome;
import dev.drain.pool.WorkerPool;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.NavigableSet;
import java.util.TreeMap;
import java.util.TreeSet;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;

/** The next consumer of a group, as the tests check what a run left to it. */
final class Takeover {
    private Takeover() {}

    /** What a takeover got. */
    record Got(Map<TopicPartition, NavigableSet<Long>> offsets, int deliveries, long skippedAsDone) {}

    /**
     * Runs a fresh {@link KafkaSource} of {@code group} (which reads the commit's metadata) until
     * it is idle, handling every delivery successfully; {@return what it was delivered}
     */
    static Got bySource(Broker broker, String group, String topic) {
        List<Delivery<String, String>> got = Collections.synchronizedList(new ArrayList<>());
        try (KafkaSource<String, String> source = KafkaSource.builder(broker.consumer(group), new StringDeserializer(),
                new StringDeserializer()).topics(topic).endWhenIdle(Duration.ofSeconds(1)).open()) {
            WorkerPool<Delivery<String, String>, String> pool = WorkerPool.<Delivery<String, String>, String>builder(d -> {
                got.add(d);
                return "ok";
            }).workers(4).queueSize(8).settler(source.settler()).build();
            RunOutcome<Delivery<String, String>> outcome = Recorded.runToTheEnd(pool, source, r -> {});
            if (!(outcome instanceof RunOutcome.Completed<Delivery<String, String>>)) {
                throw new AssertionError("the takeover did not complete: " + outcome);
            }
            return new Got(Recorded.offsets(got), got.size(), source.skippedAsDone());
        }
    }

    /**
     * Reads {@code topic} the way a plain consumer of {@code group} would after a restart: from
     * each partition's committed offset to its end, ignoring the commit's metadata; {@return the
     * offsets read}
     */
    static Map<TopicPartition, NavigableSet<Long>> byPlainConsumer(Broker broker, String group, String topic, int partitions) {
        Map<TopicPartition, OffsetAndMetadata> committed = broker.committed(group, topic);
        Map<TopicPartition, Long> end = broker.endOffsets(topic, partitions);
        Map<TopicPartition, NavigableSet<Long>> read = new TreeMap<>(java.util.Comparator.comparing(TopicPartition::toString));
        try (KafkaConsumer<byte[], byte[]> plain = new KafkaConsumer<>(Map.of("bootstrap.servers", broker.servers(),
                "enable.auto.commit", "false"), new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            List<TopicPartition> all = new ArrayList<>(end.keySet());
            plain.assign(all);
            for (TopicPartition partition : all) {
                OffsetAndMetadata from = committed.get(partition);
                plain.seek(partition, from == null ? 0 : from.offset());
            }
            long deadline = System.nanoTime() + dev.drain.support.Bounds.WAIT.toNanos();
            while (all.stream().anyMatch(p -> plain.position(p) < end.getOrDefault(p, 0L))) {
                if (System.nanoTime() > deadline) {
                    throw new AssertionError("a plain consumer could not read " + topic + " to its end");
                }
                for (ConsumerRecord<byte[], byte[]> record : plain.poll(Duration.ofMillis(100))) {
                    read.computeIfAbsent(new TopicPartition(record.topic(), record.partition()), p -> new TreeSet<>())
                            .add(record.offset());
                }
            }
        }
        return read;
    }
}
