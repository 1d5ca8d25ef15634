package dev.drain.jobtable;

import java.io.Serial;
import java.sql.SQLException;

/**
 * A job table's database failed where the caller's interface cannot throw an
 * {@link SQLException}: a claim in the stream a pool pulls, or the release of what it did not
 * pull when the stream is closed. The cause is the database's.
 */
public final class JobTableException extends RuntimeException {
    @Serial
    private static final long serialVersionUID = 1L;

    /**
     * Creates it.
     *
     * @param message what the table was doing, with the cause's message
     * @param cause the database's failure
     */
    public JobTableException(String message, Throwable cause) {
        super(message, cause);
    }
}
