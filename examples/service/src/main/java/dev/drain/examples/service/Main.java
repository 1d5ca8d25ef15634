package dev.drain.examples.service;

import dev.drain.jobtable.Job;
import dev.drain.jobtable.JobTable;
import dev.drain.lab.LocalPostgres;
import dev.drain.pool.Backoff;
import dev.drain.pool.ItemContext;
import dev.drain.pool.RunOutcome;
import dev.drain.pool.StopOnShutdown;
import dev.drain.pool.WorkerPool;
import java.io.BufferedWriter;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import javax.sql.DataSource;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * A long-running service over a job table, as you would write one: a side-effect pool
 * ({@code WorkerPool.forEach}) that goes on past its bad jobs (they end dead, with their failure,
 * and are logged), retries a flaky backend later without holding a worker (one job in 50 fails its
 * first attempt), in one run over the table's stream that waits for work, until the JVM is told to shut down
 * (SIGTERM, Ctrl-C); then the run in progress stops gracefully, every job done is acknowledged,
 * and the process exits, within 20 s (a stop that outlives it is aborted, its unfinished jobs
 * released).
 *
 * <p>Arguments: the JDBC URL of a PostgreSQL database (with its user and password in it), or
 * nothing for an embedded one. System properties: {@code service.demoJobs} (jobs to enqueue
 * first, one in 100 malformed), {@code service.sigtermAfter} (after how many done jobs the
 * service sends itself SIGTERM, to show a deploy; 0: never), {@code service.witness} (a file to
 * which each done job's id is appended, for a test).
 */
public final class Main {
    /** How long a graceful stop may take after SIGTERM: below Kubernetes' default 30 s grace period. */
    static final Duration STOP_DEADLINE = Duration.ofSeconds(20);

    private static final AtomicLong DONE = new AtomicLong();
    /** After how many done jobs the service sends itself SIGTERM (0: never). */
    private static final long SIGTERM_AFTER = Long.getLong("service.sigtermAfter", 0);

    private Main() {}

    public static void main(String[] args) throws Exception {
        String url = args.length > 0 && !args[0].isBlank() ? args[0] : null;
        int demoJobs = Integer.getInteger("service.demoJobs", 0);
        String witnessPath = System.getProperty("service.witness", "");
        try (StopOnShutdown shutdown = StopOnShutdown.install(STOP_DEADLINE);
             LocalPostgres local = url == null ? startLocal() : null;
             BufferedWriter witness = witnessPath.isEmpty() ? null : Files.newBufferedWriter(Path.of(witnessPath),
                     StandardCharsets.UTF_8, StandardOpenOption.CREATE, StandardOpenOption.APPEND);
             JobTable table = JobTable.on(local != null ? local.dataSource() : dataSource(url)).table("service_jobs")
                     .open()) {
            enqueueDemo(table, demoJobs);
            WorkerPool.Builder<Job, Void> service = WorkerPool.<Job>forEach(job -> work(job, witness))
                    .workers(8).settler(table.settler()).name("service")
                    // a flaky backend: retried later, without holding a worker, for about a minute in all
                    .retryable(IOException.class).maxRetries(8)
                    .retryBackoff(Backoff.exponential(Duration.ofSeconds(1), Duration.ofSeconds(30)))
                    // a retry that waits 5 s or more waits in the table, with its attempts (WP-29, JT-16):
                    // it holds nothing of the run, and a deploy meanwhile loses nothing of it
                    .deferRetriesLongerThan(Duration.ofSeconds(5)).priorAttempts(Job::attempts);
            System.out.println("serving " + table.operations().backlog() + "; stop it with SIGTERM or Ctrl-C");
            // One run over the stream that waits for work (JT-13): a job enqueued later is claimed at once
            // (LISTEN/NOTIFY), and SIGTERM ends the wait, then the run, within STOP_DEADLINE.
            RunOutcome<Job> outcome = shutdown.drain(service.build(), table.claimsUntilStopped());
            System.out.println("the run ended " + outcome.getClass().getSimpleName() + ", " + outcome.failures().size()
                    + " jobs dead");
            System.out.println("stopped after " + DONE.get() + " jobs done: " + table.operations().backlog());
        }
    }

    /** The work of one job: a malformed one fails for good; the others take a few milliseconds. */
    private static void work(Job job, BufferedWriter witness) throws InterruptedException, IOException {
        if (job.payload().startsWith("malformed")) {
            throw new IllegalArgumentException("job " + job.id() + " is malformed: " + job.payload());
        }
        if (job.id() % 50 == 7 && ItemContext.current().attempt() == 1) {
            throw new IOException("the backend did not answer job " + job.id() + " (it will, next time)");
        }
        Thread.sleep(2 + job.id() % 5);
        if (witness != null) {
            synchronized (witness) {
                witness.write(Long.toString(job.id()));
                witness.newLine();
                witness.flush();
            }
        }
        if (DONE.incrementAndGet() == SIGTERM_AFTER) {
            sigtermMyself(); // a deploy in the middle of a run, as a demonstration
        }
    }

    private static void enqueueDemo(JobTable table, int jobs) throws java.sql.SQLException {
        List<String> payloads = new ArrayList<>();
        for (int i = 0; i < jobs; i++) {
            payloads.add(i % 100 == 42 ? "malformed " + i : "job " + i);
        }
        if (!payloads.isEmpty()) {
            table.enqueue(payloads);
        }
    }

    private static LocalPostgres startLocal() throws IOException {
        System.out.println("no database given: starting an embedded PostgreSQL (LocalPostgres) ...");
        return LocalPostgres.startKeptUntilClosed(); // stopped by this main after its last run, not by a hook of its own
    }

    private static DataSource dataSource(String url) {
        PGSimpleDataSource source = new PGSimpleDataSource();
        source.setURL(url);
        return source;
    }

    /** Sends this process SIGTERM, as a deploy would. */
    private static void sigtermMyself() throws IOException {
        System.out.println("sending SIGTERM to myself (pid " + ProcessHandle.current().pid() + "), as a deploy would");
        new ProcessBuilder("kill", "-TERM", Long.toString(ProcessHandle.current().pid())).inheritIO().start();
    }
}
