package dev.drain.kafka;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import java.util.Comparator;
import java.util.Iterator;
import java.util.NoSuchElementException;
import java.util.Objects;
import java.util.Spliterator;
import java.util.Spliterators;
import java.util.stream.Stream;
import java.util.stream.StreamSupport;
import org.jspecify.annotations.Nullable;

/**
 * The one open stream of deliveries ({@link KafkaSource#records()}, KC-3): its iterator takes from
 * the {@link Exchange}'s buffer, waiting for records, on the stream's reader thread (the pool's
 * producer); its close may come from any thread.
 *
 * <p>It is the exchange's client: every step holds the exchange's lock, and reads and changes the
 * exchange's state under it, together with its own two fields, which the same lock guards.
 *
 * @param <K> the key type
 * @param <V> the value type
 */
final class Records<K, V> implements Iterator<Delivery<K, V>> {
    private final Exchange<K, V> exchange;
    /** Set by close. */
    @GuardedBy("exchange.lock")
    private boolean closed;
    /**
     * The delivery a {@code hasNext()} that returned true took from the buffer for the next
     * {@code next()}: a close or a revocation between the two cannot take it away.
     */
    @GuardedBy("exchange.lock")
    private @Nullable Delivery<K, V> peeked;

    private Records(Exchange<K, V> exchange) {
        this.exchange = exchange;
    }

    /**
     * Opens the stream: first the deliveries an earlier run released or whose commit was refused,
     * in offset order within each partition (KC-6, KC-7), then the buffer's.
     *
     * @throws IllegalStateException if another stream is open, or the source is closed
     */
    static <K, V> Stream<Delivery<K, V>> open(Exchange<K, V> exchange) {
        exchange.lock.lock();
        try {
            if (exchange.closing || exchange.ended) {
                throw new IllegalStateException("the Kafka source of " + exchange.topics + " is closed");
            }
            if (exchange.streamOpen) {
                throw new IllegalStateException("a stream of the Kafka source of " + exchange.topics + " is already open");
            }
            exchange.streamOpen = true;
            if (!exchange.redeliver.isEmpty()) { // what an earlier run left undone, in offset order within each partition
                exchange.redeliver.sort(Comparator.comparing((Delivery<K, V> d) -> d.topicPartition().toString())
                        .thenComparingLong(Delivery::offset));
                for (int i = exchange.redeliver.size() - 1; i >= 0; i--) {
                    exchange.buffer.addFirst(exchange.redeliver.get(i));
                }
                exchange.redeliver.clear();
            }
        } finally {
            exchange.lock.unlock();
        }
        Records<K, V> records = new Records<>(exchange);
        return StreamSupport.stream(Spliterators.spliteratorUnknownSize(records, Spliterator.ORDERED | Spliterator.NONNULL), false)
                .onClose(records::close);
    }

    @Override
    public boolean hasNext() {
        exchange.lock.lock();
        try {
            while (true) {
                if (peeked != null) {
                    return true;
                }
                if (closed || exchange.closing) {
                    return false; // what is buffered stays for a later stream, or the partitions' next owner
                }
                Throwable failure = exchange.failure;
                if (failure != null) {
                    throw new KafkaSourceException("the Kafka source of " + exchange.topics + " failed: " + failure, failure);
                }
                if (exchange.ended) {
                    return false;
                }
                if (!exchange.buffer.isEmpty()) {
                    peeked = exchange.buffer.removeFirst();
                    if (exchange.buffer.size() == exchange.capacity / 2) {
                        exchange.roomOrWork.signalAll();
                    }
                    return true;
                }
                if (exchange.idle) {
                    return false;
                }
                try {
                    exchange.deliveredOrEnded.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt(); // the pool's stop: it reads this as its own doing (WP-7)
                    throw new KafkaSourceException("interrupted while waiting for records of " + exchange.topics, e);
                }
            }
        } finally {
            exchange.lock.unlock();
        }
    }

    @Override
    public Delivery<K, V> next() {
        exchange.lock.lock();
        try {
            if (!hasNext()) {
                throw new NoSuchElementException();
            }
            Delivery<K, V> next = Objects.requireNonNull(peeked);
            peeked = null;
            return next;
        } finally {
            exchange.lock.unlock();
        }
    }

    /** Closes the stream: a delivery {@code hasNext()} promised goes back to the buffer's head. Idempotent. */
    void close() {
        exchange.lock.lock();
        try {
            if (!closed) {
                closed = true;
                exchange.streamOpen = false;
                if (peeked != null) { // promised by hasNext(), never taken: back to the buffer's head
                    exchange.buffer.addFirst(peeked);
                    peeked = null;
                }
                exchange.deliveredOrEnded.signalAll();
            }
        } finally {
            exchange.lock.unlock();
        }
    }
}
