package dev.drain.jobtable;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.Locale;
import java.util.NoSuchElementException;
import java.util.Objects;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * Operating a table's queue ({@link JobTable#operations()}, JT-14): reading a job and its
 * failure, requeueing dead jobs, purging done ones, and the backlog by state.
 *
 * <p>Thread safety: every method may be called from any thread. Each call runs on a connection
 * of the caller's thread, taken from the table's data source and closed before it returns; it
 * keeps no state of its own, and tells the table's waiting streams when it made jobs ready.
 */
public final class QueueOperations {
    private final Store store;
    /** Tells the waiting streams of this process that jobs are ready (the table's WorkSignal). */
    private final Runnable requeued;

    QueueOperations(Store store, Runnable requeued) {
        this.store = store;
        this.requeued = requeued;
    }

    /**
     * Reads a job as the table keeps it: its state, claims, lost leases, and the failure that
     * made it dead.
     *
     * @param id the job's id, as {@link JobTable#enqueue} returned it
     * @return the job, or empty if the table has none with that id (never enqueued, or purged)
     * @throws SQLException if the database did not answer
     */
    public Optional<StoredJob> job(long id) throws SQLException {
        try (Connection c = store.connect(); PreparedStatement p = store.prepare(c, store.sql.one)) {
            p.setLong(1, id);
            try (ResultSet r = p.executeQuery()) {
                if (!r.next()) {
                    return Optional.empty();
                }
                return Optional.of(new StoredJob(r.getLong(1), r.getString(2), JobState.valueOf(r.getString(3).toUpperCase(Locale.ROOT)),
                        r.getString(4), r.getInt(5), r.getInt(6), r.getInt(10), r.getString(7), instant(r, 8), instant(r, 9)));
            }
        }
    }

    private static @Nullable Instant instant(ResultSet r, int column) throws SQLException {
        long millis = r.getLong(column);
        return r.wasNull() ? null : Instant.ofEpochMilli(millis);
    }

    /**
     * Makes a dead job ready again, as a fresh job: no lost leases, no run-at time; its claim
     * count and its last failure are kept. Waiting streams are told.
     *
     * @param id the dead job's id
     * @throws NoSuchElementException if the table has no job with that id
     * @throws IllegalStateException if the job is not dead (ready, running or done): nothing changes
     * @throws SQLException if the database did not take it
     */
    public void requeue(long id) throws SQLException {
        store.inTransaction(c -> {
            int changed;
            try (PreparedStatement p = store.prepare(c, store.sql.requeue)) {
                p.setLong(1, id);
                changed = p.executeUpdate();
            }
            if (changed == 0) { // rolled back as it throws
                String state = stateOf(c, id);
                if (state == null) {
                    throw new NoSuchElementException("no job " + id + " in " + store.table);
                }
                throw new IllegalStateException("job " + id + " of " + store.table + " is " + state + ", not dead: only a dead job is requeued");
            }
            store.notifyWork(c);
            return changed;
        });
        requeued.run();
    }

    private @Nullable String stateOf(Connection c, long id) throws SQLException {
        try (PreparedStatement p = store.prepare(c, store.sql.stateOf)) {
            p.setLong(1, id);
            try (ResultSet r = p.executeQuery()) {
                return r.next() ? r.getString(1) : null;
            }
        }
    }

    /**
     * Makes every dead job ready again, as {@link #requeue(long)} does one.
     *
     * @return how many were requeued
     * @throws SQLException if the database did not take it (then none was)
     */
    public int requeueDead() throws SQLException {
        return requeueDead("");
    }

    /**
     * Makes ready again every dead job whose failure's text contains {@code failureContains}:
     * after an outage, the jobs that died of it, and not the malformed ones.
     *
     * @param failureContains a part of the dead letter's text, compared exactly (no wildcards)
     * @return how many were requeued
     * @throws SQLException if the database did not take it (then none was)
     */
    public int requeueDead(String failureContains) throws SQLException {
        Objects.requireNonNull(failureContains, "failureContains");
        int changed = store.inTransaction(c -> {
            try (PreparedStatement p = store.prepare(c, store.sql.requeueDead)) {
                p.setString(1, failureContains);
                int count = p.executeUpdate();
                if (count > 0) {
                    store.notifyWork(c);
                }
                return count;
            }
        });
        if (changed > 0) {
            requeued.run();
        }
        return changed;
    }

    /**
     * Deletes the done jobs settled more than {@code olderThan} ago on the database's clock. Dead
     * jobs are kept until requeued or deleted by hand: they are what someone has to look at.
     *
     * @param olderThan zero or more
     * @return how many were deleted
     * @throws IllegalArgumentException if {@code olderThan} is negative (a bound in the future)
     * @throws SQLException if the database did not take it
     */
    public int purgeDone(Duration olderThan) throws SQLException {
        if (Objects.requireNonNull(olderThan, "olderThan").isNegative()) {
            throw new IllegalArgumentException("a purge keeps what was settled less than " + olderThan
                    + " ago: a negative bound would be in the future");
        }
        try (Connection c = store.connect(); PreparedStatement p = store.prepare(c, store.sql.purgeDone)) {
            c.setAutoCommit(true);
            // beyond 2^50 ms (35,000 years) nothing is that old: the bound is cut there, not overflowed
            p.setLong(1, olderThan.compareTo(Duration.ofMillis(1L << 50)) > 0 ? 1L << 50 : olderThan.toMillis());
            return p.executeUpdate();
        }
    }

    /**
     * Counts the jobs in each state, telling due jobs from scheduled ones and live claims from
     * abandoned ones (their lease ran out, or their owner's session ended: the claimant is gone):
     * {@code backlog().unfinished() == 0} means nothing is left to do.
     *
     * @return the counts, read in one statement
     * @throws SQLException if the database did not answer
     */
    public Backlog backlog() throws SQLException {
        try (Connection c = store.connect(); PreparedStatement p = store.prepare(c, store.sql.backlog); ResultSet r = p.executeQuery()) {
            r.next();
            return new Backlog(r.getLong(1), r.getLong(2), r.getLong(3), r.getLong(4), r.getLong(5), r.getLong(6));
        }
    }

    /** {@return "the operations of job table NAME"} */
    @Override
    public String toString() {
        return "the operations of job table " + store.table;
    }
}
