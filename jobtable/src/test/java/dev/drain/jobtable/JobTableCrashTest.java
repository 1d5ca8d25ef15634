package dev.drain.jobtable;

import static org.assertj.core.api.Assertions.assertThat;

import dev.drain.jobtable.witness.HaltingRun;
import dev.drain.jobtable.witness.WitnessedRun;
import dev.drain.jobtable.witness.Witnesses;
import dev.drain.support.Bounds;
import dev.drain.support.ChildJvm;
import dev.drain.support.Waits;
import java.io.File;
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
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * JT-9, JT-13: a child JVM runs a pool over a job table ({@link WitnessedRun}; every other killed
 * child over the waiting stream, {@code claimsUntilStopped()}) and is killed with SIGKILL
 * ({@code Process.destroyForcibly}) once a random number of jobs has been witnessed; this JVM
 * then finishes the table. The witnesses are outside the adapter: the handler's own row per
 * attempt, and a trigger that logs every acknowledgement. {@code -Djt.kills=N} sets how many
 * kills per dialect (the heavy profile asks 100), {@code -Djt.seed} the seed.
 */
@ParameterizedClass
@EnumSource(Dialect.class)
@ExtendWith(Engines.Extension.class)
class JobTableCrashTest {
    static final long SEED = Long.getLong("jt.seed", 20261203L);
    static final int KILLS = Integer.getInteger("jt.kills", 3);
    static final int RESCUES = Integer.getInteger("jt.rescues", 1);
    static final int JOBS = 300;
    static final int WORKERS = 4;
    static final Duration LEASE = Duration.ofSeconds(1);

    private final Dialect dialect;

    JobTableCrashTest(Dialect dialect) {
        this.dialect = dialect;
    }

    /** What one kill showed. */
    record Kill(int witnessedAtKill, int heldAtKill, int doneAtKill, int handledTwice, long recoveryMillis) {}

    /** JT-9, JT-3, JT-13: after a kill -9 at a random moment (of a batch stream's run, or a waiting stream's) and a run that takes over, every job was handled, none acknowledged twice, and the jobs handled twice were held by the killed process. */
    @Test
    void aKilledProcessLosesNothingAndAcknowledgesNothingTwice(Engines engines) throws Exception {
        DataSource db = engines.dataSource(dialect);
        String url = engines.jdbcUrl(dialect);
        Random random = new Random(SEED + dialect.name().hashCode());
        List<Kill> kills = new ArrayList<>();
        for (int k = 0; k < KILLS; k++) {
            // every other child serves a waiting stream (JT-13), the service's, which a kill ends as well
            kills.add(killAndRecover(db, url, Engines.freshTable("killed"), 1 + random.nextInt(JOBS * 2 / 3), k % 2 == 1));
        }
        assertThat(kills).as("kills").hasSize(KILLS)
                .allSatisfy(kill -> assertThat(kill.handledTwice()).isLessThanOrEqualTo(kill.heldAtKill()));
        writeFigures(kills);
    }

    /** The kills' figures, for the notes: target/jobtable-kills-DIALECT.md. */
    private void writeFigures(List<Kill> kills) throws IOException {
        StringBuilder md = new StringBuilder("| kill | witnessed at the kill | held at the kill | done at the kill | handled twice"
                + " | kill to all done (ms) |\n| --- | --- | --- | --- | --- | --- |\n");
        for (int i = 0; i < kills.size(); i++) {
            Kill k = kills.get(i);
            md.append("| ").append(i + 1).append(" | ").append(k.witnessedAtKill()).append(" | ").append(k.heldAtKill())
                    .append(" | ").append(k.doneAtKill()).append(" | ").append(k.handledTwice()).append(" | ")
                    .append(k.recoveryMillis()).append(" |\n");
        }
        Files.createDirectories(Path.of("target"));
        Files.writeString(Path.of("target", "jobtable-kills-" + dialect.name().toLowerCase(java.util.Locale.ROOT) + ".md"),
                "JobTableCrashTest, " + kills.size() + " kills, " + JOBS + " jobs, " + WORKERS + " workers, lease " + LEASE
                        + ", seed " + SEED + "\n\n" + md);
    }

    private Kill killAndRecover(DataSource db, String url, String table, int killAfter, boolean waiting) throws Exception {
        try (JobTable t = JobTable.on(db).table(table).open()) {
            Witnesses.create(db, dialect, table);
            t.enqueue(Rows.payloads(JOBS));
        }
        Path out = Files.createTempFile("drain-crash-child", ".out");
        try {
            Process child = startChild(url, table, "child", out, LEASE, waiting);
            try {
                Waits.until(killAfter + " jobs witnessed, or the child gone", () -> !child.isAlive() || witnessed(db, table) >= killAfter);
                assertThat(child.isAlive()).as("the child, before its kill (its output: %s)", ChildJvm.output(out)).isTrue();
            } finally {
                child.destroyForcibly(); // SIGKILL: no shutdown hook, no finally, no close
                assertThat(child.waitFor(Bounds.WAIT.toNanos(), TimeUnit.NANOSECONDS)).as("the child killed").isTrue();
            }
            assertThat(child.exitValue()).as("the child's exit status").isEqualTo(137);
        } finally {
            Files.deleteIfExists(out);
        }
        long killedAt = System.nanoTime();
        int witnessedAtKill = witnessed(db, table);
        SortedSet<Long> held = Rows.inState(db, table, "running");
        int doneAtKill = Rows.inState(db, table, "done").size();

        // The takeover: its claims end when nothing is claimable, which the killed rows are not
        // until their leases run out, so it runs until every row is done.
        long[] done = {0};
        Waits.until("every job done after the kill", () -> {
            try {
                done[0] += WitnessedRun.drain(db, table, LEASE, WORKERS, "parent");
                return Rows.inState(db, table, "done").size() == JOBS;
            } catch (Exception e) {
                throw new AssertionError(e);
            }
        });
        long recoveryMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killedAt);

        Map<Long, Integer> handled = Witnesses.attemptsByJob(db, table);
        Map<Long, Integer> acknowledged = Witnesses.acknowledgementsByJob(db, table);
        assertThat(handled.keySet()).as("jobs handled at least once (nothing lost)").hasSize(JOBS);
        assertThat(acknowledged.values()).as("acknowledgements per job (none twice)").hasSize(JOBS).containsOnly(1);
        assertThat(Rows.inState(db, table, "done")).as("done rows").hasSize(JOBS);
        assertThat(done[0] + doneAtKill).as("done by the parent + done before the kill").isEqualTo(JOBS);
        SortedSet<Long> twice = Witnesses.moreThanOnce(handled);
        assertThat(held).as("rows held at the kill").containsAll(twice);
        assertThat(recoveryMillis).as("kill to all done, ms (the lease, then the work left)").isLessThan(5 * LEASE.toMillis());
        return new Kill(witnessedAtKill, held.size(), doneAtKill, twice.size(), recoveryMillis);
    }

    /**
     * JT-9, JT-2, JT-4, JT-13: three processes drain one table at once, two over the waiting stream
     * (the killed one among them) and one over a batch stream, and one of them is killed: every job
     * handled, none acknowledged twice, every row the killed one held taken again only once its
     * lease was lost, and a job handled twice only where a lease was lost: the killed one's rows,
     * or, on a machine so loaded that a survivor missed its renewals for a whole lease, that
     * survivor's (JT-4: its late acknowledgement is then a fenced no-op). The batch process ends
     * when it finds nothing to claim; the waiting one serves until every job is done, and SIGTERM
     * then stops its run, which completes.
     */
    @Test
    void processesSharingATableLoseNothingWhenOneIsKilled(Engines engines) throws Exception {
        DataSource db = engines.dataSource(dialect);
        String url = engines.jdbcUrl(dialect);
        String table = Engines.freshTable("shared");
        try (JobTable t = JobTable.on(db).table(table).open()) {
            Witnesses.create(db, dialect, table);
            t.enqueue(Rows.payloads(JOBS));
        }
        List<Process> children = new ArrayList<>();
        List<Path> outs = new ArrayList<>();
        SortedSet<Long> heldByTheKilled;
        try {
            for (int i = 0; i < 3; i++) {
                outs.add(Files.createTempFile("drain-shared-child", ".out"));
                children.add(startChild(url, table, "child" + i, outs.get(i), LEASE, i < 2)); // child2's stream ends when empty
            }
            Process victim = children.get(1);
            Waits.until("a third of the jobs witnessed", () -> witnessed(db, table) >= JOBS / 3);
            victim.destroyForcibly();
            assertThat(victim.waitFor(Bounds.WAIT.toNanos(), TimeUnit.NANOSECONDS)).as("the victim killed").isTrue();
            heldByTheKilled = heldBy(db, table, "child1-");
            Process batch = children.get(2);
            assertThat(batch.waitFor(Bounds.WAIT.toNanos(), TimeUnit.NANOSECONDS)).as("the batch child ended").isTrue();
            assertThat(batch.exitValue()).as("the batch child's exit status (its output: %s)", ChildJvm.output(outs.get(2))).isZero();
            Process waiting = children.get(0);
            Waits.until("every job done by the waiting child", () -> {
                try {
                    return Rows.inState(db, table, "done").size() == JOBS;
                } catch (SQLException e) {
                    throw new AssertionError(e);
                }
            });
            waiting.destroy(); // SIGTERM: its run stops, settles and the process exits
            assertThat(waiting.waitFor(Bounds.WAIT.toNanos(), TimeUnit.NANOSECONDS)).as("the waiting child stopped").isTrue();
            assertThat(waiting.exitValue()).as("the waiting child's exit status (128 + 15)").isEqualTo(143);
            assertThat(ChildJvm.output(outs.get(0))).as("how the waiting child's run ended").contains("ended Completed[stopRequested=true");
        } finally {
            for (Process child : children) {
                child.destroyForcibly();
                assertThat(child.waitFor(Bounds.WAIT.toNanos(), TimeUnit.NANOSECONDS)).as("every child gone").isTrue();
            }
            for (Path out : outs) {
                Files.deleteIfExists(out);
            }
        }
        Waits.until("every job done after the kill", () -> {
            try {
                WitnessedRun.drain(db, table, LEASE, WORKERS, "parent");
                return Rows.inState(db, table, "done").size() == JOBS;
            } catch (Exception e) {
                throw new AssertionError(e);
            }
        });
        Map<Long, Integer> handled = Witnesses.attemptsByJob(db, table);
        Map<Long, Integer> acknowledged = Witnesses.acknowledgementsByJob(db, table);
        assertThat(handled.keySet()).as("jobs handled at least once (nothing lost)").hasSize(JOBS);
        assertThat(acknowledged.values()).as("acknowledgements per job (none twice)").hasSize(JOBS).containsOnly(1);
        SortedSet<Long> twice = Witnesses.moreThanOnce(handled);
        SortedSet<Long> lostALease = new TreeSet<>();
        Rows.all(db, table).values().forEach(row -> {
            if (row.lostLeases() > 0) {
                lostALease.add(row.id());
            }
        });
        assertThat(lostALease).as("rows whose lease was lost").containsAll(heldByTheKilled);
        SortedSet<Long> stalled = new TreeSet<>(lostALease);
        stalled.removeAll(heldByTheKilled);
        assertThat(lostALease).as("rows whose lease was lost (the killed process held %s; a survivor that stalled "
                + "past its lease held %s)", heldByTheKilled, stalled).containsAll(twice);
    }

    /**
     * JT-3, JT-9: on PostgreSQL a killed process's rows are claimable as soon as its session ends
     * (its owner's advisory lock with it), long before their 30 s lease: the time from the kill
     * until every row it held is claimable is under a third of the lease, and a run that takes over
     * finishes the table, nothing lost, nothing acknowledged twice. {@code -Djt.rescues=N} kills
     * (the heavy profile asks 100); the figures (median, 99th percentile, worst) go to
     * target/jobtable-rescue.md.
     */
    @Test
    void aKilledProcessesRowsAreClaimableLongBeforeTheirLease(Engines engines) throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(dialect == Dialect.POSTGRES, "H2 has no sessions to watch: its rows wait for their lease");
        Duration lease = Duration.ofSeconds(30);
        List<Long> rescues = new ArrayList<>();
        for (int k = 0; rescues.size() < RESCUES && k < 3 * RESCUES; k++) {
            long millis = killAndRescue(engines, lease);
            if (millis >= 0) {
                rescues.add(millis);
            }
        }
        assertThat(rescues).as("kills that left rows held (a kill between two claims leaves none)").hasSize(RESCUES);
        List<Long> sorted = rescues.stream().sorted().toList();
        Files.createDirectories(Path.of("target"));
        Files.writeString(Path.of("target", "jobtable-rescue.md"), "JobTableCrashTest, PostgreSQL, lease " + lease + ", " + RESCUES
                + " kills: kill -9 to every held row claimable, ms: median " + sorted.get(sorted.size() / 2) + ", p99 "
                + sorted.get(Math.min(sorted.size() - 1, (int) Math.ceil(sorted.size() * 0.99) - 1)) + ", worst " + sorted.getLast() + "\n");
    }

    /**
     * One kill of a child holding rows under {@code lease}; {@return the time until they were all
     * claimable, in ms, or -1 if the child held none when it was killed} The table is finished in
     * either case, and checked: nothing lost, nothing acknowledged twice.
     */
    private long killAndRescue(Engines engines, Duration lease) throws Exception {
        DataSource db = engines.dataSource(dialect);
        String table = Engines.freshTable("rescued");
        long rescueMillis;
        try (JobTable observer = JobTable.on(db).table(table).open()) {
            Witnesses.create(db, dialect, table);
            observer.enqueue(Rows.payloads(JOBS));
            Path out = Files.createTempFile("drain-rescued-child", ".out");
            SortedSet<Long> held;
            long killedAt;
            try {
                Process child = startChild(engines.jdbcUrl(dialect), table, "child", out, lease, true);
                try {
                    Waits.until("50 jobs witnessed, or the child gone", () -> !child.isAlive() || witnessed(db, table) >= 50);
                    assertThat(child.isAlive()).as("the child, before its kill (its output: %s)", ChildJvm.output(out)).isTrue();
                } finally {
                    child.destroyForcibly();
                    assertThat(child.waitFor(Bounds.WAIT.toNanos(), TimeUnit.NANOSECONDS)).as("the child killed").isTrue();
                }
                killedAt = System.nanoTime();
                held = Rows.inState(db, table, "running");
            } finally {
                Files.deleteIfExists(out);
            }
            if (held.isEmpty()) {
                rescueMillis = -1; // killed between two claims: nothing to rescue, and nothing to measure
            } else {
                Waits.untilLookingEvery(Duration.ofMillis(5), "every row the killed process held claimable", () -> {
                    try {
                        return observer.operations().backlog().expired() == held.size();
                    } catch (SQLException e) {
                        throw new AssertionError(e);
                    }
                });
                rescueMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killedAt);
                assertThat(rescueMillis).as("kill to claimable, ms, against a lease of %s", lease).isLessThan(lease.toMillis() / 3);
            }
            Waits.until("every job done after the kill", () -> {
                try {
                    WitnessedRun.drain(db, table, lease, WORKERS, "parent");
                    return Rows.inState(db, table, "done").size() == JOBS;
                } catch (Exception e) {
                    throw new AssertionError(e);
                }
            });
        }
        assertThat(Witnesses.attemptsByJob(db, table).keySet()).as("jobs handled at least once (nothing lost)").hasSize(JOBS);
        assertThat(Witnesses.acknowledgementsByJob(db, table).values()).as("acknowledgements per job (none twice)").hasSize(JOBS)
                .containsOnly(1);
        return rescueMillis;
    }

    /**
     * JT-3: a job that halts its JVM is charged with its deaths alone: the jobs its process held
     * beside it (claimed, not yet run) become suspects, each taken later on its own, and are done;
     * only the halting job is dead-lettered, after {@code maxLostLeases} (3) deaths.
     */
    @Test
    void aJobThatHaltsItsProcessIsBuriedAloneNotTheJobsBesideIt(Engines engines) throws Exception {
        DataSource db = engines.dataSource(dialect);
        String table = Engines.freshTable("halting");
        List<Long> ids;
        try (JobTable t = JobTable.on(db).table(table).open()) {
            ids = t.enqueue(List.of("a", "halt", "b", "c", "d"));
        }
        List<Integer> exits = new ArrayList<>();
        Path out = Files.createTempFile("drain-halting-child", ".out");
        String lastOutput;
        try {
            while (exits.size() < 6 && !exits.contains(0)) {
                Waits.until("no live lease on the table", () -> live(db, table) == 0);
                Process child = ChildJvm.start(List.of("--enable-preview"), out, out, HaltingRun.class, engines.jdbcUrl(dialect), table,
                        Long.toString(LEASE.toMillis()));
                try {
                    assertThat(child.waitFor(Bounds.WAIT.toNanos(), TimeUnit.NANOSECONDS)).as("a child ended").isTrue();
                } finally {
                    child.destroyForcibly();
                }
                exits.add(child.exitValue());
            }
            lastOutput = ChildJvm.output(out);
        } finally {
            Files.deleteIfExists(out);
        }
        assertThat(exits).as("the children's exits: halted by the job three times, then the table drained (last output: %s)",
                lastOutput).containsExactly(HaltingRun.HALTED, HaltingRun.HALTED, HaltingRun.HALTED, 0);
        Map<Long, Rows.Row> rows = Rows.all(db, table);
        assertThat(rows.get(ids.get(1))).as("the halting job").satisfies(row -> {
            assertThat(row.state()).isEqualTo("dead");
            assertThat(row.lastError()).startsWith("lost 3 leases");
        });
        assertThat(List.of(ids.get(0), ids.get(2), ids.get(3), ids.get(4))).as("the jobs beside it")
                .allSatisfy(id -> assertThat(rows.get(id)).extracting(Rows.Row::state).isEqualTo("done"));
    }

    /** {@return how many rows of {@code table} are running under a lease that has not run out} */
    private int live(DataSource db, String table) {
        try {
            return Rows.inState(db, table, "running").size() - Rows.expired(db, table, dialect);
        } catch (SQLException e) {
            throw new AssertionError(e);
        }
    }

    private static Process startChild(String url, String table, String who, Path out, Duration lease, boolean waiting) throws IOException {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        String classPath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        return new ProcessBuilder(java, "--enable-preview", "-cp", classPath, WitnessedRun.class.getName(), url, table,
                Long.toString(lease.toMillis()), Integer.toString(WORKERS), who, waiting ? "waiting" : "claims")
                .redirectErrorStream(true).redirectOutput(out.toFile())
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null"))).start();
    }

    /** {@return the rows running under an owner whose name starts with {@code prefix}} */
    private static SortedSet<Long> heldBy(DataSource db, String table, String prefix) throws SQLException {
        SortedSet<Long> held = new TreeSet<>();
        for (Rows.Row row : Rows.all(db, table).values()) {
            String owner = row.owner();
            if (row.state().equals("running") && owner != null && owner.startsWith(prefix)) {
                held.add(row.id());
            }
        }
        return held;
    }

    private static int witnessed(DataSource db, String table) {
        try {
            return Witnesses.attempts(db, table);
        } catch (SQLException e) {
            throw new AssertionError(e);
        }
    }
}
