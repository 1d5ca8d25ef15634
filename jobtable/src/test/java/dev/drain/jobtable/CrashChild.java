package dev.drain.jobtable;

import dev.drain.pool.Results;
import dev.drain.pool.WorkerPool;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.time.Duration;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.stream.Stream;
import javax.sql.DataSource;
import org.h2.jdbcx.JdbcDataSource;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * The process {@link JobTableCrashTest} kills: a pool over a job table whose handler writes a
 * witness row (the job's durable effect, committed before the handler returns) and then works for
 * a couple of milliseconds. The test runs the same {@link #drain} in its own JVM to finish what
 * the killed one left.
 *
 * <p>Arguments: JDBC URL, table, lease in milliseconds, workers, who (written into the witness).
 */
final class CrashChild {
    private CrashChild() {}

    public static void main(String[] args) throws Exception {
        DataSource db = dataSource(args[0]);
        drain(db, args[1], Duration.ofMillis(Long.parseLong(args[2])), Integer.parseInt(args[3]), args[4]);
    }

    static DataSource dataSource(String url) {
        if (url.startsWith("jdbc:h2:")) {
            JdbcDataSource h2 = new JdbcDataSource();
            h2.setURL(url);
            return h2;
        }
        PGSimpleDataSource pg = new PGSimpleDataSource();
        pg.setURL(url);
        return pg;
    }

    /** Runs a pool over the table's claims until none is left; {@return how many jobs it acknowledged as done} */
    static long drain(DataSource db, String table, Duration lease, int workers, String who) throws Exception {
        BlockingQueue<Connection> witnesses = new ArrayBlockingQueue<>(workers);
        for (int i = 0; i < workers; i++) {
            Connection c = db.getConnection();
            c.setAutoCommit(true);
            witnesses.add(c);
        }
        try (JobTable t = JobTable.on(db).table(table).ownerPrefix(who).lease(lease).claimBatch(4).open()) {
            WorkerPool<Job, Long> pool = WorkerPool.<Job, Long>builder(job -> {
                Connection c = witnesses.take();
                try (PreparedStatement witness = c.prepareStatement(
                        "INSERT INTO " + table + "_witness (id, claim, who) VALUES (?, ?, ?)")) {
                    witness.setLong(1, job.id());
                    witness.setInt(2, job.claim());
                    witness.setString(3, who);
                    witness.executeUpdate();
                } finally {
                    witnesses.put(c);
                }
                Thread.sleep(2); // the job's own work, after its effect is durable
                return job.id();
            }).workers(workers).queueSize(workers).settler(t.settler()).settleBatch(8).build();
            try (Stream<Job> claims = t.claims(); Results<Job, Long> results = pool.run(claims)) {
                results.forEachRemaining(id -> {});
                return results.stats().succeeded();
            }
        } finally {
            for (Connection c : witnesses) {
                closeQuietly(c);
            }
        }
    }

    private static void closeQuietly(Connection c) {
        try {
            c.close();
        } catch (SQLException e) {
            // the process is ending; the database drops the session anyway
        }
    }
}
