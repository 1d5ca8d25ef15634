package dev.drain.jobtable;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import org.jspecify.annotations.Nullable;

/**
 * Adds jobs to a table (JT-11, JT-12): in a transaction of a connection of its own, or on the
 * caller's, in the caller's transaction; each payload checked first, so that one the table cannot
 * keep exactly is refused before anything is written; a {@code NOTIFY} in the same transaction
 * for the waiting streams of every process (JT-13), and this process's told at once after a
 * transaction of its own commits. Keeps no
 * state: each call is the caller's thread's, on its own connection or the caller's.
 */
final class Enqueuer {
    private final Store store;
    /** Tells this process's waiting streams that jobs were added (the table's WorkSignal). */
    private final Runnable enqueued;

    Enqueuer(Store store, Runnable enqueued) {
        this.store = store;
        this.enqueued = enqueued;
    }

    /** Enqueues in a transaction of a connection of its own; {@return the ids} */
    List<Long> inOwnTransaction(List<String> payloads, @Nullable Instant runAt) throws SQLException {
        checkStorable(payloads);
        List<Long> ids = store.inTransaction(c -> insert(c, payloads, runAt));
        enqueued.run();
        return ids;
    }

    /**
     * Enqueues on the caller's connection, in its transaction; {@return the ids} Nothing is told
     * before the commit (a stream woken then would find nothing): the waiting streams hear the
     * commit's {@code NOTIFY} on PostgreSQL, and find the jobs at their next poll on H2.
     */
    List<Long> inCallersTransaction(Connection c, List<String> payloads, @Nullable Instant runAt) throws SQLException {
        checkStorable(payloads);
        return insert(c, payloads, runAt); // heard at the commit, through its NOTIFY (PostgreSQL), or at the next poll (H2)
    }

    /** Inserts {@code payloads} on {@code c}, claimable from {@code runAt} (at once if null), and {@return their ids}, in order. */
    private List<Long> insert(Connection c, List<String> payloads, @Nullable Instant runAt) throws SQLException {
        List<Long> ids = new ArrayList<>(payloads.size());
        if (payloads.isEmpty()) {
            return ids;
        }
        Long runAtMillis = runAt == null ? null : epochMillis(runAt);
        try (PreparedStatement insert = store.prepareReturningId(c, store.sql.insert)) {
            for (String payload : payloads) {
                insert.setString(1, payload);
                if (runAtMillis == null) {
                    insert.setNull(2, Types.BIGINT);
                } else {
                    insert.setLong(2, runAtMillis);
                }
                insert.addBatch();
            }
            insert.executeBatch();
            try (ResultSet keys = insert.getGeneratedKeys()) {
                while (keys.next()) {
                    ids.add(keys.getLong(1));
                }
            }
        }
        if (ids.size() != payloads.size()) {
            throw new SQLException("the database returned " + ids.size() + " ids for " + payloads.size() + " jobs");
        }
        store.notifyWork(c); // heard by the waiting streams of every process when the transaction commits (JT-13)
        return ids;
    }

    /**
     * Refuses a payload the table cannot keep exactly (JT-11): {@code null}, a NUL (PostgreSQL's
     * text cannot hold one), or a lone surrogate (not a character: PostgreSQL's driver would store
     * it as {@code ?}). The same rule on every dialect, so that a payload means the same on each.
     */
    static void checkStorable(List<String> payloads) {
        for (int i = 0; i < payloads.size(); i++) {
            String payload = payloads.get(i);
            if (payload == null) {
                throw new IllegalArgumentException("payload " + i + " is null (nothing was enqueued)");
            }
            for (int at = 0; at < payload.length(); at++) {
                char ch = payload.charAt(at);
                boolean paired = Character.isHighSurrogate(ch) && at + 1 < payload.length()
                        && Character.isLowSurrogate(payload.charAt(at + 1));
                if (paired) {
                    at++;
                } else if (ch == '\u0000' || Character.isSurrogate(ch)) {
                    throw new IllegalArgumentException("payload " + i + " cannot be kept exactly: "
                            + (ch == '\u0000' ? "a NUL" : "a lone surrogate U+" + Integer.toHexString(ch).toUpperCase(Locale.ROOT))
                            + " at " + at + " (nothing was enqueued)");
                }
            }
        }
    }

    /** {@return {@code runAt} in milliseconds since the epoch} @throws IllegalArgumentException if it has none (beyond ±292 million years) */
    static long epochMillis(Instant runAt) {
        try {
            return runAt.toEpochMilli();
        } catch (ArithmeticException e) {
            throw new IllegalArgumentException("a run-at time in milliseconds since the epoch, not " + runAt, e);
        }
    }
}
