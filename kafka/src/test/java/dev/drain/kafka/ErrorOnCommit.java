package dev.drain.kafka;

import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.kafka.clients.consumer.ConsumerInterceptor;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;

/**
 * A consumer interceptor whose {@code onCommit} throws an {@link AssertionError} once armed: Kafka's
 * interceptors catch only {@code Exception}, so the Error comes out of {@code commitSync}, after the
 * broker wrote the commit (for {@code KafkaEdgesTest}).
 */
public final class ErrorOnCommit implements ConsumerInterceptor<byte[], byte[]> {
    static final AtomicBoolean ARMED = new AtomicBoolean();

    public ErrorOnCommit() {}

    @Override
    public ConsumerRecords<byte[], byte[]> onConsume(ConsumerRecords<byte[], byte[]> records) {
        return records;
    }

    @Override
    public void onCommit(Map<TopicPartition, OffsetAndMetadata> offsets) {
        if (ARMED.get()) {
            throw new AssertionError("an interceptor's Error in onCommit");
        }
    }

    @Override
    public void close() {}

    @Override
    public void configure(Map<String, ?> configs) {}
}
