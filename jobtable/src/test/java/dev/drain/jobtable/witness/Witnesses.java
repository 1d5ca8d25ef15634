package dev.drain.jobtable.witness;

import dev.drain.jobtable.Dialect;
import dev.drain.jobtable.Job;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.Map;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;
import javax.sql.DataSource;

/**
 * The witnesses outside the adapter that the durable cases and the crash tests read, kept beside a
 * job table {@code T}: {@code T_witness}, a row per attempt that the handler writes (the job's
 * durable effect, committed before the handler returns), and {@code T_acks}, a row per
 * acknowledgement, written by a trigger on {@code T} whenever a row turns {@code done} or
 * {@code dead}. Neither is written by {@link dev.drain.jobtable.JobTable}: what they record is what
 * the handler did and what the database stored, whatever the adapter believes.
 */
public final class Witnesses {
    private Witnesses() {}

    /**
     * Creates {@code table}'s witness table, its acknowledgement log and the trigger that fills it.
     * The job table must exist.
     *
     * @param db the database
     * @param dialect its dialect
     * @param table the job table
     * @throws SQLException if the database refuses
     */
    public static void create(DataSource db, Dialect dialect, String table) throws SQLException {
        try (Connection c = db.getConnection(); Statement s = c.createStatement()) {
            s.execute("CREATE TABLE " + table + "_witness (id BIGINT NOT NULL, claim INTEGER NOT NULL, who VARCHAR(40) NOT NULL)");
            s.execute("CREATE TABLE " + table + "_acks (id BIGINT NOT NULL, state VARCHAR(8) NOT NULL, claim INTEGER NOT NULL)");
            switch (dialect) {
                case POSTGRES -> {
                    s.execute("CREATE FUNCTION " + table + "_ack() RETURNS trigger AS $$ BEGIN "
                            + "INSERT INTO " + table + "_acks VALUES (NEW.id, NEW.state, NEW.claims); RETURN NEW; END $$ LANGUAGE plpgsql");
                    s.execute("CREATE TRIGGER " + table + "_ack AFTER UPDATE ON " + table + " FOR EACH ROW "
                            + "WHEN (NEW.state IN ('done', 'dead') AND OLD.state <> NEW.state) EXECUTE FUNCTION " + table + "_ack()");
                }
                case H2 -> s.execute("CREATE TRIGGER " + table + "_ack AFTER UPDATE ON " + table + " FOR EACH ROW CALL '"
                        + AckLogTrigger.class.getName() + "'");
            }
        }
    }

    /**
     * Records an attempt at {@code job}, committed when this returns (the connection is in
     * auto-commit).
     *
     * @param c a connection in auto-commit
     * @param table the job table
     * @param job the job attempted
     * @param who the process or run that attempted it
     * @throws SQLException if the database refuses
     */
    public static void attempted(Connection c, String table, Job job, String who) throws SQLException {
        try (PreparedStatement witness = c.prepareStatement("INSERT INTO " + table + "_witness (id, claim, who) VALUES (?, ?, ?)")) {
            witness.setLong(1, job.id());
            witness.setInt(2, job.claim());
            witness.setString(3, who);
            witness.executeUpdate();
        }
    }

    /**
     * {@return how many attempts {@code table}'s witness holds}
     *
     * @param db the database
     * @param table the job table
     * @throws SQLException if the database refuses
     */
    public static int attempts(DataSource db, String table) throws SQLException {
        try (Connection c = db.getConnection(); Statement s = c.createStatement();
                ResultSet r = s.executeQuery("SELECT COUNT(*) FROM " + table + "_witness")) {
            r.next();
            return r.getInt(1);
        }
    }

    /**
     * {@return the witnessed attempts per job, by id}
     *
     * @param db the database
     * @param table the job table
     * @throws SQLException if the database refuses
     */
    public static Map<Long, Integer> attemptsByJob(DataSource db, String table) throws SQLException {
        return countBy(db, "SELECT id, COUNT(*) FROM " + table + "_witness GROUP BY id");
    }

    /**
     * {@return the acknowledgements ({@code done} or {@code dead}) per job, by id}
     *
     * @param db the database
     * @param table the job table
     * @throws SQLException if the database refuses
     */
    public static Map<Long, Integer> acknowledgementsByJob(DataSource db, String table) throws SQLException {
        return countBy(db, "SELECT id, COUNT(*) FROM " + table + "_acks GROUP BY id");
    }

    /**
     * {@return the ids of {@code table}'s rows in {@code state}, read from the table itself}
     *
     * @param db the database
     * @param table the job table
     * @param state {@code ready}, {@code running}, {@code done} or {@code dead}
     * @throws SQLException if the database refuses
     */
    public static SortedSet<Long> inState(DataSource db, String table, String state) throws SQLException {
        SortedSet<Long> ids = new TreeSet<>();
        try (Connection c = db.getConnection();
                PreparedStatement p = c.prepareStatement("SELECT id FROM " + table + " WHERE state = ?")) {
            p.setString(1, state);
            try (ResultSet r = p.executeQuery()) {
                while (r.next()) {
                    ids.add(r.getLong(1));
                }
            }
        }
        return ids;
    }

    /**
     * {@return the ids among {@code counts} whose count is above one}
     *
     * @param counts counts by id, as {@link #attemptsByJob} gives them
     */
    public static SortedSet<Long> moreThanOnce(Map<Long, Integer> counts) {
        SortedSet<Long> ids = new TreeSet<>();
        counts.forEach((id, n) -> {
            if (n > 1) {
                ids.add(id);
            }
        });
        return ids;
    }

    private static Map<Long, Integer> countBy(DataSource db, String query) throws SQLException {
        Map<Long, Integer> counts = new TreeMap<>();
        try (Connection c = db.getConnection(); PreparedStatement p = c.prepareStatement(query); ResultSet r = p.executeQuery()) {
            while (r.next()) {
                counts.put(r.getLong(1), r.getInt(2));
            }
        }
        return counts;
    }
}
