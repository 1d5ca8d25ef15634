package dev.drain.bench;

import dev.drain.jobtable.Job;
import dev.drain.jobtable.JobTable;
import dev.drain.pool.Backoff;
import dev.drain.pool.ItemContext;
import dev.drain.pool.WorkerPool;
import java.io.IOException;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.atomic.AtomicLong;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;

/**
 * Issue 40's service, shared by {@link ServiceBench} (in its own JVM) and {@link ServiceChild} (in a
 * JVM of its own): the backlog, the handler and the witness table that the checks read.
 *
 * <p>The backlog: each job's payload says what its handler does, drawn from a seeded generator, so
 * that every configuration of a run gets the same jobs in the same order: {@code bad} (1 %,
 * malformed: an {@link IllegalArgumentException}, not retryable, so the job ends dead), {@code io:M}
 * (8 %: an {@link IOException} on its first attempt, retried, then M ms), {@code slow} (0.5 %:
 * 4 s), {@code ok:M} (the rest: M = 1 to 3 ms). The "clean" backlog is the same with every
 * {@code bad} job an {@code ok} one.
 *
 * <p>The witness: the handler inserts one row per attempt ({@code ok}, {@code io} or {@code bad},
 * with the attempt's number and the phase: {@code run} in the driver, {@code child} in the
 * service's JVM, {@code finish} when the driver finishes a table the child left), in a transaction
 * of its own (autocommit), committed before the attempt returns or throws. {@link #check} then
 * tells, from the job table and the witness alone, what was lost, handled twice, or acknowledged
 * without being handled.
 *
 * <p>Thread safety: the handler runs on the pool's workers; {@link Connections} is a fixed set of
 * connections in a blocking queue. Everything else is immutable.
 */
final class ServiceWork {
    private ServiceWork() {}

    static final int WORKERS = 16;
    static final Duration SLOW = Duration.ofSeconds(4);
    /** The recommended backoff, scaled down for a benchmark: 50 ms before the first retry (25 to 50 after jitter), 1 s cap. */
    static final Backoff BACKOFF = Backoff.exponential(Duration.ofMillis(50), Duration.ofSeconds(1));
    static final int MAX_RETRIES = 2;

    /** What a backlog holds besides its plain jobs. */
    enum Mix {
        /** 1 % malformed, 8 % failing once, 0.5 % of 4 s: the service's scenario. */
        SCENARIO(true, true, true),
        /** The same jobs with the malformed ones plain: the scenario's baseline. */
        CLEAN(false, true, true),
        /** Plain jobs of 1 to 3 ms only: the keep-going cost on the job table. */
        PLAIN(false, false, false);

        final boolean malformed;
        final boolean flaky;
        final boolean slow;

        Mix(boolean malformed, boolean flaky, boolean slow) {
            this.malformed = malformed;
            this.flaky = flaky;
            this.slow = slow;
        }
    }

    /** {@return the payloads of a backlog of {@code jobs} jobs, the same for every call with the same arguments} */
    static List<String> backlog(int jobs, Mix mix) {
        SplittableRandom random = new SplittableRandom(40);
        List<String> payloads = new ArrayList<>(jobs);
        for (int i = 0; i < jobs; i++) {
            int draw = random.nextInt(1_000); // per mille
            int ms = 1 + random.nextInt(3);
            if (draw < 10) {
                payloads.add(mix.malformed ? "bad" : "ok:" + ms);
            } else if (draw < 90) {
                payloads.add(mix.flaky ? "io:" + ms : "ok:" + ms);
            } else if (draw < 95) {
                payloads.add(mix.slow ? "slow" : "ok:" + ms);
            } else {
                payloads.add("ok:" + ms);
            }
        }
        return payloads;
    }

    /**
     * The service's pool, as the scenario has it: {@code forEach} (so {@code onFailure(CONTINUE)}
     * unless {@code onFailure} says otherwise), 16 workers, the table's settler, an
     * {@link IOException} retried twice at most after the backoff.
     */
    static WorkerPool.Builder<Job, Void> service(Handler handler, JobTable table, WorkerPool.@Nullable OnFailure onFailure) {
        WorkerPool.Builder<Job, Void> builder = WorkerPool.<Job>forEach(handler::handle).workers(WORKERS).settler(table.settler())
                .name("service").retryable(IOException.class).maxRetries(MAX_RETRIES).retryBackoff(BACKOFF);
        return onFailure == null ? builder : builder.onFailure(onFailure);
    }

    /** The witness table of job table {@code table}. */
    static String witnessOf(String table) {
        return table + "_w";
    }

    /** Creates the witness table, empty. */
    static void createWitness(DataSource db, String table) throws SQLException {
        try (Connection c = db.getConnection(); Statement s = c.createStatement()) {
            s.execute("DROP TABLE IF EXISTS " + witnessOf(table));
            s.execute("CREATE TABLE " + witnessOf(table) + " (job_id BIGINT NOT NULL, attempt INTEGER NOT NULL,"
                    + " kind VARCHAR(4) NOT NULL, phase VARCHAR(8) NOT NULL)");
        }
    }

    /** Drops a job table and its witness. */
    static void drop(DataSource db, String table) throws SQLException {
        try (Connection c = db.getConnection(); Statement s = c.createStatement()) {
            s.execute("DROP TABLE IF EXISTS " + witnessOf(table));
            s.execute("DROP TABLE IF EXISTS " + table);
        }
    }

    /**
     * The handler. What it does with a job is its payload's: see the class comment. A handler
     * whose {@code stubbornAt} is positive makes the attempt that starts as that many-th one
     * ignore every interrupt, forever (for the variant whose hook must give up at the deadline
     * plus the grace); {@code onStubborn} and {@code onFirstDone} are told once each.
     */
    static final class Handler implements AutoCloseable {
        private final Connections witness;
        private final String insert;
        private final String phase;
        private final long stubbornAt;
        private final Runnable onStubborn;
        private final Runnable onFirstDone;
        /** Attempts started: counted by the workers. */
        private final AtomicLong started = new AtomicLong();
        /** Attempts that ended done: counted by the workers. */
        private final AtomicLong done = new AtomicLong();

        Handler(DataSource db, String table, String phase, long stubbornAt, Runnable onStubborn, Runnable onFirstDone) {
            this.witness = new Connections(db, WORKERS);
            this.insert = "INSERT INTO " + witnessOf(table) + " (job_id, attempt, kind, phase) VALUES (?, ?, ?, ?)";
            this.phase = phase;
            this.stubbornAt = stubbornAt;
            this.onStubborn = onStubborn;
            this.onFirstDone = onFirstDone;
        }

        Handler(DataSource db, String table, String phase) {
            this(db, table, phase, 0, () -> { }, () -> { });
        }

        void handle(Job job) throws Exception {
            int attempt = ItemContext.current().attempt();
            if (started.incrementAndGet() == stubbornAt) {
                onStubborn.run();
                ignoreEveryInterrupt();
            }
            String payload = job.payload();
            if (payload.equals("bad")) {
                witness(job, attempt, "bad");
                throw new IllegalArgumentException("job " + job.id() + " is malformed");
            }
            if (payload.startsWith("io:") && attempt == 1) {
                witness(job, attempt, "io");
                throw new IOException("the backend did not answer job " + job.id() + " (it will, next time)");
            }
            Thread.sleep(payload.equals("slow") ? SLOW.toMillis() : Long.parseLong(payload.substring(payload.indexOf(':') + 1)));
            witness(job, attempt, "ok");
            if (done.incrementAndGet() == 1) {
                onFirstDone.run();
            }
        }

        private void witness(Job job, int attempt, String kind) throws InterruptedException, SQLException {
            Connection c = witness.take();
            boolean broken = true;
            try (PreparedStatement p = c.prepareStatement(insert)) {
                p.setLong(1, job.id());
                p.setInt(2, attempt);
                p.setString(3, kind);
                p.setString(4, phase);
                p.executeUpdate();
                broken = false;
            } finally {
                witness.give(c, broken);
            }
        }

        @SuppressWarnings({"InfiniteLoopStatement", "BusyWait"})
        private static void ignoreEveryInterrupt() {
            while (true) {
                try {
                    Thread.sleep(1_000);
                } catch (InterruptedException e) {
                    // ignored, on purpose: the attempt that cancellation cannot end
                }
            }
        }

        @Override
        public void close() {
            witness.close();
        }
    }

    /**
     * A fixed number of autocommitting connections for the witness, as a service's connection
     * pool would give them: taken by a worker for one insert and given back. A connection whose
     * statement failed (an interrupt closes a virtual thread's socket) is closed and replaced.
     */
    static final class Connections implements AutoCloseable {
        private final DataSource db;
        /** The connections not in use; null entries stand for ones not opened yet. */
        private final BlockingQueue<Slot> idle;

        /** One place in the queue: a connection, or none yet. */
        private record Slot(@Nullable Connection connection) {}

        Connections(DataSource db, int size) {
            this.db = db;
            this.idle = new ArrayBlockingQueue<>(size);
            for (int i = 0; i < size; i++) {
                idle.add(new Slot(null));
            }
        }

        Connection take() throws InterruptedException, SQLException {
            Slot slot = idle.take();
            Connection c = slot.connection();
            if (c != null) {
                return c;
            }
            try {
                c = db.getConnection();
                c.setAutoCommit(true);
                return c;
            } catch (SQLException | RuntimeException e) {
                idle.add(new Slot(null));
                throw e;
            }
        }

        void give(Connection c, boolean broken) {
            if (broken) {
                closeQuietly(c);
                idle.add(new Slot(null));
            } else {
                idle.add(new Slot(c));
            }
        }

        @Override
        public void close() {
            Slot slot;
            while ((slot = idle.poll()) != null) {
                if (slot.connection() != null) {
                    closeQuietly(slot.connection());
                }
            }
        }

        private static void closeQuietly(Connection c) {
            try {
                c.close();
            } catch (SQLException e) {
                // a broken connection: nothing more to do with it
            }
        }
    }

    /**
     * What the job table and its witness say, as named counts (an ordered map, for the result
     * line): {@code lost} (a job neither done nor dead, or done with no witnessed success, or a
     * well-formed job dead), {@code twice} (a job with more than one witnessed success),
     * {@code again_after_child} (a job the child witnessed done that the driver witnessed done
     * again), {@code witnessed_not_done} (a success witnessed whose row is not done: right after the
     * child's exit, a job handled and not acknowledged), {@code malformed_dead_once},
     * {@code flaky_retried_once}, {@code attempts}, and the states.
     */
    static Map<String, Long> check(DataSource db, String table) throws SQLException {
        String w = witnessOf(table);
        String perJob = "SELECT j.id, j.state, j.payload,"
                + " COUNT(w.job_id) AS attempts,"
                + " COUNT(w.job_id) FILTER (WHERE w.kind = 'ok') AS ok,"
                + " COUNT(w.job_id) FILTER (WHERE w.kind = 'ok' AND w.phase = 'child') AS ok_child,"
                + " COUNT(w.job_id) FILTER (WHERE w.kind = 'ok' AND w.phase = 'finish') AS ok_finish,"
                + " COUNT(w.job_id) FILTER (WHERE w.kind = 'bad') AS bad,"
                + " COUNT(w.job_id) FILTER (WHERE w.kind = 'io') AS io"
                + " FROM " + table + " j LEFT JOIN " + w + " w ON w.job_id = j.id GROUP BY j.id, j.state, j.payload";
        String sql = "SELECT COUNT(*),"
                + " COUNT(*) FILTER (WHERE state = 'done'), COUNT(*) FILTER (WHERE state = 'dead'),"
                + " COUNT(*) FILTER (WHERE state = 'ready'), COUNT(*) FILTER (WHERE state = 'running'),"
                + " COUNT(*) FILTER (WHERE state NOT IN ('done', 'dead') OR (state = 'done' AND ok = 0)"
                + "   OR (state = 'dead' AND payload <> 'bad')),"
                + " COUNT(*) FILTER (WHERE ok > 1),"
                + " COUNT(*) FILTER (WHERE ok_child > 0 AND ok_finish > 0),"
                + " COUNT(*) FILTER (WHERE ok > 0 AND state <> 'done'),"
                + " COUNT(*) FILTER (WHERE payload = 'bad'),"
                + " COUNT(*) FILTER (WHERE payload = 'bad' AND state = 'dead' AND bad = 1 AND attempts = 1),"
                + " COUNT(*) FILTER (WHERE payload LIKE 'io:%'),"
                + " COUNT(*) FILTER (WHERE payload LIKE 'io:%' AND state = 'done' AND io = 1 AND ok = 1 AND attempts = 2),"
                + " COALESCE(SUM(attempts), 0)"
                + " FROM (" + perJob + ") x";
        String[] names = {"jobs", "done", "dead", "ready", "running", "lost", "twice", "again_after_child",
            "witnessed_not_done", "malformed", "malformed_dead_once", "flaky", "flaky_retried_once", "attempts"};
        Map<String, Long> counts = new LinkedHashMap<>();
        try (Connection c = db.getConnection(); Statement s = c.createStatement(); ResultSet r = s.executeQuery(sql)) {
            r.next();
            for (int i = 0; i < names.length; i++) {
                counts.put(names[i], r.getLong(i + 1));
            }
        }
        return counts;
    }

    /** {@return {@code counts} as a JSON object} */
    static String json(Map<String, Long> counts) {
        StringBuilder out = new StringBuilder("{");
        counts.forEach((k, v) -> out.append(out.length() > 1 ? ", " : "").append('"').append(k).append("\": ").append(v));
        return out.append('}').toString();
    }
}
