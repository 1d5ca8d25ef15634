package dev.drain.kafka;

import java.io.Serial;

/**
 * A {@link KafkaSource} could not go on: its poll thread failed (the consumer threw what it cannot
 * recover from), or it could not open. Thrown by the stream of deliveries, which then ends the run
 * as a failing source does (WP-7), and by {@link KafkaSource.Builder#open()}.
 */
public final class KafkaSourceException extends RuntimeException {
    @Serial
    private static final long serialVersionUID = 1L;

    KafkaSourceException(String message, Throwable cause) {
        super(message, cause);
    }

    KafkaSourceException(String message) {
        super(message);
    }
}
