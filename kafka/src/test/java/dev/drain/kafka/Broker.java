package dev.drain.kafka;

import dev.drain.lab.LocalKafka;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * The broker the tests run against: one {@link LocalKafka}, started when a test first asks for it
 * and stopped when the test run ends. A test asks for it as a parameter, and makes topics and
 * groups of its own ({@link #freshTopic}, {@link #freshGroup}), so that tests never share state.
 */
final class Broker implements AutoCloseable {
    private static final AtomicInteger NAMES = new AtomicInteger();

    /** Started when first asked for; guarded by this. */
    private @Nullable LocalKafka kafka;

    /** {@return the running cluster, started if this is the first ask} */
    synchronized LocalKafka kafka() {
        if (kafka == null) {
            try {
                kafka = LocalKafka.start();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while the local Kafka started", e);
            }
        }
        return kafka;
    }

    String servers() {
        return kafka().bootstrapServers();
    }

    /** Creates a topic of {@code partitions} and its dead-letter topic; {@return its name} */
    String freshTopic(String what, int partitions) {
        return freshTopic(what, partitions, Map.of());
    }

    /** The same, with settings for the dead-letter topic. */
    String freshTopic(String what, int partitions, Map<String, String> deadLetterConfig) {
        String name = "t" + NAMES.incrementAndGet() + "-" + what;
        try {
            kafka().createTopic(name, partitions, Map.of());
            kafka().createTopic(name + "-dlt", 1, deadLetterConfig);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
        return name;
    }

    /** {@return a consumer group name no other test uses} */
    static String freshGroup(String what) {
        return "g" + NAMES.incrementAndGet() + "-" + what;
    }

    /** The settings of a consumer of {@code group}: short timeouts, so that a fault fails fast. */
    Map<String, Object> consumer(String group) {
        Map<String, Object> config = new HashMap<>();
        config.put("bootstrap.servers", servers());
        config.put("group.id", group);
        config.put("default.api.timeout.ms", "10000");
        config.put("request.timeout.ms", "5000");
        return config;
    }

    /**
     * Writes {@code perPartition} records to each partition of {@code topic}, the value of each
     * {@code "<partition>-<i>"}, and waits until the broker has them all.
     */
    void produce(String topic, int partitions, int perPartition) {
        produce(servers(), topic, partitions, perPartition);
    }

    /** {@link #produce(String, int, int)} to the brokers at {@code servers}. */
    static void produce(String servers, String topic, int partitions, int perPartition) {
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(
                Map.of("bootstrap.servers", servers, "acks", "all", "linger.ms", "5"),
                new StringSerializer(), new StringSerializer())) {
            List<Future<RecordMetadata>> sent = new ArrayList<>();
            for (int i = 0; i < perPartition; i++) {
                for (int p = 0; p < partitions; p++) {
                    sent.add(producer.send(new ProducerRecord<>(topic, p, "k" + i, p + "-" + i)));
                }
            }
            awaitAll(sent);
        }
    }

    private static void awaitAll(List<Future<RecordMetadata>> sent) {
        try {
            for (Future<RecordMetadata> f : sent) {
                f.get();
            }
        } catch (ExecutionException e) {
            throw new IllegalStateException("a record was not written: " + e.getCause(), e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** Writes raw records to partition 0 of {@code topic}, and waits until the broker has them. */
    void produceRaw(String topic, List<byte[]> values) {
        try (KafkaProducer<byte[], byte[]> producer = new KafkaProducer<>(
                Map.of("bootstrap.servers", servers(), "acks", "all"),
                new org.apache.kafka.common.serialization.ByteArraySerializer(),
                new org.apache.kafka.common.serialization.ByteArraySerializer())) {
            List<Future<RecordMetadata>> sent = new ArrayList<>();
            for (byte[] value : values) {
                sent.add(producer.send(new ProducerRecord<>(topic, 0, null, value)));
            }
            awaitAll(sent);
        }
    }

    /** {@return what {@code group} has committed for {@code topic}, by partition} */
    Map<TopicPartition, OffsetAndMetadata> committed(String group, String topic) {
        try (Admin admin = kafka().admin()) {
            Map<TopicPartition, OffsetAndMetadata> all =
                    admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get();
            Map<TopicPartition, OffsetAndMetadata> mine = new TreeMap<>(java.util.Comparator.comparing(TopicPartition::toString));
            all.forEach((partition, offset) -> {
                if (partition.topic().equals(topic) && offset != null) {
                    mine.put(partition, offset);
                }
            });
            return mine;
        } catch (ExecutionException e) {
            throw new IllegalStateException(e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    /** {@return what {@code group} has committed for {@code partition}, which it must have} */
    OffsetAndMetadata committedOf(String group, TopicPartition partition) {
        OffsetAndMetadata committed = committed(group, partition.topic()).get(partition);
        if (committed == null) {
            throw new AssertionError(group + " has committed nothing for " + partition);
        }
        return committed;
    }

    /** {@return every record of {@code topic}, read from the start by an assigned consumer (no group)} */
    List<ConsumerRecord<byte[], byte[]>> readAll(String topic) {
        try (KafkaConsumer<byte[], byte[]> reader = new KafkaConsumer<>(
                Map.of("bootstrap.servers", servers(), "enable.auto.commit", "false"),
                new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            List<TopicPartition> partitions = new ArrayList<>();
            for (PartitionInfo info : reader.partitionsFor(topic)) {
                partitions.add(new TopicPartition(topic, info.partition()));
            }
            reader.assign(partitions);
            reader.seekToBeginning(partitions);
            Map<TopicPartition, Long> end = reader.endOffsets(partitions);
            List<ConsumerRecord<byte[], byte[]>> read = new ArrayList<>();
            long deadline = System.nanoTime() + dev.drain.support.Bounds.WAIT.toNanos();
            while (!reachedEnd(reader, end)) {
                if (System.nanoTime() > deadline) {
                    throw new AssertionError("could not read " + topic + " to its end " + end);
                }
                reader.poll(Duration.ofMillis(100)).forEach(read::add);
            }
            return read;
        }
    }

    private static boolean reachedEnd(KafkaConsumer<byte[], byte[]> reader, Map<TopicPartition, Long> end) {
        for (Map.Entry<TopicPartition, Long> e : end.entrySet()) {
            if (reader.position(e.getKey()) < e.getValue()) {
                return false;
            }
        }
        return true;
    }

    /** {@return the end offset of each partition of {@code topic}} */
    Map<TopicPartition, Long> endOffsets(String topic, int partitions) {
        try (KafkaConsumer<byte[], byte[]> reader = new KafkaConsumer<>(Map.of("bootstrap.servers", servers()),
                new ByteArrayDeserializer(), new ByteArrayDeserializer())) {
            List<TopicPartition> all = new ArrayList<>();
            for (int p = 0; p < partitions; p++) {
                all.add(new TopicPartition(topic, p));
            }
            return reader.endOffsets(all);
        }
    }

    /** {@return whether no thread of a Kafka source is left in this JVM} */
    static boolean noSourceThreads() {
        Set<Thread> threads = Thread.getAllStackTraces().keySet();
        return threads.stream().noneMatch(t -> t.getName().startsWith("drain-kafka-poll-"));
    }

    @Override
    public synchronized void close() throws IOException {
        if (kafka != null) {
            kafka.close();
            kafka = null;
        }
    }

    /** Resolves a {@link Broker} parameter: one per test run, closed when the run ends. */
    static final class Extension implements ParameterResolver {
        @Override
        public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
            return parameter.getParameter().getType() == Broker.class;
        }

        @Override
        public Broker resolveParameter(ParameterContext parameter, ExtensionContext context) {
            return context.getRoot().getStore(ExtensionContext.Namespace.create(Broker.class))
                    .computeIfAbsent(Broker.class, k -> new Broker(), Broker.class);
        }
    }
}
