package dev.drain.jobtable.witness;

import dev.drain.jobtable.Job;
import dev.drain.jobtable.JobTable;
import dev.drain.pool.Results;
import dev.drain.pool.RunOutcome;
import dev.drain.pool.StopOnShutdown;
import dev.drain.pool.WorkerPool;
import java.time.Duration;
import java.util.stream.Stream;
import javax.sql.DataSource;
import org.h2.jdbcx.JdbcDataSource;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * A pool over a job table whose handler records each attempt in the table's witness
 * ({@link Witnesses#attempted}, committed before the handler returns) and then works for a couple
 * of milliseconds: the process that the durable case {@code kill-recover} and the crash tests kill
 * with {@code kill -9}, and, through {@link #drain}, the run that takes over from it.
 *
 * <p>Arguments of {@link #main}: JDBC URL, table, lease in milliseconds, workers, who (the
 * owner's prefix, written into the witness), and optionally {@code waiting}: a service's stream
 * ({@code claimsUntilStopped()}), which never ends by itself: the process serves it until it is
 * killed, or until SIGTERM stops the run ({@link StopOnShutdown}, a 10 s deadline), which it
 * prints ({@code ended } and the outcome) before the process exits.
 */
public final class WitnessedRun {
    private WitnessedRun() {}

    /**
     * Drains the table named by {@code args} (see the class comment), then exits.
     *
     * @param args JDBC URL, table, lease in milliseconds, workers, who
     * @throws Exception whatever the run throws: the process then exits with status 1
     */
    public static void main(String[] args) throws Exception {
        DataSource db = dataSource(args[0]);
        Duration lease = Duration.ofMillis(Long.parseLong(args[2]));
        if (args.length > 5 && args[5].equals("waiting")) {
            try (StopOnShutdown shutdown = StopOnShutdown.install(Duration.ofSeconds(10))) {
                run(db, args[1], lease, Integer.parseInt(args[3]), args[4], true, (pool, claims) -> {
                    RunOutcome<Job> outcome = shutdown.drain(pool, claims);
                    System.out.println("ended " + outcome); // what the run ended with: the exit status after SIGTERM is 143 either way
                    return 0;
                });
            }
        } else {
            drain(db, args[1], lease, Integer.parseInt(args[3]), args[4]);
        }
    }

    /**
     * {@return a data source for {@code url}, on H2 or PostgreSQL}
     *
     * @param url a JDBC URL, {@code jdbc:h2:} or {@code jdbc:postgresql:}
     */
    public static DataSource dataSource(String url) {
        if (url.startsWith("jdbc:h2:")) {
            JdbcDataSource h2 = new JdbcDataSource();
            h2.setURL(url);
            return h2;
        }
        PGSimpleDataSource pg = new PGSimpleDataSource();
        pg.setURL(url);
        return pg;
    }

    /**
     * Runs a pool of {@code workers} over the table's claims until none is claimable, each attempt
     * witnessed.
     *
     * @param db the database
     * @param table the job table, with its {@link Witnesses}
     * @param lease the lease of its claims
     * @param workers the pool's workers, and the witness's connections
     * @param who the owner's prefix, written into the witness; the pool is named {@code <who>-pool}
     * @return how many jobs it acknowledged as done
     * @throws Exception if the database or the run fails
     */
    public static long drain(DataSource db, String table, Duration lease, int workers, String who) throws Exception {
        return run(db, table, lease, workers, who, false, (pool, claims) -> {
            try (claims; Results<Job, Long> results = pool.run(claims)) {
                results.forEachRemaining(id -> {});
                return results.stats().succeeded();
            }
        });
    }

    /**
     * Runs one pool of {@code workers} over {@code waiting ? claimsUntilStopped() : claims()},
     * each attempt witnessed, with {@code runner}.
     */
    private static long run(DataSource db, String table, Duration lease, int workers, String who, boolean waiting, Runner runner)
            throws Exception {
        try (JobTable t = JobTable.on(db).table(table).ownerPrefix(who).lease(lease).claimBatch(4).open();
                WitnessConnections witnesses = new WitnessConnections(db, table, who, workers)) {
            WorkerPool<Job, Long> pool = WorkerPool.<Job, Long>builder(job -> {
                witnesses.attempted(job);
                Thread.sleep(2); // the job's own work, after its effect is durable
                return job.id();
            }).name(who + "-pool").workers(workers).queueSize(workers).settler(t.settler()).settleBatch(8).build();
            return runner.run(pool, waiting ? t.claimsUntilStopped() : t.claims());
        }
    }

    /** Runs one pool over one stream of claims to its end. */
    @FunctionalInterface
    private interface Runner {
        /** {@return how many jobs the run acknowledged as done, if it knows} */
        long run(WorkerPool<Job, Long> pool, Stream<Job> claims) throws Exception;
    }
}
