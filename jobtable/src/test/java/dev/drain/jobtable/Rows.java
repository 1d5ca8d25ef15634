package dev.drain.jobtable;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.SortedSet;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;

/** Reads a job table's rows as the tests check them, straight from the database. */
final class Rows {
    private Rows() {}

    /**
     * One row.
     *
     * @param id its key
     * @param state its state, lower case, as stored
     * @param owner who holds it, if anyone
     * @param claims its claim counter
     * @param lostLeases how many leases it lost
     * @param lastError a dead letter's failure
     */
    record Row(long id, String state, @Nullable String owner, int claims, int lostLeases, @Nullable String lastError) {}

    /** {@return every row of {@code table}, by id} */
    static Map<Long, Row> all(DataSource db, String table) throws SQLException {
        Map<Long, Row> rows = new TreeMap<>();
        try (Connection c = db.getConnection();
                PreparedStatement p = c.prepareStatement(
                        "SELECT id, state, owner, claims, lost_leases, last_error FROM " + table + " ORDER BY id");
                ResultSet r = p.executeQuery()) {
            while (r.next()) {
                rows.put(r.getLong(1), new Row(r.getLong(1), r.getString(2), r.getString(3), r.getInt(4), r.getInt(5),
                        r.getString(6)));
            }
        }
        return rows;
    }

    /** {@return the row {@code id} of {@code table}, which must be there} */
    static Row one(DataSource db, String table, long id) throws SQLException {
        Row row = all(db, table).get(id);
        if (row == null) {
            throw new AssertionError("no row " + id + " in " + table);
        }
        return row;
    }

    /** {@return the ids of the rows of {@code table} in {@code state}} */
    static SortedSet<Long> inState(DataSource db, String table, String state) throws SQLException {
        SortedSet<Long> ids = new TreeSet<>();
        for (Row row : all(db, table).values()) {
            if (row.state().equals(state)) {
                ids.add(row.id());
            }
        }
        return ids;
    }

    /** {@return how many rows of {@code table} are running with an expired lease, on the database's clock} */
    static int expired(DataSource db, String table, Dialect dialect) {
        try (Connection c = db.getConnection();
                PreparedStatement p = c.prepareStatement("SELECT COUNT(*) FROM " + table
                        + " WHERE state = 'running' AND lease_until < " + dialect.nowMillis);
                ResultSet r = p.executeQuery()) {
            r.next();
            return r.getInt(1);
        } catch (SQLException e) {
            throw new AssertionError(e);
        }
    }

    /** {@return the ids of {@code jobs}} */
    static SortedSet<Long> ids(Iterable<Job> jobs) {
        SortedSet<Long> ids = new TreeSet<>();
        jobs.forEach(job -> ids.add(job.id()));
        return ids;
    }

    /** {@return payloads "p0" … "p(n-1)"} */
    static List<String> payloads(int n) {
        List<String> payloads = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            payloads.add("p" + i);
        }
        return payloads;
    }
}
