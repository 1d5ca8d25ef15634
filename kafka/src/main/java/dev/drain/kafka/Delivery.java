package dev.drain.kafka;

import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Headers;
import org.jspecify.annotations.Nullable;

/**
 * One record of a topic, as a {@link KafkaSource} delivers it to a worker pool: the item a handler
 * gets, and what the source's settler settles (KC-3). A record delivered again (after an abort, a
 * crash or a rebalance) is a new delivery.
 *
 * <p>The key and the value are deserialized by the source's poll thread. A record that its
 * deserializer cannot read is still delivered, so that it fails as an item and goes to the
 * dead-letter topic instead of stopping the consumer: its {@link #key()} or {@link #value()} then
 * throws {@link UnreadableRecord}. Two deliveries are equal only if they are the same object.
 *
 * @param <K> the key type
 * @param <V> the value type
 */
public final class Delivery<K, V> {
    private final TopicPartition partition;
    private final long offset;
    private final long timestamp;
    private final @Nullable K key;
    private final @Nullable V value;
    /** Why the key or the value could not be read, or null. */
    private final @Nullable UnreadableRecord unreadable;
    private final Headers headers;
    /** The record's bytes, for its dead letter. */
    private final byte @Nullable [] rawKey;
    private final byte @Nullable [] rawValue;
    /** The assignment of the partition it was delivered under: a settlement of an older one is stale (KC-8). */
    private final long assignment;

    Delivery(TopicPartition partition, long offset, long timestamp, @Nullable K key, @Nullable V value,
            @Nullable UnreadableRecord unreadable, Headers headers, byte @Nullable [] rawKey, byte @Nullable [] rawValue,
            long assignment) {
        this.partition = partition;
        this.offset = offset;
        this.timestamp = timestamp;
        this.key = key;
        this.value = value;
        this.unreadable = unreadable;
        this.headers = headers;
        this.rawKey = rawKey;
        this.rawValue = rawValue;
        this.assignment = assignment;
    }

    /** {@return the record's topic} */
    public String topic() {
        return partition.topic();
    }

    /** {@return the record's partition number} */
    public int partition() {
        return partition.partition();
    }

    /** {@return the record's topic and partition} */
    public TopicPartition topicPartition() {
        return partition;
    }

    /** {@return the record's offset in its partition} */
    public long offset() {
        return offset;
    }

    /** {@return the record's timestamp, in milliseconds since the epoch} */
    public long timestamp() {
        return timestamp;
    }

    /**
     * {@return the record's key, deserialized; null for a record without one}
     *
     * @throws UnreadableRecord if the key or the value could not be deserialized
     */
    public @Nullable K key() {
        if (unreadable != null) {
            throw unreadable;
        }
        return key;
    }

    /**
     * {@return the record's value, deserialized; null for a record without one (a tombstone)}
     *
     * @throws UnreadableRecord if the key or the value could not be deserialized
     */
    public @Nullable V value() {
        if (unreadable != null) {
            throw unreadable;
        }
        return value;
    }

    /** {@return whether the key and the value could be deserialized} */
    public boolean readable() {
        return unreadable == null;
    }

    /** {@return the record's headers, read-only} */
    public Headers headers() {
        return headers;
    }

    byte @Nullable [] rawKey() {
        return rawKey;
    }

    byte @Nullable [] rawValue() {
        return rawValue;
    }

    long assignment() {
        return assignment;
    }

    /** {@return {@code topic-partition@offset}: never the key or the value, which may be large, or unreadable} */
    @Override
    public String toString() {
        return partition + "@" + offset;
    }
}
