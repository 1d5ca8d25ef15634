package dev.drain.kafka;

import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.clients.consumer.CloseOptions;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;

/**
 * {@link KafkaSource.Builder#open()}: checks the settings, connects, checks every topic and its
 * dead-letter topic, and starts the source (KC-1); if anything fails, it closes what it made, so
 * that nothing is left running. Runs on the thread that calls {@code open()}; it shares nothing.
 */
final class Opening {
    private Opening() {}

    /** The body of {@link KafkaSource.Builder#open()}, which documents it. */
    static <K, V> KafkaSource<K, V> open(KafkaSource.Builder<K, V> b) {
        if (b.topics.isEmpty()) {
            throw new IllegalArgumentException("a Kafka source needs at least one topic");
        }
        Object servers = b.consumerConfig.get(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG);
        if (servers == null) {
            throw new IllegalArgumentException("a Kafka source needs bootstrap.servers in its consumer settings");
        }
        if (b.consumerConfig.get(ConsumerConfig.GROUP_ID_CONFIG) == null) {
            throw new IllegalArgumentException("a Kafka source needs group.id in its consumer settings");
        }
        Map<String, Object> config = new HashMap<>(b.consumerConfig);
        config.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
        config.putIfAbsent(ConsumerConfig.GROUP_PROTOCOL_CONFIG, "consumer");
        config.putIfAbsent(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
        // a poll returns at most a buffer's worth: the buffer then never holds more than two
        int maxPoll = Integer.parseInt(String.valueOf(config.getOrDefault(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, "500")));
        config.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, Integer.toString(Math.min(maxPoll, b.buffer)));
        KafkaConsumer<byte[], byte[]> consumer = null;
        KafkaProducer<byte[], byte[]> producer = null;
        try {
            consumer = new KafkaConsumer<>(config, new ByteArrayDeserializer(), new ByteArrayDeserializer());
            for (String topic : b.topics) {
                mustExist(b, consumer, topic, servers);
                mustExist(b, consumer, topic + b.deadLetterSuffix, servers);
            }
            producer = new KafkaProducer<>(producerSettings(b, servers), new ByteArraySerializer(), new ByteArraySerializer());
            for (String topic : b.topics) { // the dead letters are written with the producer's settings: it must reach them too
                producer.partitionsFor(topic + b.deadLetterSuffix);
            }
            KafkaSource<K, V> source = new KafkaSource<>(settings(b), b.keys, b.values, consumer, producer);
            source.start();
            return source;
        } catch (RuntimeException | Error e) {
            if (consumer != null) {
                try {
                    consumer.close(CloseOptions.timeout(Duration.ZERO));
                } catch (RuntimeException suppressed) {
                    e.addSuppressed(suppressed);
                }
            }
            if (producer != null) {
                producer.close(Duration.ZERO);
            }
            if (e instanceof KafkaSourceException || e instanceof Error) {
                throw e;
            }
            throw new KafkaSourceException("cannot open a Kafka source of " + b.topics + " at " + servers + ": " + e, e);
        }
    }

    private static Settings settings(KafkaSource.Builder<?, ?> b) {
        Object ms = b.consumerConfig.get(ConsumerConfig.DEFAULT_API_TIMEOUT_MS_CONFIG);
        Duration commitTimeout = Duration.ofMillis(ms == null ? 60_000 : Long.parseLong(String.valueOf(ms)));
        return new Settings(String.valueOf(b.consumerConfig.get(ConsumerConfig.GROUP_ID_CONFIG)), List.copyOf(b.topics),
                b.deadLetterSuffix, b.buffer, b.metadataBudget, b.idleEnd, b.deadLetterTimeout, b.closeTimeout, b.commitInterval,
                commitTimeout, b.batchesInFlight);
    }

    /**
     * The dead-letter producer's settings: the consumer's settings that a producer also takes
     * (the servers, security, DNS; not the consumer's interceptors or client id), then
     * {@code acks=all}, idempotence and {@code max.block.ms} of the dead-letter timeout, then
     * {@link KafkaSource.Builder#deadLetterProducer}'s.
     */
    private static Map<String, Object> producerSettings(KafkaSource.Builder<?, ?> b, Object servers) {
        Map<String, Object> producing = new HashMap<>();
        Set<String> producerNames = ProducerConfig.configNames();
        b.consumerConfig.forEach((name, value) -> {
            if (producerNames.contains(name) && !name.equals(ProducerConfig.CLIENT_ID_CONFIG)
                    && !name.equals(ProducerConfig.INTERCEPTOR_CLASSES_CONFIG) && !name.startsWith("key.")
                    && !name.startsWith("value.")) {
                producing.put(name, value);
            }
        });
        producing.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, servers);
        producing.put(ProducerConfig.ACKS_CONFIG, "all");
        producing.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
        // send() itself waits for the topic's metadata: no longer than a batch may wait for its letters
        producing.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, Long.toString(b.deadLetterTimeout.toMillis()));
        producing.putAll(b.producerConfig);
        return producing;
    }

    private static void mustExist(KafkaSource.Builder<?, ?> b, KafkaConsumer<byte[], byte[]> consumer, String topic, Object servers) {
        List<PartitionInfo> partitions;
        try {
            partitions = consumer.partitionsFor(topic, b.openTimeout);
        } catch (org.apache.kafka.common.errors.TimeoutException e) {
            throw new KafkaSourceException("cannot reach the Kafka brokers at " + servers + " within " + b.openTimeout
                    + " (describing the topic " + topic + ")", e);
        }
        if (partitions == null || partitions.isEmpty()) {
            throw new KafkaSourceException("there is no topic " + topic + " at " + servers
                    + (topic.endsWith(b.deadLetterSuffix) ? " (the dead-letter topic of " + topic.substring(0, topic.length()
                            - b.deadLetterSuffix.length()) + "; create it, or choose another suffix)" : ""));
        }
    }
}
