package dev.drain.jobtable.witness;

import dev.drain.jobtable.Job;
import dev.drain.jobtable.JobState;
import dev.drain.jobtable.JobTable;
import dev.drain.pool.Backoff;
import dev.drain.pool.ItemContext;
import dev.drain.pool.RunOutcome;
import dev.drain.pool.StopOnShutdown;
import dev.drain.pool.WorkerPool;
import dev.drain.support.Stubborn;
import java.io.IOException;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;
import java.util.stream.Stream;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;

/**
 * A service over a job table as a user writes one (WP-23, WP-25, WP-27, WP-28), with witnesses: a
 * side-effect pool that goes on past its bad jobs, retries a flaky backend later, in one run over
 * the table's stream that waits for work (JT-13), until the JVM is told to shut down; then
 * {@link StopOnShutdown} stops the run with a deadline. The deploy tests and the contract report's {@code deploy} case send it
 * SIGTERM.
 *
 * <p>Its jobs, by id: {@link #malformed} ones fail for good (the table marks them dead); a
 * {@link #flaky} one fails its first attempt with an {@link IOException} and is retried after a
 * backoff; the {@code stubborn} one ignores every interrupt for as long as its JVM lives; the
 * others work for 3 ms and then record their effect in the table's witness
 * ({@link Witnesses#attempted}, committed before the handler returns). So here a witness row
 * means a job's work was done, once per row: a job with two rows was handled twice.
 *
 * <p>Arguments of {@link #main}: JDBC URL, table, lease in milliseconds, workers, who (the
 * owner's prefix and the witness's name), the stop's deadline and grace in milliseconds, and the
 * stubborn job's id (-1 for none).
 */
public final class WitnessedService {
    private WitnessedService() {}

    /** {@return whether job {@code id} is malformed: one in 97, never done} */
    public static boolean malformed(long id) {
        return id % 97 == 13;
    }

    /** {@return whether job {@code id}'s first attempt fails with a retryable exception: one in 11} */
    public static boolean flaky(long id) {
        return id % 11 == 5 && !malformed(id);
    }

    /**
     * Serves the table named by {@code args} (see the class comment) until SIGTERM.
     *
     * @param args JDBC URL, table, lease ms, workers, who, deadline ms, grace ms, stubborn id
     * @throws Exception whatever the service throws: the process then exits with status 1
     */
    public static void main(String[] args) throws Exception {
        Duration deadline = Duration.ofMillis(Long.parseLong(args[5]));
        Duration grace = Duration.ofMillis(Long.parseLong(args[6]));
        try (StopOnShutdown shutdown = StopOnShutdown.install(deadline, grace)) {
            serve(WitnessedRun.dataSource(args[0]), args[1], Duration.ofMillis(Long.parseLong(args[2])), Integer.parseInt(args[3]),
                    args[4], Long.parseLong(args[7]), null, (pool, claims) -> {
                        System.out.println("ended " + shutdown.drain(pool, claims)); // for a failing test's message
                    });
        }
    }

    /**
     * Serves the table in this JVM until every job is done or dead: the run that finishes what a
     * stopped service left.
     *
     * @param db the database
     * @param table the job table, with its {@link Witnesses}
     * @param lease the lease of its claims
     * @param workers the pool's workers
     * @param who the owner's prefix and the witness's name
     * @throws Exception if the database or a run fails
     */
    public static void finish(DataSource db, String table, Duration lease, int workers, String who) throws Exception {
        try (JobTable counter = JobTable.on(db).table(table).open()) {
            BooleanSupplier allSettled = () -> {
                try {
                    Map<JobState, Long> counts = counter.counts();
                    return counts.getOrDefault(JobState.READY, 0L) + counts.getOrDefault(JobState.RUNNING, 0L) == 0;
                } catch (SQLException e) {
                    throw new IllegalStateException(e);
                }
            };
            serve(db, table, lease, workers, who, -1, allSettled, (pool, claims) -> {
                RunOutcome<Job> outcome = pool.drain(claims);
                if (!(outcome instanceof RunOutcome.Completed<Job>)) {
                    throw new IllegalStateException("the finishing run ended " + outcome);
                }
            });
        }
    }

    /**
     * Runs one pool over the table's stream that waits for work (JT-13), until it is stopped, if
     * {@code over} is null; else pools over the table's batch streams, one after another, until
     * {@code over} says so.
     *
     * @param runner runs one pool over one stream of claims to its end
     */
    private static void serve(DataSource db, String table, Duration lease, int workers, String who, long stubborn,
            @Nullable BooleanSupplier over, Runner runner) throws Exception {
        try (JobTable t = JobTable.on(db).table(table).ownerPrefix(who).lease(lease).claimBatch(4).open();
                WitnessConnections witnesses = new WitnessConnections(db, table, who, workers)) {
            AtomicLong attempts = new AtomicLong();
            WorkerPool.Builder<Job, Void> service = WorkerPool.<Job>forEach(job -> {
                attempts.incrementAndGet();
                if (job.id() == stubborn) {
                    Stubborn.ignoreEveryInterrupt();
                }
                if (malformed(job.id())) {
                    throw new IllegalArgumentException("job " + job.id() + " is malformed");
                }
                if (flaky(job.id()) && ItemContext.current().attempt() == 1) {
                    throw new IOException("the backend did not answer job " + job.id());
                }
                Thread.sleep(3); // the job's work, then its effect, durable before the handler returns
                witnesses.attempted(job);
            }).name(who + "-pool").workers(workers).queueSize(workers).settler(t.settler()).settleBatch(8)
                    .retryable(IOException.class).maxRetries(3)
                    .retryBackoff(Backoff.exponential(Duration.ofMillis(20), Duration.ofMillis(200)));
            if (over == null) {
                runner.run(service.build(), t.claimsUntilStopped()); // a service's run: SIGTERM ends it
                return;
            }
            while (!over.getAsBoolean()) {
                long before = attempts.get();
                runner.run(service.build(), t.claims());
                if (attempts.get() == before && !over.getAsBoolean()) {
                    Thread.sleep(50); // nothing was claimable: look again soon
                }
            }
        }
    }

    /** Runs one pool over one stream of claims to its end. */
    private interface Runner {
        void run(WorkerPool<Job, Void> pool, Stream<Job> claims);
    }
}
