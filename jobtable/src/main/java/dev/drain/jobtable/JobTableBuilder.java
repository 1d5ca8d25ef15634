package dev.drain.jobtable;

import java.sql.SQLException;
import java.time.Duration;
import java.util.Objects;
import java.util.UUID;
import java.util.regex.Pattern;
import javax.sql.DataSource;

/**
 * How to open a job table ({@link JobTable#on}). Every setting has a default; {@link #open()} checks the database.
 */
public final class JobTableBuilder {
    /** A table's name: a plain SQL identifier, so that it can be written into statements as is. */
    private static final Pattern NAME = Pattern.compile("[a-z_][a-z0-9_]{0,40}");

    private final DataSource dataSource;
    // The settings below: owned by the thread that builds (a builder is not for sharing), and
    // copied into the table's immutable Store and Terms by open().
    private String table = "drain_job";
    private String ownerPrefix = "drain";
    private Duration lease = Duration.ofSeconds(30);
    private int claimBatch = 64;
    private int maxLostLeases = 3;
    private Duration queryTimeout = Duration.ofSeconds(30);
    private Duration pollInterval = Duration.ofSeconds(1);

    JobTableBuilder(DataSource dataSource) {
        this.dataSource = dataSource;
    }

    /**
     * The table's name.
     *
     * @param name a lower-case SQL identifier of at most 41 characters
     * @return this builder
     */
    public JobTableBuilder table(String name) {
        if (!NAME.matcher(Objects.requireNonNull(name, "name")).matches()) {
            throw new IllegalArgumentException("a table name is a lower-case SQL identifier ([a-z_][a-z0-9_]*, at most 41), not "
                    + name);
        }
        this.table = name;
        return this;
    }

    /**
     * The first part of the owner's name, which a UUID follows (to tell processes apart in the rows).
     *
     * @param prefix letters, digits, dots and dashes, at most 40
     * @return this builder
     */
    public JobTableBuilder ownerPrefix(String prefix) {
        if (!Objects.requireNonNull(prefix, "prefix").matches("[A-Za-z0-9.-]{1,40}")) {
            throw new IllegalArgumentException("an owner prefix is 1 to 40 letters, digits, dots or dashes, not " + prefix);
        }
        this.ownerPrefix = prefix;
        return this;
    }

    /**
     * How long a claim holds a row without a renewal (JT-3, JT-4): the longest a dead claimant's
     * rows wait before another claim takes them (decision 0041).
     *
     * @param lease at least 100 ms
     * @return this builder
     */
    public JobTableBuilder lease(Duration lease) {
        if (Objects.requireNonNull(lease, "lease").compareTo(Duration.ofMillis(100)) < 0) {
            throw new IllegalArgumentException("a lease is at least 100 ms, not " + lease);
        }
        this.lease = lease;
        return this;
    }

    /**
     * How many rows a claim takes at most (JT-2): more rows per transaction, and more held in
     * memory that a killed process leaves to their leases (decision 0041).
     *
     * @param rows 1 to 10,000 (64 by default)
     * @return this builder
     */
    public JobTableBuilder claimBatch(int rows) {
        if (rows < 1 || rows > 10_000) {
            throw new IllegalArgumentException("a claim takes 1 to 10,000 rows, not " + rows);
        }
        this.claimBatch = rows;
        return this;
    }

    /**
     * How many leases a row may lose before it is dead-lettered instead of claimed again (JT-3).
     *
     * @param leases at least 1
     * @return this builder
     */
    public JobTableBuilder maxLostLeases(int leases) {
        if (leases < 1) {
            throw new IllegalArgumentException("maxLostLeases is at least 1, not " + leases);
        }
        this.maxLostLeases = leases;
        return this;
    }

    /**
     * How long one statement may take before the driver gives up on it (a claim then fails, a
     * settlement batch is unsettled).
     *
     * @param timeout at least a second
     * @return this builder
     */
    public JobTableBuilder queryTimeout(Duration timeout) {
        if (Objects.requireNonNull(timeout, "timeout").compareTo(Duration.ofSeconds(1)) < 0) {
            throw new IllegalArgumentException("a query timeout is at least a second, not " + timeout);
        }
        this.queryTimeout = timeout;
        return this;
    }

    /**
     * How long a stream that waits for work ({@link JobTable#claimsUntilStopped()}) waits at most
     * before it claims again, whatever it heard (JT-13): the latency on H2, and on PostgreSQL
     * while notifications cannot be had; the latest a scheduled job that came due, or a dead
     * claimant's row, is found.
     *
     * @param interval 10 ms to 1 hour (1 s by default)
     * @return this builder
     */
    public JobTableBuilder pollInterval(Duration interval) {
        if (Objects.requireNonNull(interval, "interval").compareTo(Duration.ofMillis(10)) < 0
                || interval.compareTo(Duration.ofHours(1)) > 0) {
            throw new IllegalArgumentException("a poll interval is 10 ms to 1 hour, not " + interval);
        }
        this.pollInterval = interval;
        return this;
    }

    /**
     * Connects, finds the dialect, and creates the table and its index if they are missing
     * (JT-1). Nothing is started: the lease renewer starts with the first claim.
     *
     * @return the open table
     * @throws SQLException if the database cannot be reached, is not of a known dialect, or
     *     refuses the table; its message names the table and the cause
     */
    public JobTable open() throws SQLException {
        Store store = Store.open(dataSource, table, queryTimeout);
        return new JobTable(store, new Terms(ownerPrefix + "-" + UUID.randomUUID(), lease, claimBatch, maxLostLeases, pollInterval));
    }

    /**
     * Brings the table to this version's definition (JT-1): creates it and its index if they
     * are missing, and adds the columns an earlier version of drain did not have. Unlike
     * {@link #open()}, it changes a table that is there, and so takes a lock that waits for
     * every transaction on the table and holds up every writer meanwhile: run it once, as a
     * step of a deploy, not at every worker's start. Running it again changes nothing.
     *
     * @throws SQLException if the database cannot be reached, is not of a known dialect, or
     *     refuses a change; its message names the table and the cause
     */
    public void migrate() throws SQLException {
        Store.migrate(dataSource, table);
    }
}
