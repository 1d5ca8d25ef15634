package dev.drain.kafka;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Map;
import org.apache.kafka.clients.consumer.ConsumerInterceptor;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.jspecify.annotations.Nullable;

/**
 * A witness outside the adapter of every commit a consumer made: Kafka's own interceptor hook,
 * which the client calls after a commit succeeded, appends one line per partition
 * ({@code partition offset metadata}) to the file named by the consumer setting
 * {@code drain.witness.commits}, and forces it to disk before the consumer goes on.
 */
public final class CommitWitness implements ConsumerInterceptor<byte[], byte[]> {
    /** The consumer setting that names the file. */
    public static final String FILE = "drain.witness.commits";

    private @Nullable FileChannel out;

    @Override
    public void configure(Map<String, ?> configs) {
        try {
            out = FileChannel.open(Path.of(String.valueOf(configs.get(FILE))), StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                    StandardOpenOption.APPEND);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public ConsumerRecords<byte[], byte[]> onConsume(ConsumerRecords<byte[], byte[]> records) {
        return records;
    }

    @Override
    public synchronized void onCommit(Map<TopicPartition, OffsetAndMetadata> offsets) {
        StringBuilder lines = new StringBuilder();
        offsets.forEach((partition, committed) -> lines.append(partition.partition()).append(' ').append(committed.offset())
                .append(' ').append(committed.metadata().isEmpty() ? "-" : committed.metadata()).append('\n'));
        try {
            FileChannel channel = java.util.Objects.requireNonNull(out, "configured");
            channel.write(ByteBuffer.wrap(lines.toString().getBytes(StandardCharsets.UTF_8)));
            channel.force(false);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    @Override
    public synchronized void close() {
        try {
            if (out != null) {
                out.close();
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
