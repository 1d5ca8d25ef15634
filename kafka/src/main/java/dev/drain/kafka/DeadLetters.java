package dev.drain.kafka;

import dev.drain.pool.ItemFailure;
import dev.drain.pool.Settlement;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeaders;

/**
 * The dead letters (KC-5): the settler writes each failure of a batch to its topic's dead-letter
 * topic, and waits until the topic has them all, before it hands the batch to the poll thread.
 * Runs on the pool's settler thread; the producer is thread-safe, and closed by {@link Resources}.
 *
 * @param <K> the key type
 * @param <V> the value type
 */
final class DeadLetters<K, V> {
    /** The longest dead letter's failure text, in characters. */
    static final int MAX_ERROR = 2_000;

    /** Thread-safe: the settler thread writes with it. */
    private final KafkaProducer<byte[], byte[]> producer;
    private final String suffix;
    private final Duration timeout;
    /** Read only for which assignment of a partition is current. */
    private final Tracks tracks;
    /** Written by the settler thread, read by any thread. */
    private final AtomicLong written = new AtomicLong();

    DeadLetters(Settings settings, KafkaProducer<byte[], byte[]> producer, Tracks tracks) {
        this.producer = producer;
        this.suffix = settings.deadLetterSuffix();
        this.timeout = settings.deadLetterTimeout();
        this.tracks = tracks;
    }

    /**
     * Writes the dead letter of every failure whose partition this source still holds, and
     * waits until the topic has them all (KC-5); throws if any could not be written.
     */
    void write(List<Settlement<Delivery<K, V>>> batch) throws Exception {
        List<Future<RecordMetadata>> sent = new ArrayList<>();
        List<Delivery<K, V>> letters = new ArrayList<>();
        long deadline = System.nanoTime() + timeout.toNanos(); // one timeout for the whole batch
        for (Settlement<Delivery<K, V>> settlement : batch) {
            if (settlement instanceof Settlement.Failed<Delivery<K, V>> failed
                    && tracks.holds(failed.item().topicPartition(), failed.item().assignment())) {
                letters.add(failed.item());
                if (System.nanoTime() - deadline > 0) { // out of time: the batch fails, and the rest is not sent
                    sent.add(CompletableFuture.failedFuture(new TimeoutException("no time left to send it")));
                    break;
                }
                try {
                    sent.add(producer.send(deadLetter(failed.failure())));
                } catch (RuntimeException e) { // no metadata for the topic within max.block.ms, a record too large
                    sent.add(CompletableFuture.failedFuture(e));
                    break; // the batch fails: the letters after it need not wait for their own timeout
                }
            }
        }
        for (int i = 0; i < sent.size(); i++) {
            try {
                sent.get(i).get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
            } catch (ExecutionException | TimeoutException | CancellationException e) {
                throw new KafkaSourceException("the dead letter of " + letters.get(i) + " could not be written to "
                        + letters.get(i).topic() + suffix + " within " + timeout + ": "
                        + (e instanceof ExecutionException ? e.getCause() : e) + "; the batch is not committed", e);
            }
        }
        written.addAndGet(sent.size());
    }

    private ProducerRecord<byte[], byte[]> deadLetter(ItemFailure<Delivery<K, V>> failure) {
        Delivery<K, V> delivery = failure.item();
        List<Header> headers = new ArrayList<>();
        delivery.headers().forEach(headers::add);
        RecordHeaders letter = new RecordHeaders(headers);
        letter.add("drain.dlt.topic", delivery.topic().getBytes(StandardCharsets.UTF_8));
        letter.add("drain.dlt.partition", Integer.toString(delivery.partition()).getBytes(StandardCharsets.UTF_8));
        letter.add("drain.dlt.offset", Long.toString(delivery.offset()).getBytes(StandardCharsets.UTF_8));
        letter.add("drain.dlt.attempts", Integer.toString(failure.attempts()).getBytes(StandardCharsets.UTF_8));
        letter.add("drain.dlt.error", describe(failure).getBytes(StandardCharsets.UTF_8));
        return new ProducerRecord<>(delivery.topic() + suffix, null, delivery.timestamp(), delivery.rawKey(),
                delivery.rawValue(), letter);
    }

    /** {@return how many dead letters were written} */
    long written() {
        return written.get();
    }

    /** A failure's text for a dead letter: never throws, at most {@link #MAX_ERROR} characters, never half a character. */
    static String describe(ItemFailure<?> failure) {
        return failure.describe(MAX_ERROR);
    }
}
