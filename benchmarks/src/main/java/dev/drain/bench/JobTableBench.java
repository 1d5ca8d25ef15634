package dev.drain.bench;

import dev.drain.jobtable.Dialect;
import dev.drain.jobtable.Job;
import dev.drain.jobtable.JobState;
import dev.drain.jobtable.JobTable;
import dev.drain.lab.LocalPostgres;
import dev.drain.pool.Handler;
import dev.drain.pool.Results;
import dev.drain.pool.WorkerPool;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import javax.sql.DataSource;
import org.h2.jdbcx.JdbcDataSource;
import org.jspecify.annotations.Nullable;
import org.openjdk.jmh.annotations.AuxCounters;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Issue 21's job table: jobs per second through {@link JobTable} (claims in batches, settlements
 * through the pool's settler), beside a plain loop on the same table with the same handler.
 * <ul>
 *   <li>{@link #pool}: a {@link WorkerPool} of {@code workers} over {@link JobTable#claims()} with
 *       {@link JobTable#settler()}, claims of {@code claimBatch} rows, settlements in the pool's
 *       default batches (64), queue intake of {@code max(workers, claimBatch)};</li>
 *   <li>{@link #plainLoop}: what one writes without drain, {@code workers} platform threads, each
 *       with a connection of its own, each looping: claim one row (the same
 *       {@code SELECT … FOR UPDATE SKIP LOCKED}, then {@code UPDATE} to {@code running}, one
 *       transaction), handle it, acknowledge it (the same fenced {@code UPDATE} to {@code done},
 *       a second transaction).</li>
 * </ul>
 * Every invocation drains a fresh table of {@value #JOBS_PER_WORKER} × {@code workers} jobs (made
 * and filled before the invocation, dropped after it, neither measured) and checks that every job
 * is {@code done}. The score is invocations per second; the secondary result {@code jobs} is jobs
 * per second, the figure the targets are stated in. The handler sleeps 1 ms ({@code 1ms}) or
 * returns at once ({@code noop}: the engine's and the adapter's ceiling).
 *
 * <p>The databases: {@code POSTGRES} is {@link LocalPostgres}, the embedded default (a real
 * PostgreSQL 14 child process, started once per fork); {@code H2} an H2 file database in a
 * temporary folder, in this JVM.
 */
@State(Scope.Benchmark)
@BenchmarkMode(Mode.Throughput)
@OutputTimeUnit(TimeUnit.SECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(value = 1, jvmArgsAppend = {"--enable-preview", "-Xms1g", "-Xmx1g"})
public class JobTableBench {
    static final int JOBS_PER_WORKER = 300;
    private static final AtomicInteger TABLES = new AtomicInteger();

    @Param({"POSTGRES", "H2"})
    Dialect dialect = Dialect.POSTGRES;

    @Param({"1", "16"})
    int workers;

    @Param({"1ms", "noop"})
    String handler = "";

    private @Nullable LocalPostgres postgres;
    private @Nullable Path h2Folder;
    /** Holds the H2 database open between invocations. */
    private @Nullable Connection h2Keeper;
    private @Nullable DataSource db;
    /** The table of the invocation under way; made by {@link #freshTable}. */
    private String table = "";

    /** The claim batch, a parameter of {@link #pool} only. */
    @State(Scope.Benchmark)
    public static class Claims {
        @Param({"1", "16", "64"})
        int claimBatch;
    }

    /** Counts the jobs, for the per-job secondary result. */
    @State(Scope.Thread)
    @AuxCounters(AuxCounters.Type.OPERATIONS)
    public static class Jobs {
        /** Jobs done in this iteration. */
        public long jobs;

        @Setup(Level.Iteration)
        public void reset() {
            jobs = 0;
        }
    }

    @Setup(Level.Trial)
    public void start() throws IOException, SQLException {
        switch (dialect) {
            case POSTGRES -> {
                postgres = LocalPostgres.start();
                db = postgres.dataSource();
            }
            case H2 -> {
                h2Folder = Files.createTempDirectory("drain-bench-h2");
                JdbcDataSource h2 = new JdbcDataSource();
                h2.setURL("jdbc:h2:file:" + h2Folder.resolve("jobs"));
                h2Keeper = h2.getConnection();
                db = h2;
            }
        }
    }

    @TearDown(Level.Trial)
    public void stop() throws IOException, SQLException {
        if (postgres != null) {
            postgres.close();
        }
        if (h2Keeper != null) {
            try (Statement s = h2Keeper.createStatement()) {
                s.execute("SHUTDOWN");
            }
            h2Keeper.close();
        }
        if (h2Folder != null) {
            try (Stream<Path> files = Files.walk(h2Folder)) {
                for (Path file : files.sorted(Comparator.reverseOrder()).toList()) {
                    Files.deleteIfExists(file);
                }
            }
        }
    }

    @Setup(Level.Invocation)
    public void freshTable() throws SQLException {
        table = "bench_" + TABLES.incrementAndGet();
        try (JobTable t = JobTable.on(db()).table(table).open()) {
            List<String> payloads = new ArrayList<>(jobs());
            for (int i = 0; i < jobs(); i++) {
                payloads.add("job-" + i);
            }
            t.enqueue(payloads);
        }
    }

    @TearDown(Level.Invocation)
    public void dropTable() throws SQLException {
        try (Connection c = db().getConnection(); Statement s = c.createStatement()) {
            s.execute("DROP TABLE " + table);
        }
    }

    @Benchmark
    public void pool(Claims claims, Jobs counter) throws Exception {
        try (JobTable t = JobTable.on(db()).table(table).claimBatch(claims.claimBatch).open()) {
            WorkerPool<Job, Long> pool = WorkerPool.<Job, Long>builder(handler())
                    .workers(workers)
                    .queueSize(Math.max(workers, claims.claimBatch))
                    .settler(t.settler())
                    .name("bench")
                    .build();
            Threads.runAll(Thread.ofVirtual(), List.of(() -> {
                try (Stream<Job> jobs = t.claims(); Results<Job, Long> results = pool.run(jobs)) {
                    results.forEachRemaining(id -> {});
                }
            }));
            checkAllDone(t);
        }
        counter.jobs += jobs();
    }

    @Benchmark
    public void plainLoop(Jobs counter) throws Exception {
        Handler<Job, Long> work = handler();
        String owner = "plain-" + table;
        PlainSql sql = new PlainSql(dialect, table);
        List<Threads.Task> loops = new ArrayList<>();
        for (int w = 0; w < workers; w++) {
            loops.add(() -> {
                try (Connection c = db().getConnection()) {
                    c.setAutoCommit(false);
                    for (Job job = claimOne(c, sql, owner); job != null; job = claimOne(c, sql, owner)) {
                        work.handle(job);
                        try (PreparedStatement done = c.prepareStatement(sql.done)) {
                            done.setLong(1, job.id());
                            done.setString(2, owner);
                            done.setInt(3, job.claim());
                            if (done.executeUpdate() != 1) {
                                throw new IllegalStateException("job " + job.id() + " was not running under " + owner);
                            }
                        }
                        c.commit();
                    }
                }
            });
        }
        Threads.runAll(Thread.ofPlatform(), loops);
        try (JobTable t = JobTable.on(db()).table(table).open()) {
            checkAllDone(t);
        }
        counter.jobs += jobs();
    }

    /** Claims the first ready row in one transaction; {@return it, or null when none is left} */
    private static @Nullable Job claimOne(Connection c, PlainSql sql, String owner) throws SQLException {
        Job job = null;
        try (PreparedStatement select = c.prepareStatement(sql.claimable); ResultSet row = select.executeQuery()) {
            if (row.next()) {
                job = new Job(row.getLong(1), row.getString(2), row.getInt(3) + 1);
            }
        }
        if (job != null) {
            try (PreparedStatement take = c.prepareStatement(sql.take)) {
                take.setString(1, owner);
                take.setInt(2, job.claim());
                take.setLong(3, job.id());
                take.executeUpdate();
            }
        }
        c.commit();
        return job;
    }

    /** The plain loop's statements: the job table's own, one row at a time. */
    private record PlainSql(String claimable, String take, String done) {
        PlainSql(Dialect dialect, String t) {
            this("SELECT id, payload, claims FROM " + t + " WHERE state = 'ready' ORDER BY id "
                            + (dialect == Dialect.POSTGRES ? "LIMIT 1 FOR UPDATE SKIP LOCKED" : "FETCH FIRST 1 ROWS ONLY FOR UPDATE SKIP LOCKED"),
                    "UPDATE " + t + " SET state = 'running', owner = ?, claims = ?, lease_until = " + now(dialect) + " + 30000 WHERE id = ?",
                    "UPDATE " + t + " SET state = 'done', owner = NULL, lease_until = NULL, settled_at = " + now(dialect)
                            + " WHERE id = ? AND owner = ? AND claims = ? AND state = 'running'");
        }

        private static String now(Dialect dialect) {
            return dialect == Dialect.POSTGRES
                    ? "CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000 AS BIGINT)"
                    : "CAST(EXTRACT(EPOCH FROM CURRENT_TIMESTAMP) * 1000 AS BIGINT)";
        }
    }

    private Handler<Job, Long> handler() {
        return switch (handler) {
            case "1ms" -> job -> {
                Thread.sleep(Duration.ofMillis(1));
                return job.id();
            };
            case "noop" -> Job::id;
            default -> throw new IllegalArgumentException(handler);
        };
    }

    private int jobs() {
        return JOBS_PER_WORKER * workers;
    }

    private DataSource db() {
        if (db == null) {
            throw new IllegalStateException("no database: the trial's setup did not run");
        }
        return db;
    }

    private void checkAllDone(JobTable t) throws SQLException {
        long done = t.counts().get(JobState.DONE);
        if (done != jobs()) {
            throw new IllegalStateException(done + " of " + jobs() + " jobs done in " + table + ": " + t.counts());
        }
    }
}
