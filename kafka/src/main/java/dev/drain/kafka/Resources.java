package dev.drain.kafka;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import java.time.Duration;
import java.util.List;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.common.serialization.Deserializer;

/**
 * What a source closes once its poll thread has ended (KC-11): the dead-letter producer and the
 * deserializers. The first {@link #closeOnce()} closes them, and a concurrent one waits for it; it
 * runs on the thread of {@link KafkaSource#close()}, or on the poll thread as it ends when that
 * close was made on the poll thread (by a deserializer), which could not wait for it.
 */
final class Resources {
    /** Thread-safe; the settler thread writes with it until it is closed. */
    private final KafkaProducer<byte[], byte[]> producer;
    /** The user's; called by the poll thread, closed here once it has ended. */
    private final Deserializer<?> keys;
    private final Deserializer<?> values;
    private final Duration closeTimeout;
    /** Held by the one {@link #closeOnce()} that closes the producer and the deserializers. */
    private final Object closeLock = new Object();
    /** Set by that close. */
    @GuardedBy("closeLock")
    private boolean closed;
    /** Set by a {@link KafkaSource#close()} made on the poll thread (by a deserializer); read by that thread when it ends. */
    private volatile boolean leftToThePollThread;

    Resources(KafkaProducer<byte[], byte[]> producer, Deserializer<?> keys, Deserializer<?> values, Duration closeTimeout) {
        this.producer = producer;
        this.keys = keys;
        this.values = values;
        this.closeTimeout = closeTimeout;
    }

    /** A close made on the poll thread: the poll thread closes the resources when it ends. */
    void leaveToThePollThread() {
        leftToThePollThread = true;
    }

    /** {@return whether a close made on the poll thread left the resources to it}; read by the poll thread as it ends. */
    boolean leftToThePollThread() {
        return leftToThePollThread;
    }

    /**
     * Closes the dead-letter producer and the deserializers, the first time only, each whatever the
     * others threw; throws the first failure, with the others suppressed.
     */
    void closeOnce() {
        synchronized (closeLock) {
            if (!closed) { // else an earlier call closed them
                closed = true;
                closeEach();
            }
        }
    }

    private void closeEach() {
        RuntimeException failed = null;
        for (AutoCloseable each : List.<AutoCloseable>of(() -> producer.close(closeTimeout), keys, values)) {
            try {
                each.close();
            } catch (Exception e) { // the deserializers' close is the user's code
                RuntimeException thrown = e instanceof RuntimeException r ? r : new IllegalStateException(e);
                if (failed == null) {
                    failed = thrown;
                } else {
                    failed.addSuppressed(thrown);
                }
            }
        }
        if (failed != null) {
            throw failed;
        }
    }
}
