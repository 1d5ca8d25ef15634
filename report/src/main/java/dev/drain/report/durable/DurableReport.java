package dev.drain.report.durable;

import com.sun.management.HotSpotDiagnosticMXBean;
import dev.drain.jobtable.Dialect;
import dev.drain.jobtable.Job;
import dev.drain.jobtable.JobTable;
import dev.drain.jobtable.witness.WitnessedRun;
import dev.drain.jobtable.witness.Witnesses;
import dev.drain.lab.LocalPostgres;
import dev.drain.measure.Json;
import dev.drain.pool.Results;
import dev.drain.pool.RunOutcome;
import dev.drain.pool.WorkerPool;
import java.io.File;
import java.io.IOException;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentSkipListSet;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import javax.sql.DataSource;

/**
 * The durable cases of the contract report: a pool whose settler is a {@link JobTable} on the
 * embedded PostgreSQL ({@link LocalPostgres}), ended by an abort, by a failure that stops its
 * intake, by {@code kill -9} of the process running it, and by SIGTERM to a service stopping with a
 * deadline ({@link DeployCase}); each time a second run takes over,
 * and the case checks, against witnesses outside the adapter ({@link Witnesses}), that what the
 * table acknowledged is exactly what the first run's books settled, and that nothing was lost or
 * acknowledged twice. {@code ./contract-report} runs them after the pool's cases;
 * {@code specs/contract-report.md} lists them and what each shows.
 *
 * <pre>
 * usage: DurableReport [--case NAME] [--json] [--width N]
 * </pre>
 *
 * <p>It prints a block per case, every check with its mark, at most 100 columns wide (or
 * {@code N}, if narrower), writes the same data to {@code target/contract-report-durable.json}
 * ({@code --json} prints that instead), and exits 0 if every check holds, 1 if one fails, 2 for a
 * bad option.
 */
public final class DurableReport {
    private DurableReport() {}

    /** How long any wait of a case may take before the case fails, never hangs. */
    static final Duration BOUND = Duration.ofSeconds(30);
    /** The lease of the killed process's claims: what the takeover must wait out. */
    static final Duration KILL_LEASE = Duration.ofSeconds(1);
    static final int WIDEST = 100;

    /** A case's program: it runs on the report's database and records its checks in {@code c}. */
    @FunctionalInterface
    private interface Program {
        void run(Checks c, Database db) throws Exception;
    }

    /** One case: its name, what it shows, the clauses it proves, and its program. */
    private record Case(String name, String shows, String proves, Program program) {}

    private static final List<Case> CASES = List.of(
            new Case("abort-redeliver", "the first run is aborted mid-stream; the next run gets exactly what it did"
                    + " not acknowledge", "JT-8, JT-6, WP-22", DurableReport::abortRedeliver),
            new Case("dead-letter", "a job no attempt can do is dead-lettered and its failure stops the intake;"
                    + " every success is acknowledged, nothing is left running", "JT-8, JT-5, WP-22", DurableReport::deadLetter),
            new Case("kill-recover", "the process running the pool is killed (kill -9); once PostgreSQL sees its session"
                    + " end (or its lease runs out), a new run finishes the table", "JT-9, JT-3", DurableReport::killRecover),
            new Case("deploy", "a service is sent SIGTERM, as a deploy does: it stops with a deadline, acknowledges every"
                    + " job it did, exits by itself; a new run finishes the table", "JT-10, WP-27, WP-24",
                    (c, db) -> DeployCase.run(c, db, "durable_deploy", "durable-deploy-")));

    /** {@return the names of the durable cases, in the order the report runs them} */
    public static List<String> caseNames() {
        return CASES.stream().map(Case::name).toList();
    }

    /** The report's database, and how another process reaches it. */
    record Database(DataSource dataSource, String url, String childClassPath) {}

    /** What one case showed: its facts in a few lines and each check with whether it held. */
    private record Result(Case c, List<String> facts, List<Check> checks, long millis) {
        boolean passed() {
            return checks.stream().allMatch(Check::holds);
        }
    }

    record Check(String what, boolean holds) {}

    /** A case's checks and facts, in the order it made them. */
    static final class Checks {
        final List<String> facts = new ArrayList<>();
        final List<Check> checks = new ArrayList<>();

        void fact(String text) {
            facts.add(text);
        }

        void expect(boolean holds, String what) {
            checks.add(new Check(what, holds));
        }
    }

    /**
     * Runs the report and exits with its status.
     *
     * @param args the options (see the class comment)
     */
    public static void main(String[] args) {
        System.exit(run(args, System.out, System.err, System.getProperty("java.class.path")));
    }

    /**
     * Runs the cases {@code args} asks for, printing to {@code out} (and what went wrong to
     * {@code err}).
     *
     * @param args the options (see the class comment)
     * @param out where the report goes
     * @param err where a bad option or a database that would not start is reported
     * @param childClassPath the class path of the process that the {@code kill-recover} case starts
     * @return the exit status: 0 if every check holds, 1 if one fails, 2 for a bad option
     */
    public static int run(String[] args, PrintStream out, PrintStream err, String childClassPath) {
        List<Case> chosen = CASES;
        boolean json = false;
        int width = WIDEST;
        try {
            for (int i = 0; i < args.length; i++) {
                switch (args[i]) {
                    case "--json" -> json = true;
                    case "--case" -> {
                        String name = value(args, ++i, "--case");
                        chosen = CASES.stream().filter(c -> c.name().equals(name)).toList();
                        if (chosen.isEmpty()) {
                            throw new IllegalArgumentException("no durable case '" + name + "'; the cases: " + caseNames());
                        }
                    }
                    case "--width" -> width = Math.min(WIDEST, Math.max(60, columns(value(args, ++i, "--width"))));
                    default -> throw new IllegalArgumentException("unknown option '" + args[i] + "'");
                }
            }
        } catch (IllegalArgumentException bad) {
            err.println("DurableReport: " + bad.getMessage());
            err.println("usage: DurableReport [--case NAME] [--json] [--width N]");
            return 2;
        }
        long starting = System.nanoTime();
        List<Result> results = new ArrayList<>();
        String server;
        try (LocalPostgres postgres = LocalPostgres.start()) {
            long started = System.nanoTime();
            server = "the embedded PostgreSQL (LocalPostgres), started in " + seconds(started - starting);
            Database db = new Database(postgres.dataSource(), postgres.jdbcUrl(), childClassPath);
            for (Case c : chosen) {
                results.add(runOne(c, db));
            }
        } catch (IOException | RuntimeException cannotStart) {
            err.println("DurableReport: the embedded PostgreSQL did not start or stop: " + cannotStart);
            return 1;
        }
        String jsonText = json(server, results);
        try {
            Files.createDirectories(Path.of("target"));
            Files.writeString(Path.of("target", "contract-report-durable.json"), jsonText, StandardCharsets.UTF_8);
        } catch (IOException e) {
            err.println("DurableReport: could not write target/contract-report-durable.json: " + e);
        }
        if (json) {
            out.print(jsonText);
        } else {
            print(out, width, server, results);
        }
        return results.stream().allMatch(Result::passed) ? 0 : 1;
    }

    private static String value(String[] args, int i, String option) {
        if (i >= args.length) {
            throw new IllegalArgumentException(option + " needs a value");
        }
        return args[i];
    }

    private static int columns(String value) {
        try {
            return Integer.parseInt(value);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("--width is a number of columns, not '" + value + "'", e);
        }
    }

    private static Result runOne(Case c, Database db) {
        Checks checks = new Checks();
        long start = System.nanoTime();
        try {
            c.program().run(checks, db);
        } catch (Exception | AssertionError e) {
            checks.expect(false, "the case runs to its end (it threw " + e + ")");
            if (e instanceof InterruptedException) {
                Thread.currentThread().interrupt();
            }
        }
        String table = tableOf(c);
        checks.expect(eventually(() -> threadsNamed(table) == 0 && threadsNamed(poolPrefix(c)) == 0),
                "no thread of the pools or of the tables is left");
        return new Result(c, checks.facts, checks.checks, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start));
    }

    private static String tableOf(Case c) {
        return "durable_" + c.name().replace('-', '_');
    }

    private static String poolPrefix(Case c) {
        return "durable-" + c.name() + "-";
    }

    // ---- the cases -----------------------------------------------------------------------------------

    /**
     * Twelve jobs; two workers, a queue of two. The first three succeed; the next two block until
     * cancelled. Once the lead is at its bound (two in flight, two queued, one in the producer's
     * hands), {@code abort()}. Then a second run, a new owner, takes what is claimable.
     */
    private static void abortRedeliver(Checks c, Database db) throws Exception {
        Case self = CASES.get(0);
        String table = tableOf(self);
        DataSource ds = db.dataSource();
        Set<Long> firstAttempts = new ConcurrentSkipListSet<>();
        RunOutcome<Job> first;
        try (JobTable t = JobTable.on(ds).table(table).ownerPrefix("first").claimBatch(4).open()) {
            Witnesses.create(ds, Dialect.POSTGRES, table);
            t.enqueue(payloads(12));
            CountDownLatch blocked = new CountDownLatch(2);
            WorkerPool<Job, Long> pool = WorkerPool.<Job, Long>builder(job -> {
                witness(ds, table, job, "first");
                firstAttempts.add(job.id());
                if (job.id() > 3) {
                    blocked.countDown();
                    new CountDownLatch(1).await(); // never opens: only the abort's cancellation ends this
                }
                return job.id();
            }).name(poolPrefix(self) + "first").workers(2).queueSize(2).itemTimeout(BOUND)
                    .settler(t.settler()).settleBatch(1).build();
            try (Stream<Job> claims = t.claims(); Results<Job, Long> results = pool.run(claims)) {
                for (int i = 0; i < 3; i++) {
                    results.next();
                }
                c.expect(blocked.await(BOUND.toSeconds(), TimeUnit.SECONDS), "two jobs in flight before the abort");
                c.expect(eventually(() -> results.stats().pulled() == 3 + 2 + 2 + 1), "the lead at its bound before the abort");
                pool.abort();
                readToTheEnd(results);
                first = results.outcome().orElseThrow();
            }
        }
        SortedSet<Long> done = Witnesses.inState(ds, table, "done");
        SortedSet<Long> released = new TreeSet<>();
        SortedSet<Long> cancelled = new TreeSet<>();
        if (first instanceof RunOutcome.Aborted<Job> aborted) {
            aborted.discarded().forEach(j -> released.add(j.id()));
            aborted.cancelled().forEach(j -> cancelled.add(j.id()));
            released.addAll(cancelled);
            c.fact("first run: aborted; acknowledged " + ids(done) + "; discarded " + ids(minus(released, cancelled))
                    + "; cancelled " + ids(cancelled) + "; never pulled " + ids(minus(minus(all(12), released), done)));
            c.expect(true, "the first run ends aborted");
        } else {
            c.expect(false, "the first run ends aborted (it ended " + first + ")");
        }
        c.expect(firstAttempts.equals(all(5)), "the first run attempted jobs 1-5: three done, two in flight");
        c.expect(done.equals(all(3)), "acknowledged = what succeeded (jobs 1-3), no more");
        c.expect(Witnesses.inState(ds, table, "running").isEmpty(), "no row left running after the first run");
        c.expect(cancelled.size() == 2 && Witnesses.inState(ds, table, "ready").containsAll(released),
                "every discarded and cancelled job is claimable again");

        SortedSet<Long> redelivered = new TreeSet<>();
        RunOutcome<Job> next = runToTheEnd(ds, table, poolPrefix(self) + "next", redelivered);
        c.fact("next run: claimed " + ids(redelivered) + ", " + summarize(next));
        c.expect(redelivered.equals(minus(all(12), done)), "the next run gets exactly the jobs not acknowledged");
        c.expect(Witnesses.inState(ds, table, "done").equals(all(12)), "every job done in the end");
        acknowledgedOnce(c, ds, table, 12);
        SortedSet<Long> twice = Witnesses.moreThanOnce(Witnesses.attemptsByJob(ds, table));
        c.fact("attempted twice: " + ids(twice) + " (the cancelled, redone)");
        c.expect(twice.equals(cancelled), "only the cancelled jobs were attempted twice");
    }

    /**
     * Twenty jobs; two workers, a queue of two. Job 3 throws on every attempt (one retry); its
     * last attempt fails only once four others are done, so that the stop it causes lands
     * mid-stream. Then a second run takes what is claimable.
     */
    private static void deadLetter(Checks c, Database db) throws Exception {
        Case self = CASES.get(1);
        String table = tableOf(self);
        DataSource ds = db.dataSource();
        int jobs = 20;
        Set<Long> succeeded = new ConcurrentSkipListSet<>();
        RunOutcome<Job> first;
        try (JobTable t = JobTable.on(ds).table(table).ownerPrefix("first").claimBatch(4).open()) {
            Witnesses.create(ds, Dialect.POSTGRES, table);
            t.enqueue(payloads(jobs));
            CountDownLatch othersDone = new CountDownLatch(4);
            WorkerPool<Job, Long> pool = WorkerPool.<Job, Long>builder(job -> {
                witness(ds, table, job, "first");
                if (job.id() == 3) {
                    if (!othersDone.await(BOUND.toSeconds(), TimeUnit.SECONDS)) {
                        throw new IllegalStateException("the others never got done");
                    }
                    throw new IllegalStateException("cannot parse " + job.payload());
                }
                succeeded.add(job.id());
                othersDone.countDown();
                return job.id();
            }).name(poolPrefix(self) + "first").workers(2).queueSize(2).retryable(IllegalStateException.class)
                    .maxRetries(1).settler(t.settler()).settleBatch(2).build();
            try (Stream<Job> claims = t.claims(); Results<Job, Long> results = pool.run(claims)) {
                readToTheEnd(results);
                first = results.outcome().orElseThrow();
            }
        }
        SortedSet<Long> done = Witnesses.inState(ds, table, "done");
        SortedSet<Long> ready = Witnesses.inState(ds, table, "ready");
        c.fact("first run: " + summarize(first) + "; acknowledged " + ids(done) + "; dead " + ids(Witnesses.inState(ds, table, "dead"))
                + "; never pulled " + ids(ready));
        c.expect(first instanceof RunOutcome.Failed<Job> f && f.failures().size() == 1 && f.failures().get(0).item().id() == 3,
                "the first run ends in one failure, job 3's");
        c.expect(done.equals(new TreeSet<>(succeeded)), "acknowledged = what succeeded");
        String error = lastError(ds, table, 3);
        c.fact("job 3's dead letter: " + error);
        c.expect(Witnesses.inState(ds, table, "dead").equals(Set.of(3L))
                && error.equals("after 2 attempts: java.lang.IllegalStateException: cannot parse p3"),
                "dead letters = what failed, with its failure");
        c.expect(Witnesses.inState(ds, table, "running").isEmpty(), "no row left running");
        c.expect(!ready.isEmpty(), "the failure stopped the intake: some jobs were never pulled");

        SortedSet<Long> redelivered = new TreeSet<>();
        RunOutcome<Job> next = runToTheEnd(ds, table, poolPrefix(self) + "next", redelivered);
        c.fact("next run: claimed " + ids(redelivered) + ", " + summarize(next));
        c.expect(redelivered.equals(ready), "the next run gets exactly the jobs never pulled, not the dead letter");
        acknowledgedOnce(c, ds, table, jobs);
        c.expect(Witnesses.moreThanOnce(Witnesses.attemptsByJob(ds, table)).equals(Set.of(3L)),
                "only job 3 was attempted twice (its retry)");
    }

    /**
     * Two hundred jobs; a child JVM ({@link WitnessedRun}, four workers, a lease of a second) is
     * killed with SIGKILL once sixty attempts are witnessed. Then this process takes over, until
     * every row is done.
     */
    private static void killRecover(Checks c, Database db) throws Exception {
        Case self = CASES.get(2);
        String table = tableOf(self);
        DataSource ds = db.dataSource();
        int jobs = 200;
        try (JobTable t = JobTable.on(ds).table(table).open()) {
            Witnesses.create(ds, Dialect.POSTGRES, table);
            t.enqueue(payloads(jobs));
        }
        Path out = Files.createTempFile("drain-durable-child", ".out");
        Process child = new ProcessBuilder(javaCommand(), "--enable-preview", "-cp", db.childClassPath(),
                WitnessedRun.class.getName(),
                db.url(), table, Long.toString(KILL_LEASE.toMillis()), "4", "killed")
                .redirectErrorStream(true).redirectOutput(out.toFile())
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null"))).start();
        long killedAt;
        try {
            boolean reached = eventually(() -> !child.isAlive() || attempts(ds, table) >= 60);
            c.expect(reached && child.isAlive(), "the child was running when it was killed" + (child.isAlive() ? "" : " (its output: "
                    + tail(out) + ")"));
        } finally {
            child.destroyForcibly(); // SIGKILL: no shutdown hook, no finally, no close
            c.expect(child.waitFor(BOUND.toSeconds(), TimeUnit.SECONDS), "the child is gone");
            killedAt = System.nanoTime();
            Files.deleteIfExists(out);
        }
        c.expect(!child.isAlive() && child.exitValue() == 137, "the child died of SIGKILL (exit status 137)");
        int witnessedAtKill = Witnesses.attempts(ds, table);
        SortedSet<Long> held = Witnesses.inState(ds, table, "running");
        int doneAtKill = Witnesses.inState(ds, table, "done").size();

        // The takeover: its claims end when nothing is claimable, which the killed rows are not
        // until PostgreSQL has seen the killed session end (JT-3), so it runs until every row is done.
        boolean finished = false;
        long deadline = System.nanoTime() + BOUND.toNanos();
        while (!finished && System.nanoTime() < deadline) {
            WitnessedRun.drain(ds, table, KILL_LEASE, 4, poolPrefix(self) + "takeover");
            finished = Witnesses.inState(ds, table, "done").size() == jobs;
        }
        long recovery = System.nanoTime() - killedAt;
        c.fact("killed after " + witnessedAtKill + " attempts: " + doneAtKill + " jobs acknowledged, " + held.size()
                + " held by the killed process (" + ids(held) + ")");
        SortedSet<Long> twice = Witnesses.moreThanOnce(Witnesses.attemptsByJob(ds, table));
        c.fact("takeover: every job done " + seconds(recovery) + " after the kill (the killed session's end, at most a lease of "
                + seconds(KILL_LEASE.toNanos()) + ", then the rest); attempted twice: " + ids(twice));
        c.expect(finished, "every job done after the kill");
        c.expect(Witnesses.attemptsByJob(ds, table).size() == jobs, "every job attempted at least once (nothing lost)");
        acknowledgedOnce(c, ds, table, jobs);
        c.expect(held.containsAll(twice), "the jobs attempted twice were all held by the killed process");
    }

    // ---- what the cases share --------------------------------------------------------------------

    static List<String> payloads(int n) {
        return IntStream.rangeClosed(1, n).mapToObj(i -> "p" + i).toList();
    }

    /** Records an attempt at {@code job} in the witness, on a connection of its own. */
    private static void witness(DataSource ds, String table, Job job, String who) throws SQLException {
        try (Connection c = ds.getConnection()) {
            c.setAutoCommit(true);
            Witnesses.attempted(c, table, job, who);
        }
    }

    /** Runs a fresh owner's pool over what is claimable, to its end; {@return its outcome} */
    private static RunOutcome<Job> runToTheEnd(DataSource ds, String table, String poolName, Set<Long> handled)
            throws SQLException {
        try (JobTable t = JobTable.on(ds).table(table).ownerPrefix("next").open()) {
            WorkerPool<Job, Long> pool = WorkerPool.<Job, Long>builder(job -> {
                witness(ds, table, job, "next");
                synchronized (handled) {
                    handled.add(job.id());
                }
                return job.id();
            }).name(poolName).workers(2).settler(t.settler()).build();
            try (Stream<Job> claims = t.claims(); Results<Job, Long> results = pool.run(claims)) {
                readToTheEnd(results);
                return results.outcome().orElseThrow();
            }
        }
    }

    private static void readToTheEnd(Results<Job, Long> results) {
        try {
            results.forEachRemaining(r -> {});
        } catch (RuntimeException ended) {
            // PoolAborted, PoolFailure, PoolUnsettled: the outcome says which
        }
    }

    static void acknowledgedOnce(Checks c, DataSource ds, String table, int jobs) throws SQLException {
        Map<Long, Integer> acks = Witnesses.acknowledgementsByJob(ds, table);
        c.expect(acks.size() == jobs && acks.values().stream().allMatch(n -> n == 1),
                "each of the " + jobs + " jobs acknowledged exactly once (the trigger's log)");
    }

    private static String lastError(DataSource ds, String table, long id) throws SQLException {
        try (Connection c = ds.getConnection();
                PreparedStatement p = c.prepareStatement("SELECT last_error FROM " + table + " WHERE id = ?")) {
            p.setLong(1, id);
            try (ResultSet r = p.executeQuery()) {
                return r.next() ? String.valueOf(r.getString(1)) : "(no row)";
            }
        }
    }

    static int attempts(DataSource ds, String table) {
        try {
            return Witnesses.attempts(ds, table);
        } catch (SQLException e) {
            return 0; // not yet: the wait asks again
        }
    }

    private static String summarize(RunOutcome<Job> outcome) {
        return switch (outcome) {
            case RunOutcome.Completed<Job> done -> "completed";
            case RunOutcome.Failed<Job> f -> "failed (" + f.failures().size() + ")";
            case RunOutcome.Aborted<Job> a -> "aborted";
            case RunOutcome.Abandoned<Job> a -> "abandoned";
            case RunOutcome.SourceFailed<Job> s -> "source failed: " + s.cause();
            case RunOutcome.Crashed<Job> crashed -> "CRASHED: " + crashed.cause();
            case RunOutcome.Unsettled<Job> u -> summarize(u.ended()) + ", " + u.unsettled().size() + " UNSETTLED: " + u.cause();
        };
    }

    private static SortedSet<Long> all(int n) {
        SortedSet<Long> ids = new TreeSet<>();
        for (long i = 1; i <= n; i++) {
            ids.add(i);
        }
        return ids;
    }

    private static SortedSet<Long> minus(Collection<Long> from, Collection<Long> taken) {
        SortedSet<Long> rest = new TreeSet<>(from);
        rest.removeAll(taken);
        return rest;
    }

    /** {@return ids with runs shortened: {@code 1-3, 6, 9-12}, or {@code none}} */
    static String ids(Collection<Long> ids) {
        List<Long> sorted = new ArrayList<>(new TreeSet<>(ids));
        if (sorted.isEmpty()) {
            return "none";
        }
        StringBuilder text = new StringBuilder();
        for (int i = 0; i < sorted.size(); ) {
            int j = i;
            while (j + 1 < sorted.size() && sorted.get(j + 1) == sorted.get(j) + 1) {
                j++;
            }
            text.append(text.isEmpty() ? "" : ", ").append(sorted.get(i));
            if (j > i + 1) {
                text.append('-').append(sorted.get(j));
            } else if (j == i + 1) {
                text.append(", ").append(sorted.get(j));
            }
            i = j + 1;
        }
        return text.toString();
    }

    static String seconds(long nanos) {
        return String.format(java.util.Locale.ROOT, "%.2f s", nanos / 1e9);
    }

    static String javaCommand() {
        return Path.of(System.getProperty("java.home"), "bin", "java").toString();
    }

    static String tail(Path file) {
        try {
            String text = Files.readString(file);
            return text.length() <= 400 ? text : "…" + text.substring(text.length() - 400);
        } catch (IOException e) {
            return "(unreadable: " + e + ")";
        }
    }

    /** Polls {@code condition} until it holds or {@link #BOUND} has passed; {@return whether it held} */
    static boolean eventually(BooleanSupplier condition) {
        long deadline = System.nanoTime() + BOUND.toNanos();
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                return false;
            }
            try {
                Thread.sleep(5); // a poll, not a synchronisation: the condition decides
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return false;
            }
        }
        return true;
    }

    /**
     * {@return how many live threads of the JVM, virtual ones included, have a name containing
     * {@code fragment}}: read from a plain-text thread dump, which lists every thread.
     */
    static int threadsNamed(String fragment) {
        try {
            Path dump = Files.createTempFile("drain-durable-threads", ".txt");
            try {
                Files.delete(dump); // dumpThreads refuses to overwrite
                ManagementFactory.getPlatformMXBean(HotSpotDiagnosticMXBean.class)
                        .dumpThreads(dump.toString(), HotSpotDiagnosticMXBean.ThreadDumpFormat.TEXT_PLAIN);
                try (Stream<String> lines = Files.lines(dump)) {
                    return (int) lines.filter(l -> l.startsWith("#") && l.contains("\"") && l.contains(fragment)).count();
                }
            } finally {
                Files.deleteIfExists(dump);
            }
        } catch (IOException e) {
            throw new IllegalStateException("no thread dump: " + e, e);
        }
    }

    // ---- the output ------------------------------------------------------------------------------------

    private static void print(PrintStream out, int width, String server, List<Result> results) {
        List<String> lines = new ArrayList<>();
        lines.add("");
        wrap(lines, "Durable cases: a pool whose settler is a job table, on " + server + ". The witnesses are"
                + " outside the adapter: the handler's own row per attempt, and a trigger's row per acknowledgement.",
                "", width);
        for (Result r : results) {
            lines.add("");
            lines.add((r.passed() ? "✓ " : "✗ ") + r.c().name() + "  (" + r.c().proves() + ", " + r.millis() + " ms)");
            wrap(lines, r.c().shows(), "    ", width);
            for (String fact : r.facts()) {
                wrap(lines, fact, "    ", width);
            }
            for (Check check : r.checks()) {
                wrap(lines, (check.holds() ? "✓ " : "✗ ") + check.what(), "      ", width);
            }
        }
        long held = results.stream().filter(Result::passed).count();
        lines.add("");
        lines.add((held == results.size() ? "✓ " : "✗ ") + held + " of " + results.size()
                + " durable cases hold (target/contract-report-durable.json)");
        for (String line : lines) {
            out.println(line);
        }
    }

    /** Adds {@code text} to {@code lines}, wrapped at spaces to {@code width}, every line after {@code indent}. */
    static void wrap(List<String> lines, String text, String indent, int width) {
        int room = Math.max(20, width - indent.length());
        String rest = text;
        String hang = "";
        while (rest.codePointCount(0, rest.length()) + hang.length() > room) {
            int cut = rest.lastIndexOf(' ', rest.offsetByCodePoints(0, room - hang.length()));
            if (cut <= 0) {
                cut = rest.offsetByCodePoints(0, room - hang.length());
            }
            lines.add(indent + hang + rest.substring(0, cut).stripTrailing());
            rest = rest.substring(cut).stripLeading();
            hang = "  ";
        }
        lines.add(indent + hang + rest);
    }

    private static String json(String server, List<Result> results) {
        StringBuilder json = new StringBuilder("{\n  \"server\": ").append(Json.quote(server)).append(",\n  \"cases\": [");
        for (int i = 0; i < results.size(); i++) {
            Result r = results.get(i);
            json.append(i == 0 ? "\n" : ",\n").append("    {\"case\": ").append(Json.quote(r.c().name()))
                    .append(", \"shows\": ").append(Json.quote(r.c().shows()))
                    .append(", \"proves\": ").append(Json.quote(r.c().proves()))
                    .append(", \"passed\": ").append(r.passed())
                    .append(", \"millis\": ").append(r.millis())
                    .append(",\n     \"facts\": [").append(String.join(", ", r.facts().stream().map(Json::quote).toList()))
                    .append("],\n     \"checks\": [");
            for (int k = 0; k < r.checks().size(); k++) {
                Check check = r.checks().get(k);
                json.append(k == 0 ? "" : ", ").append("{\"check\": ").append(Json.quote(check.what()))
                        .append(", \"holds\": ").append(check.holds()).append('}');
            }
            json.append("]}");
        }
        return json.append("\n  ]\n}\n").toString();
    }
}
