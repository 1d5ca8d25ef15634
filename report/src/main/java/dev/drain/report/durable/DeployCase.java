package dev.drain.report.durable;

import dev.drain.jobtable.Dialect;
import dev.drain.jobtable.JobTable;
import dev.drain.jobtable.witness.WitnessedService;
import dev.drain.jobtable.witness.Witnesses;
import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.SortedSet;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.stream.LongStream;
import javax.sql.DataSource;

/**
 * The durable case {@code deploy} (JT-10, WP-27, WP-24): a child JVM serves a job table as a
 * user's service does ({@link WitnessedService}: {@code forEach}, going on past its malformed
 * jobs, a backoff for its flaky ones, {@code StopOnShutdown} with a deadline of 2 s and a grace of
 * 1 s), and job 2's handler ignores every interrupt. Once a hundred jobs are done, the case sends
 * the child SIGTERM, as a deploy does. The stop is graceful until the deadline, which job 2 holds
 * it to, then an abort; the child must exit by itself, and the table must hold exactly what it
 * did. Then this process finishes the table, job 2 once its lease has run out.
 */
final class DeployCase {
    private DeployCase() {}

    static final Duration DEADLINE = Duration.ofSeconds(2);
    static final Duration GRACE = Duration.ofSeconds(1);
    /** What the JVM's own exit may add to the deadline and the grace before the case calls it late. */
    static final Duration EXIT = Duration.ofSeconds(2);
    static final long STUBBORN = 2;
    static final int JOBS = 300;
    static final int SIGTERM_AFTER = 100;

    static void run(DurableReport.Checks c, DurableReport.Database db, String table, String poolPrefix) throws Exception {
        DataSource ds = db.dataSource();
        try (JobTable t = JobTable.on(ds).table(table).open()) {
            Witnesses.create(ds, Dialect.POSTGRES, table);
            t.enqueue(DurableReport.payloads(JOBS));
        }
        Path out = Files.createTempFile("drain-deploy-child", ".out");
        Process child = new ProcessBuilder(DurableReport.javaCommand(), "--enable-preview", "-cp", db.childClassPath(),
                WitnessedService.class.getName(), db.url(), table, Long.toString(DurableReport.KILL_LEASE.toMillis()), "4",
                poolPrefix + "service", Long.toString(DEADLINE.toMillis()), Long.toString(GRACE.toMillis()), Long.toString(STUBBORN))
                .redirectErrorStream(true).redirectOutput(out.toFile())
                .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null"))).start();
        long tookNanos;
        boolean exited;
        try {
            boolean reached = DurableReport.eventually(() -> !child.isAlive() || DurableReport.attempts(ds, table) >= SIGTERM_AFTER);
            c.expect(reached && child.isAlive(), "the service was running when it was sent SIGTERM" + (child.isAlive() ? ""
                    : " (its output: " + DurableReport.tail(out) + ")"));
            long sent = System.nanoTime();
            child.destroy(); // SIGTERM, as a deploy sends it
            exited = child.waitFor(DEADLINE.plus(GRACE).plus(DurableReport.BOUND).toNanos(), TimeUnit.NANOSECONDS);
            tookNanos = System.nanoTime() - sent;
        } finally {
            if (child.isAlive()) {
                child.destroyForcibly().waitFor(DurableReport.BOUND.toSeconds(), TimeUnit.SECONDS);
            }
            Files.deleteIfExists(out);
        }
        c.expect(exited && child.exitValue() == 143, "the service exited by itself, of SIGTERM (exit status 143)");
        c.fact("SIGTERM once " + SIGTERM_AFTER + " jobs were done; the service exited " + DurableReport.seconds(tookNanos)
                + " later (deadline " + DurableReport.seconds(DEADLINE.toNanos()) + ", grace " + DurableReport.seconds(GRACE.toNanos())
                + "; job " + STUBBORN + " ignores interrupts)");
        c.expect(tookNanos >= DEADLINE.toNanos() && tookNanos <= DEADLINE.plus(GRACE).plus(EXIT).toNanos(),
                "it held on until the deadline (job " + STUBBORN + " was still running), and exited within the deadline + the grace + "
                        + DurableReport.seconds(EXIT.toNanos()));

        SortedSet<Long> did = new TreeSet<>(Witnesses.attemptsByJob(ds, table).keySet());
        SortedSet<Long> done = Witnesses.inState(ds, table, "done");
        SortedSet<Long> running = Witnesses.inState(ds, table, "running");
        SortedSet<Long> dead = Witnesses.inState(ds, table, "dead");
        c.fact("at its exit: " + did.size() + " jobs done by the service, " + done.size() + " acknowledged, dead "
                + DurableReport.ids(dead) + ", running " + DurableReport.ids(running));
        c.expect(did.equals(done), "every job the service did is acknowledged, and no other");
        c.expect(running.stream().allMatch(id -> id == STUBBORN) && !did.contains(STUBBORN),
                "no job is left running but job " + STUBBORN + ", which the service never finished");
        c.expect(dead.stream().allMatch(WitnessedService::malformed), "the jobs dead are malformed ones");

        long stopped = System.nanoTime();
        boolean finished = DurableReport.eventually(() -> {
            try {
                WitnessedService.finish(ds, table, DurableReport.KILL_LEASE, 4, poolPrefix + "takeover");
                return Witnesses.inState(ds, table, "ready").isEmpty() && Witnesses.inState(ds, table, "running").isEmpty();
            } catch (Exception e) {
                return false;
            }
        });
        Map<Long, Integer> handled = Witnesses.attemptsByJob(ds, table);
        SortedSet<Long> malformed = new TreeSet<>(LongStream.rangeClosed(1, JOBS).filter(WitnessedService::malformed).boxed().toList());
        c.fact("takeover: every job done or dead " + DurableReport.seconds(System.nanoTime() - stopped) + " after the exit (job "
                + STUBBORN + "'s lease of " + DurableReport.seconds(DurableReport.KILL_LEASE.toNanos()) + ", then the rest)");
        c.expect(finished && handled.size() == JOBS - malformed.size() && handled.containsKey(STUBBORN),
                "every job done after the takeover, job " + STUBBORN + " too (nothing lost)");
        c.expect(Witnesses.inState(ds, table, "dead").equals(malformed), "the malformed jobs, and only they, dead: "
                + DurableReport.ids(malformed));
        c.expect(Witnesses.moreThanOnce(handled).isEmpty(), "no job done twice");
        DurableReport.acknowledgedOnce(c, ds, table, JOBS);
    }
}
