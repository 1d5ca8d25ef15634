package dev.drain.jobtable;

import static org.assertj.core.api.Assertions.assertThat;

import dev.drain.jobtable.witness.WitnessedService;
import dev.drain.jobtable.witness.Witnesses;
import dev.drain.support.Bounds;
import dev.drain.support.ChildJvm;
import dev.drain.support.Waits;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.SortedSet;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.stream.LongStream;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * JT-10: a child JVM serves a job table as a user's service does ({@link WitnessedService}: the
 * keep-going setting, a backoff, {@code StopOnShutdown}) and receives SIGTERM at a random moment
 * (once a random number of jobs has been witnessed); this JVM watches it exit, reads the books,
 * then finishes the table. The witnesses are outside the adapter: the handler's row per job done,
 * committed before it returns, and a trigger's row per acknowledgement. {@code -Djt.sigterms=N}
 * sets how many SIGTERMs per dialect (the heavy profile asks more), {@code -Djt.seed} the seed.
 */
@ParameterizedClass
@EnumSource(Dialect.class)
@ExtendWith(Engines.Extension.class)
class JobTableDeployTest {
    static final long SEED = Long.getLong("jt.seed", 20261207L);
    static final int SIGTERMS = Integer.getInteger("jt.sigterms", 2);
    static final int JOBS = 1_000;
    /** The jobs that are not malformed: ids 1 to {@link #JOBS}, less one in 97. */
    static final List<Long> GOOD = LongStream.rangeClosed(1, JOBS).boxed().filter(id -> !WitnessedService.malformed(id)).toList();
    static final int WORKERS = 4;
    static final Duration LEASE = Duration.ofSeconds(1);
    static final Duration DEADLINE = Duration.ofSeconds(3);
    static final Duration GRACE = Duration.ofSeconds(1);
    /** What the JVM's own exit may add to the deadline and the grace: starting the hook, halting, a loaded machine. */
    static final Duration EXIT = Duration.ofSeconds(3);

    private final Dialect dialect;

    @TempDir
    Path dir;

    JobTableDeployTest(Dialect dialect) {
        this.dialect = dialect;
    }

    /** What the table and the witnesses said when the child had exited. */
    private record AtExit(long exitMillis, SortedSet<Long> witnessed, SortedSet<Long> done, SortedSet<Long> dead,
            SortedSet<Long> running) {}

    /**
     * JT-10, WP-27, WP-23, WP-28: SIGTERM at random moments: each time the service exits by itself
     * within the deadline, every job it did is acknowledged once and nothing it did not do is,
     * nothing stays held, and the run that takes over handles exactly the rest.
     */
    @Test
    void aSigtermAtAnyMomentAcknowledgesEveryJobDoneAndNothingTwice(Engines engines) throws Exception {
        DataSource db = engines.dataSource(dialect);
        Random random = new Random(SEED + dialect.name().hashCode());
        List<AtExit> rounds = new ArrayList<>();
        for (int round = 0; round < SIGTERMS; round++) {
            String table = Engines.freshTable("deploy");
            AtExit atExit = serveAndSigterm(engines, table, 1 + random.nextInt(JOBS * 2 / 3), -1);
            rounds.add(atExit);
            assertThat(atExit.exitMillis()).as("SIGTERM to exit, ms (the stop had nothing slow to wait for)")
                    .isLessThanOrEqualTo(DEADLINE.plus(EXIT).toMillis());
            assertThat(atExit.done()).as("jobs acknowledged by the service = jobs it did").isEqualTo(atExit.witnessed())
                    .as("the SIGTERM came in the middle of the backlog").hasSizeLessThan(GOOD.size());
            assertThat(atExit.running()).as("jobs left held by the stopped service").isEmpty();
            assertThat(atExit.dead()).as("jobs dead: malformed ones only").allMatch(WitnessedService::malformed);
            finishAndCheckTheBooks(db, table, new TreeSet<>());
        }
        writeFigures(rounds);
    }

    /** The SIGTERMs' figures, for the notes: target/jobtable-deploys-DIALECT.md. */
    private void writeFigures(List<AtExit> rounds) throws IOException {
        StringBuilder md = new StringBuilder("| SIGTERM | jobs done at the exit | SIGTERM to exit (ms) |\n| --- | --- | --- |\n");
        for (int i = 0; i < rounds.size(); i++) {
            md.append("| ").append(i + 1).append(" | ").append(rounds.get(i).done().size()).append(" | ")
                    .append(rounds.get(i).exitMillis()).append(" |\n");
        }
        Files.createDirectories(Path.of("target"));
        Files.writeString(Path.of("target", "jobtable-deploys-" + dialect.name().toLowerCase(java.util.Locale.ROOT) + ".md"),
                "JobTableDeployTest, " + rounds.size() + " SIGTERMs, " + JOBS + " jobs, " + WORKERS + " workers, deadline " + DEADLINE
                        + ", grace " + GRACE + ", seed " + SEED + "\n\n" + md);
    }

    /**
     * JT-10, WP-24, JT-3: SIGTERM to a service whose job 2 ignores every interrupt: the stop turns
     * into an abort at the deadline, the process exits by itself once the grace has passed, job 2
     * is neither done nor acknowledged, every other job the service did is acknowledged once, and
     * the run that takes over (after job 2's lease) handles exactly the rest.
     */
    @Test
    void aSigtermPastAStubbornJobExitsAtDeadlinePlusGraceAndLosesNothing(Engines engines) throws Exception {
        DataSource db = engines.dataSource(dialect);
        Random random = new Random(SEED + 1 + dialect.name().hashCode());
        String table = Engines.freshTable("stubborn");
        AtExit atExit = serveAndSigterm(engines, table, 10 + random.nextInt(JOBS / 2), 2);
        assertThat(atExit.exitMillis()).as("SIGTERM to exit, ms: not before the deadline, not after deadline + grace + the JVM's exit")
                .isBetween(DEADLINE.toMillis(), DEADLINE.plus(GRACE).plus(EXIT).toMillis());
        assertThat(atExit.witnessed()).as("jobs the service did").doesNotContain(2L);
        assertThat(atExit.done()).as("jobs acknowledged by the service = jobs it did").isEqualTo(atExit.witnessed());
        assertThat(atExit.running()).as("jobs left held: the stubborn one's, at most").isSubsetOf(2L);
        finishAndCheckTheBooks(db, table, new TreeSet<>(List.of(2L)));
    }

    /**
     * Fills {@code table}, starts the service, sends it SIGTERM once {@code after} jobs are
     * witnessed, and waits (bounded) for it to exit; {@return the books at its exit}
     */
    private AtExit serveAndSigterm(Engines engines, String table, int after, long stubborn) throws Exception {
        DataSource db = engines.dataSource(dialect);
        try (JobTable t = JobTable.on(db).table(table).open()) {
            Witnesses.create(db, dialect, table);
            t.enqueue(Rows.payloads(JOBS));
        }
        Path out = dir.resolve(table + ".out");
        Path err = dir.resolve(table + ".err");
        Process child = ChildJvm.start(List.of("--enable-preview"), out, err, WitnessedService.class, engines.jdbcUrl(dialect),
                table, Long.toString(LEASE.toMillis()), Integer.toString(WORKERS), "svc", Long.toString(DEADLINE.toMillis()),
                Long.toString(GRACE.toMillis()), Long.toString(stubborn));
        long exitNanos = ChildJvm.sigtermOnceReady(child, () -> Waits.until(after + " jobs witnessed, or the child gone",
                () -> !child.isAlive() || witnessed(db, table) >= after), DEADLINE.plus(GRACE).plus(Bounds.WAIT), err);
        assertThat(child.exitValue()).as("exit status after SIGTERM (128 + 15); its errors: %s", ChildJvm.output(err)).isEqualTo(143);
        return new AtExit(TimeUnit.NANOSECONDS.toMillis(exitNanos), new TreeSet<>(Witnesses.attemptsByJob(db, table).keySet()),
                Rows.inState(db, table, "done"), Rows.inState(db, table, "dead"), Rows.inState(db, table, "running"));
    }

    /**
     * Finishes the table in this JVM, then checks the books: every job done or dead (nothing
     * lost), the malformed ones dead, each acknowledged once, and no job done twice (a stubborn
     * job was never done by the service).
     */
    private static void finishAndCheckTheBooks(DataSource db, String table, SortedSet<Long> stubborn) throws Exception {
        Waits.until("every job done or dead", () -> {
            try {
                WitnessedService.finish(db, table, LEASE, WORKERS, "finisher");
                return Rows.inState(db, table, "ready").isEmpty() && Rows.inState(db, table, "running").isEmpty();
            } catch (Exception e) {
                throw new AssertionError(e);
            }
        });
        List<Long> malformed = LongStream.rangeClosed(1, JOBS).boxed().filter(WitnessedService::malformed).toList();
        Map<Long, Integer> done = Witnesses.attemptsByJob(db, table);
        assertThat(Rows.inState(db, table, "dead")).as("dead: the malformed jobs").containsExactlyElementsOf(malformed);
        assertThat(done.keySet()).as("jobs done (nothing lost)").containsExactlyInAnyOrderElementsOf(GOOD);
        assertThat(Witnesses.moreThanOnce(done)).as("jobs done twice").isEmpty();
        assertThat(Witnesses.acknowledgementsByJob(db, table).values()).as("acknowledgements per job (none twice)")
                .hasSize(JOBS).containsOnly(1);
        assertThat(stubborn).as("the stubborn job, done by the finisher").allMatch(done::containsKey);
    }

    private static int witnessed(DataSource db, String table) {
        try {
            return Witnesses.attempts(db, table);
        } catch (SQLException e) {
            throw new AssertionError(e);
        }
    }
}
