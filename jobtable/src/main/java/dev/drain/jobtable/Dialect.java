package dev.drain.jobtable;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.Locale;

/**
 * The SQL a job table needs that differs between the databases it runs on (decision 0041): how a
 * claim takes the first claimable rows while skipping those another claimant has locked, and how
 * the database's own clock is read. Everything else is the same SQL on every dialect.
 */
public enum Dialect {
    /** PostgreSQL 12 or later (the embedded default, {@code dev.drain.lab.LocalPostgres}, is 14). */
    POSTGRES("LIMIT ? FOR UPDATE SKIP LOCKED", "CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000 AS BIGINT)"),
    /** H2 2.5 or later, in-process (a file, or memory for a test). */
    H2("FETCH FIRST ? ROWS ONLY FOR UPDATE SKIP LOCKED", "CAST(EXTRACT(EPOCH FROM CURRENT_TIMESTAMP) * 1000 AS BIGINT)");

    /** What follows {@code ORDER BY id} in a claim: at most {@code ?} rows, locked, skipping locked ones. */
    final String firstUnlocked;
    /** The database's clock, in milliseconds since the epoch: leases are measured by it alone. */
    final String nowMillis;

    Dialect(String firstUnlocked, String nowMillis) {
        this.firstUnlocked = firstUnlocked;
        this.nowMillis = nowMillis;
    }

    /**
     * The dialect of the database a connection is to, from its product name.
     *
     * @param connection an open connection
     * @return its dialect
     * @throws SQLException if the database is none of these, or the connection fails
     */
    public static Dialect of(Connection connection) throws SQLException {
        String product = connection.getMetaData().getDatabaseProductName();
        return switch (product.toLowerCase(Locale.ROOT)) {
            case "postgresql" -> POSTGRES;
            case "h2" -> H2;
            default -> throw new SQLException("a job table runs on PostgreSQL or H2, not on " + product);
        };
    }
}
