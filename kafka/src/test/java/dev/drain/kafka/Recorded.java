package dev.drain.kafka;

import dev.drain.pool.Results;
import dev.drain.pool.RunOutcome;
import dev.drain.pool.Settlement;
import dev.drain.pool.Settler;
import dev.drain.pool.WorkerPool;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.NavigableSet;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;

/**
 * What the tests record of a run over a {@link KafkaSource}: every settlement the pool offered,
 * and whether the source's settler acknowledged it (returned) or not (threw).
 */
final class Recorded {
    /** One settlement and what the settler did with its batch. */
    record Settled(Settlement<Delivery<String, String>> settlement, boolean acknowledged) {}

    final List<Settled> settled = new ArrayList<>();

    /** {@return a settler that settles through {@code source}'s and records each settlement} */
    Settler<Delivery<String, String>> around(KafkaSource<String, String> source) {
        Settler<Delivery<String, String>> inner = source.settler();
        return batch -> {
            boolean ok = false;
            try {
                inner.settle(batch);
                ok = true;
            } finally {
                synchronized (this) {
                    for (Settlement<Delivery<String, String>> s : batch) {
                        settled.add(new Settled(s, ok));
                    }
                }
            }
        };
    }

    /** {@return the offsets, by partition, of the settlements that were acknowledged as done (succeeded or dead-lettered)} */
    synchronized Map<TopicPartition, NavigableSet<Long>> acknowledgedDone() {
        Map<TopicPartition, NavigableSet<Long>> done = new TreeMap<>(java.util.Comparator.comparing(TopicPartition::toString));
        for (Settled s : settled) {
            if (s.acknowledged() && !(s.settlement() instanceof Settlement.Released<Delivery<String, String>>)) {
                done.computeIfAbsent(s.settlement().item().topicPartition(), p -> new TreeSet<>()).add(s.settlement().item().offset());
            }
        }
        return done;
    }

    /** {@return the offsets of every settlement of a kind, by partition} */
    synchronized Map<TopicPartition, NavigableSet<Long>> offsetsOf(Class<?> kind) {
        Map<TopicPartition, NavigableSet<Long>> offsets = new TreeMap<>(java.util.Comparator.comparing(TopicPartition::toString));
        for (Settled s : settled) {
            if (kind.isInstance(s.settlement())) {
                offsets.computeIfAbsent(s.settlement().item().topicPartition(), p -> new TreeSet<>()).add(s.settlement().item().offset());
            }
        }
        return offsets;
    }

    /** {@return how many settlements there were} */
    synchronized int size() {
        return settled.size();
    }

    /**
     * The done offsets a group's commit records for a partition whose offsets are 0, 1, 2, ...
     * (the tests' topics: no compaction, no transactions): those below the watermark, and those
     * in the metadata.
     */
    static NavigableSet<Long> committedDone(OffsetAndMetadata committed) {
        NavigableSet<Long> done = new TreeSet<>();
        for (long o = 0; o < committed.offset(); o++) {
            done.add(o);
        }
        done.addAll(OffsetMap.decode(committed.offset(), committed.metadata()));
        return done;
    }

    /** {@return the done offsets of each partition of {@code topic} that {@code group} has committed} */
    static Map<TopicPartition, NavigableSet<Long>> committedDone(Broker broker, String group, String topic) {
        Map<TopicPartition, NavigableSet<Long>> done = new TreeMap<>(java.util.Comparator.comparing(TopicPartition::toString));
        broker.committed(group, topic).forEach((partition, committed) -> done.put(partition, committedDone(committed)));
        return done;
    }

    /**
     * Runs {@code pool} over {@code source}'s records to its end, reading every result and giving
     * {@code results} the chance to act on the way; {@return the outcome}
     */
    static RunOutcome<Delivery<String, String>> runToTheEnd(WorkerPool<Delivery<String, String>, String> pool,
            KafkaSource<String, String> source, Consumer<Results<Delivery<String, String>, String>> eachResult) {
        Results<Delivery<String, String>, String> ran;
        try (Stream<Delivery<String, String>> records = source.records();
                Results<Delivery<String, String>, String> results = pool.run(records)) {
            ran = results;
            try {
                while (results.hasNext()) {
                    results.next();
                    eachResult.accept(results);
                }
            } catch (RuntimeException ended) {
                // a PoolFailure, PoolAborted, PoolUnsettled: the outcome says which
            }
        }
        return ran.outcome().orElseThrow();
    }

    /** {@return every offset of {@code partitions} partitions with {@code perPartition} records each, by partition} */
    static Map<TopicPartition, NavigableSet<Long>> all(String topic, int partitions, int perPartition) {
        Map<TopicPartition, NavigableSet<Long>> all = new TreeMap<>(java.util.Comparator.comparing(TopicPartition::toString));
        for (int p = 0; p < partitions; p++) {
            NavigableSet<Long> offsets = new TreeSet<>();
            for (long o = 0; o < perPartition; o++) {
                offsets.add(o);
            }
            all.put(new TopicPartition(topic, p), offsets);
        }
        return all;
    }

    /** {@return {@code a} minus {@code b}, per partition, leaving out partitions that end empty} */
    static Map<TopicPartition, NavigableSet<Long>> minus(Map<TopicPartition, NavigableSet<Long>> a,
            Map<TopicPartition, NavigableSet<Long>> b) {
        Map<TopicPartition, NavigableSet<Long>> left = new TreeMap<>(java.util.Comparator.comparing(TopicPartition::toString));
        a.forEach((partition, offsets) -> {
            NavigableSet<Long> rest = new TreeSet<>(offsets);
            rest.removeAll(b.getOrDefault(partition, new TreeSet<>()));
            if (!rest.isEmpty()) {
                left.put(partition, rest);
            }
        });
        return left;
    }

    /** {@return the offsets of {@code deliveries}, by partition} */
    static Map<TopicPartition, NavigableSet<Long>> offsets(Iterable<Delivery<String, String>> deliveries) {
        Map<TopicPartition, NavigableSet<Long>> offsets = new TreeMap<>(java.util.Comparator.comparing(TopicPartition::toString));
        for (Delivery<String, String> d : deliveries) {
            offsets.computeIfAbsent(d.topicPartition(), p -> new TreeSet<>()).add(d.offset());
        }
        return offsets;
    }

    /** {@return only the non-empty entries of {@code offsets}} */
    static Map<TopicPartition, NavigableSet<Long>> nonEmpty(Map<TopicPartition, NavigableSet<Long>> offsets) {
        Map<TopicPartition, NavigableSet<Long>> kept = new TreeMap<>(java.util.Comparator.comparing(TopicPartition::toString));
        offsets.forEach((partition, set) -> {
            if (!set.isEmpty()) {
                kept.put(partition, set);
            }
        });
        return kept;
    }

    /** Unused partitions of a set, for messages. */
    static Set<TopicPartition> partitions(Map<TopicPartition, NavigableSet<Long>> offsets) {
        return offsets.keySet();
    }
}
