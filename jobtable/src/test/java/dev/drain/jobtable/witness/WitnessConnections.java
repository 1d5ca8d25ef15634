package dev.drain.jobtable.witness;

import dev.drain.jobtable.Job;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import javax.sql.DataSource;

/**
 * The connections on which a pool's handlers write a job table's witness ({@link Witnesses}): one
 * per worker, in auto-commit, so that a row is committed before its handler returns. Opened by the
 * run that uses them, closed when it ends.
 */
final class WitnessConnections implements AutoCloseable {
    private final String table;
    private final String who;
    /** The connections not in use; a handler takes one and puts it back. */
    private final BlockingQueue<Connection> free;
    /** Every connection opened, written only by the constructor. */
    private final List<Connection> opened = new ArrayList<>();

    /**
     * Opens {@code workers} connections to {@code db}.
     *
     * @param table the job table whose witness they write
     * @param who the name written into each row
     * @throws SQLException if the database refuses; what was opened is closed
     */
    WitnessConnections(DataSource db, String table, String who, int workers) throws SQLException {
        this.table = table;
        this.who = who;
        this.free = new ArrayBlockingQueue<>(workers);
        try {
            for (int i = 0; i < workers; i++) {
                Connection c = db.getConnection();
                opened.add(c);
                c.setAutoCommit(true);
                free.add(c);
            }
        } catch (SQLException e) {
            close();
            throw e;
        }
    }

    /**
     * Records {@code job} in the witness, committed when this returns ({@link Witnesses#attempted}).
     *
     * @throws InterruptedException if interrupted while every connection is in use
     * @throws SQLException if the database refuses
     */
    void attempted(Job job) throws InterruptedException, SQLException {
        Connection c = free.take();
        try {
            Witnesses.attempted(c, table, job, who);
        } finally {
            free.add(c);
        }
    }

    @Override
    public void close() {
        for (Connection c : opened) {
            try {
                c.close();
            } catch (SQLException e) {
                // the run is over; the database drops the session anyway
            }
        }
    }
}
