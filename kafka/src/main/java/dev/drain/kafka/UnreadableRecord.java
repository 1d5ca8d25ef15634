package dev.drain.kafka;

import java.io.Serial;

/**
 * A record's key or value could not be deserialized (KC-3): thrown by {@link Delivery#key()} and
 * {@link Delivery#value()}, so that the record fails as an item (and goes to the dead-letter
 * topic) instead of stopping the consumer. Its cause is what the deserializer threw.
 */
public final class UnreadableRecord extends RuntimeException {
    @Serial
    private static final long serialVersionUID = 1L;

    UnreadableRecord(String message, Throwable cause) {
        super(message, cause);
    }
}
