package dev.drain.jobtable;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;

/**
 * One job table on its database: where connections come from, its dialect, and every statement
 * the table runs, written once (JT-1, decision 0041). Opening it creates the table and its index
 * if they are missing; nothing is started and no connection is kept.
 *
 * <p>Immutable, and shared by every thread of the table: the callers of {@link JobTable}'s
 * methods, each stream's statements thread, the settler's thread and the lease renewer. Each of
 * them takes connections of its own from it; none is shared.
 */
final class Store {
    final String table;
    final Dialect dialect;
    final Statements sql;
    private final DataSource dataSource;
    private final int queryTimeoutSeconds;

    private Store(DataSource dataSource, Dialect dialect, String table, Duration queryTimeout) {
        this.dataSource = dataSource;
        this.dialect = dialect;
        this.table = table;
        this.queryTimeoutSeconds = (int) Math.max(1, queryTimeout.toSeconds());
        this.sql = new Statements(table, dialect);
    }

    /**
     * Connects, finds the dialect, and creates the table and its index if they are missing (JT-1).
     * A table that is there already is only read, never locked against writers: its columns are
     * probed with a query that matches no row (a lock that conflicts with schema changes only), and
     * its index is looked up in the catalog, so that opening a table never waits behind a
     * transaction that holds its rows, and never stalls the pools that run on it.
     *
     * @throws SQLException if the database cannot be reached, is not of a known dialect, or
     *     refuses the table, or the table is there without the columns it needs; its message
     *     names the table and the cause
     */
    static Store open(DataSource dataSource, String table, Duration queryTimeout) throws SQLException {
        try (Connection c = dataSource.getConnection()) {
            Dialect dialect = Dialect.of(c);
            c.setAutoCommit(true);
            if (!hasColumns(c, table)) {
                try (Statement s = c.createStatement()) {
                    s.execute(createTable(table)); // IF NOT EXISTS: a table made meanwhile by another opener stays
                }
                if (!hasColumns(c, table)) {
                    throw new SQLException("the table exists without the columns of a job table (" + COLUMNS + "): if it is"
                            + " the job table of an earlier version, migrate it once, from a deploy step: JobTable.on(dataSource)"
                            + ".table(\"" + table + "\").migrate()");
                }
            }
            if (!hasIndex(c, table, table + "_by_state")) {
                try (Statement s = c.createStatement()) {
                    s.execute(createIndex(table));
                }
            }
            return new Store(dataSource, dialect, table, queryTimeout);
        } catch (SQLException e) {
            throw new SQLException("cannot open the job table " + table + ": " + e.getMessage(), e.getSQLState(), e);
        }
    }

    /**
     * Brings the table to this version's definition: creates it and its index if they are
     * missing, and adds the columns an earlier version did not have (JT-1). Unlike {@link #open},
     * this changes a table that is there, and so takes a lock that waits for every transaction on
     * it and holds up every writer meanwhile: a step of a deploy, not of a worker's start.
     *
     * @throws SQLException if the database cannot be reached, is not of a known dialect, or
     *     refuses a change; its message names the table and the cause
     */
    static void migrate(DataSource dataSource, String table) throws SQLException {
        try (Connection c = dataSource.getConnection()) {
            Dialect.of(c);
            c.setAutoCommit(true);
            try (Statement s = c.createStatement()) {
                s.execute(createTable(table));
                for (String column : ADDED_COLUMNS) {
                    s.execute("ALTER TABLE " + table + " ADD COLUMN IF NOT EXISTS " + column);
                }
                s.execute(createIndex(table));
            }
        } catch (SQLException e) {
            throw new SQLException("cannot migrate the job table " + table + ": " + e.getMessage(), e.getSQLState(), e);
        }
    }

    /** Every column a job table has, in the order of its definition. */
    static final String COLUMNS = "id, payload, state, owner, claims, lost_leases, lease_until, last_error, settled_at, run_at,"
            + " attempts";

    /** The columns added to a job table after its first version, each as {@link #migrate} adds it to an older table. */
    static final List<String> ADDED_COLUMNS = List.of("run_at BIGINT", "attempts INTEGER NOT NULL DEFAULT 0");

    /**
     * {@return whether {@code t} exists with every column of a job table} A query that matches no
     * row: on PostgreSQL it takes only the lock that conflicts with schema changes, never one that
     * waits for a writer; on H2 it takes none.
     */
    private static boolean hasColumns(Connection c, String t) throws SQLException {
        try (Statement s = c.createStatement()) {
            s.executeQuery("SELECT " + COLUMNS + " FROM " + t + " WHERE 1 = 0").close();
            return true;
        } catch (SQLException e) {
            return false; // no such table, or a column missing: the caller creates it, or says so
        }
    }

    /** {@return whether the catalog lists an index named {@code index} on {@code t}} (a read of the catalog: no lock on the table) */
    private static boolean hasIndex(Connection c, String t, String index) throws SQLException {
        for (String name : List.of(t, t.toUpperCase(Locale.ROOT))) { // PostgreSQL keeps lower case, H2 upper case
            try (ResultSet indexes = c.getMetaData().getIndexInfo(null, null, name, false, true)) {
                while (indexes.next()) {
                    if (index.equalsIgnoreCase(indexes.getString("INDEX_NAME"))) {
                        return true;
                    }
                }
            }
        }
        return false;
    }

    /** The table's definition, the same on every dialect. */
    static String createTable(String t) {
        return "CREATE TABLE IF NOT EXISTS " + t + " ("
                + "id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY, "
                + "payload CHARACTER VARYING NOT NULL, "
                + "state CHARACTER VARYING(8) NOT NULL DEFAULT 'ready', "
                + "owner CHARACTER VARYING(80), "
                + "claims INTEGER NOT NULL DEFAULT 0, "
                + "lost_leases INTEGER NOT NULL DEFAULT 0, "
                + "lease_until BIGINT, "
                + "last_error CHARACTER VARYING(" + JobTable.MAX_ERROR + "), "
                + "settled_at BIGINT, "
                + "run_at BIGINT, "
                + "attempts INTEGER NOT NULL DEFAULT 0, "
                + "CHECK (state IN ('ready', 'running', 'done', 'dead')))";
    }

    /** The index every claim reads by: state, then id. */
    static String createIndex(String t) {
        return "CREATE INDEX IF NOT EXISTS " + t + "_by_state ON " + t + " (state, id)";
    }

    /** {@return the channel on which PostgreSQL carries the news that the table has new work (JT-13)} */
    String channel() {
        return "drain_" + table;
    }

    /**
     * Tells the processes that listen (JT-13) that the table has new work, on PostgreSQL, in the
     * transaction of {@code c}: delivered when it commits, never if it rolls back. Nothing on H2,
     * whose streams poll.
     */
    void notifyWork(Connection c) throws SQLException {
        if (dialect == Dialect.POSTGRES) {
            try (PreparedStatement p = prepare(c, "SELECT pg_notify(?, '')")) {
                p.setString(1, channel());
                p.executeQuery().close();
            }
        }
    }

    /** {@return a new connection, which the caller closes} */
    Connection connect() throws SQLException {
        Connection c = dataSource.getConnection();
        if (c == null) {
            throw new SQLException("the data source gave no connection");
        }
        return c;
    }

    /** {@return {@code statement} prepared on {@code c}, with the table's statement timeout} */
    PreparedStatement prepare(Connection c, String statement) throws SQLException {
        PreparedStatement p = c.prepareStatement(statement);
        p.setQueryTimeout(queryTimeoutSeconds);
        return p;
    }

    /** {@return {@code statement} prepared on {@code c} to return the {@code id}s it generates, with the table's statement timeout} */
    PreparedStatement prepareReturningId(Connection c, String statement) throws SQLException {
        PreparedStatement p = c.prepareStatement(statement, new String[] {"id"});
        p.setQueryTimeout(queryTimeoutSeconds);
        return p;
    }

    /** Work on a connection in a transaction ({@link #inTransaction}). */
    @FunctionalInterface
    interface TransactionWork<T> {
        T run(Connection c) throws SQLException;
    }

    /**
     * Runs {@code work} in one transaction of a new connection, and {@return what it returned}:
     * committed if it returns, rolled back if it throws (what it threw is rethrown, a failed
     * rollback suppressed in it); the connection is closed either way.
     */
    <T> T inTransaction(TransactionWork<T> work) throws SQLException {
        try (Connection c = connect()) {
            c.setAutoCommit(false);
            try {
                T result = work.run(c);
                c.commit();
                return result;
            } catch (SQLException | RuntimeException e) {
                rollback(c, e);
                throw e;
            }
        }
    }

    /** Rolls {@code c} back; a failure to do so is suppressed in {@code cause}. */
    static void rollback(Connection c, Throwable cause) {
        try {
            c.rollback();
        } catch (SQLException | RuntimeException e) {
            cause.addSuppressed(e);
        }
    }

    /** Closes {@code c}, if there is one; a failure to do so is suppressed in {@code cause}, if there is one. */
    static void closeQuietly(@Nullable Connection c, @Nullable Throwable cause) {
        if (c == null) {
            return;
        }
        try {
            c.close();
        } catch (SQLException | RuntimeException e) {
            if (cause != null) {
                cause.addSuppressed(e);
            }
        }
    }

    /** The statements, written once per table. */
    static final class Statements {
        /**
         * {@return " OR …": the row's owner holds no advisory lock under {@link Presence#KEY_SPACE}}
         * in this database: its session ended. The lock's second key is PostgreSQL's
         * {@code hashtext} of the owner, as {@code pg_locks} shows it (an unsigned 32 bits).
         */
        private static String ownerGone(String t) {
            return " OR NOT EXISTS (SELECT 1 FROM pg_locks l WHERE " + Presence.lockOf(t + ".owner") + ")";
        }

        final String insert;
        /**
         * The first claimable rows that are not suspects (JT-2, JT-3): due ready rows and expired
         * ones whose next lost lease would not bury them; parameters: the two suspect thresholds
         * ({@link Terms#suspectWhenReady}, {@link Terms#suspectWhenExpired}), then the limit.
         */
        final String unsuspected;
        /** The first suspects (JT-3): claimable rows whose next lost lease would bury them; the same parameters. */
        final String suspects;
        final String take;
        final String buryLost;
        final String held;
        final String renew;
        final String settle;
        final String counts;
        final String one;
        final String requeue;
        final String requeueDead;
        final String stateOf;
        final String purgeDone;
        final String backlog;

        Statements(String t, Dialect dialect) {
            String now = dialect.nowMillis;
            String firstUnlocked = dialect.firstUnlocked;
            // A running row is abandoned when its lease ran out, or, on PostgreSQL, when its owner
            // no longer holds its advisory lock: its session ended (JT-3, Presence, decision 0067).
            String abandoned = "(lease_until < " + now + (dialect == Dialect.POSTGRES ? ownerGone(t) : "") + ")";
            String fence = " WHERE id = ? AND owner = ? AND claims = ? AND state = 'running'";
            insert = "INSERT INTO " + t + " (payload, run_at) VALUES (?, ?)";
            String columns = "SELECT id, payload, state, claims, lost_leases, attempts FROM " + t;
            String due = " AND (run_at IS NULL OR run_at <= " + now + ")";
            String expired = "state = 'running' AND " + abandoned;
            unsuspected = columns + " WHERE (state = 'ready' AND lost_leases < ?" + due + ") OR (" + expired + " AND lost_leases < ?)"
                    + " ORDER BY id " + firstUnlocked;
            suspects = columns + " WHERE (state = 'ready' AND lost_leases >= ?" + due + ") OR (" + expired + " AND lost_leases >= ?)"
                    + " ORDER BY id " + firstUnlocked;
            take = "UPDATE " + t + " SET state = 'running', owner = ?, claims = ?, lost_leases = ?, lease_until = "
                    + now + " + ? WHERE id = ?";
            buryLost = "UPDATE " + t + " SET state = 'dead', owner = NULL, lease_until = NULL, lost_leases = ?,"
                    + " last_error = ?, settled_at = " + now + " WHERE id = ?";
            held = "SELECT id FROM " + t + " WHERE owner = ? AND state = 'running' ORDER BY id FOR UPDATE SKIP LOCKED";
            renew = "UPDATE " + t + " SET lease_until = " + now + " + ? WHERE id = ? AND claims = ?";
            settle = "UPDATE " + t + " SET state = ?, last_error = COALESCE(CAST(? AS CHARACTER VARYING(" + JobTable.MAX_ERROR
                    + ")), last_error), owner = NULL, lease_until = NULL, settled_at = CASE WHEN ? THEN " + now
                    + " ELSE settled_at END, run_at = COALESCE(CAST(? AS BIGINT), run_at), attempts = COALESCE(CAST(? AS INTEGER), attempts)"
                    + fence;
            counts = "SELECT state, COUNT(*) FROM " + t + " GROUP BY state";
            one = "SELECT id, payload, state, owner, claims, lost_leases, last_error, run_at, settled_at, attempts FROM " + t
                    + " WHERE id = ?";
            String ready = "UPDATE " + t + " SET state = 'ready', owner = NULL, lease_until = NULL, lost_leases = 0, run_at = NULL,"
                    + " attempts = 0, settled_at = NULL WHERE state = 'dead'";
            requeue = ready + " AND id = ?";
            requeueDead = ready + " AND POSITION(? IN COALESCE(last_error, '')) > 0";
            stateOf = "SELECT state FROM " + t + " WHERE id = ?";
            purgeDone = "DELETE FROM " + t + " WHERE state = 'done' AND settled_at < " + now + " - ?";
            backlog = "SELECT"
                    + " COALESCE(SUM(CASE WHEN state = 'ready' AND (run_at IS NULL OR run_at <= " + now + ") THEN 1 ELSE 0 END), 0),"
                    + " COALESCE(SUM(CASE WHEN state = 'ready' AND run_at > " + now + " THEN 1 ELSE 0 END), 0),"
                    + " COALESCE(SUM(CASE WHEN state = 'running' AND NOT " + abandoned + " THEN 1 ELSE 0 END), 0),"
                    + " COALESCE(SUM(CASE WHEN state = 'running' AND " + abandoned + " THEN 1 ELSE 0 END), 0),"
                    + " COALESCE(SUM(CASE WHEN state = 'done' THEN 1 ELSE 0 END), 0),"
                    + " COALESCE(SUM(CASE WHEN state = 'dead' THEN 1 ELSE 0 END), 0) FROM " + t;
        }
    }
}
