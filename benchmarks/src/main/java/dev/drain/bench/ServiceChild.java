package dev.drain.bench;

import dev.drain.jobtable.Job;
import dev.drain.jobtable.JobTable;
import dev.drain.pool.RunOutcome;
import dev.drain.pool.StopOnShutdown;
import dev.drain.pool.WorkerPool;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * Issue 40's service in a JVM of its own, as {@code examples/service}'s {@code Main} is written:
 * {@link StopOnShutdown} with a deadline, and one run of {@link ServiceWork#service} over the
 * table's waiting stream of claims ({@code claimsUntilStopped()}) until the JVM is told to shut down. {@link ServiceBench} starts it, sends it
 * SIGTERM and measures the time to its exit.
 *
 * <p>Arguments: the JDBC URL (user and password in it), the job table, the deadline and the grace
 * in milliseconds, the table's lease in milliseconds, and {@code stubbornAt} (0, or which attempt,
 * counted from 1 as they start, ignores every interrupt forever). Prints {@code handling} once a
 * job is done, {@code stubborn} once the stubborn attempt has begun, and, if it gets to the end of
 * its {@code main}, one line {@code stopped {...}} with the last run's outcome, how long after the
 * shutdown began the run ended, and when the shutdown began (epoch milliseconds, which the driver's
 * clock shares), then {@code closed {...}} once its table is closed, just before it closes its
 * {@link StopOnShutdown} (after which the hook returns and the JVM exits).
 */
public final class ServiceChild {
    private ServiceChild() {}

    public static void main(String[] args) throws Exception {
        String url = args[0];
        String tableName = args[1];
        Duration deadline = Duration.ofMillis(Long.parseLong(args[2]));
        Duration grace = Duration.ofMillis(Long.parseLong(args[3]));
        Duration lease = Duration.ofMillis(Long.parseLong(args[4]));
        long stubbornAt = Long.parseLong(args[5]);
        PGSimpleDataSource db = new PGSimpleDataSource();
        db.setURL(url);
        // when the JVM began to shut down, on this JVM's clocks (another hook, so not exact to the millisecond)
        AtomicLong shutdownAt = new AtomicLong();
        AtomicLong shutdownEpochMillis = new AtomicLong();
        Runtime.getRuntime().addShutdownHook(Thread.ofPlatform().unstarted(() -> {
            shutdownAt.set(System.nanoTime());
            shutdownEpochMillis.set(System.currentTimeMillis());
        }));
        RunOutcome<Job> last = null;
        int runs = 0;
        long runEndedAt = 0;
        try (StopOnShutdown shutdown = StopOnShutdown.install(deadline, grace)) {
            try (JobTable table = JobTable.on(db).table(tableName).lease(lease).open();
                 ServiceWork.Handler handler = new ServiceWork.Handler(db, tableName, "child", stubbornAt,
                         () -> say("stubborn"), () -> say("handling"))) {
                WorkerPool.Builder<Job, Void> service = ServiceWork.service(handler, table, null);
                try (Stream<Job> claims = table.claimsUntilStopped()) { // waits for work until the shutdown stops the run (JT-13)
                    last = shutdown.drain(service.build(), claims);
                    runs++;
                    runEndedAt = System.nanoTime();
                }
                long stale = table.staleWrites();
                long returning = System.nanoTime();
                say("stopped {\"runs\": " + runs + ", \"outcome\": \"" + (last == null ? "none" : describe(last))
                        + "\", \"run_ended_ms_after_shutdown\": " + (runEndedAt - shutdownAt.get()) / 1_000_000
                        + ", \"main_ms_after_shutdown\": " + (returning - shutdownAt.get()) / 1_000_000
                        + ", \"stale_writes\": " + stale + ", \"shutdown_epoch_ms\": " + shutdownEpochMillis.get() + "}");
            }
            // the table and the witness's connections closed; the hook waits for this registration's close
            say("closed {\"closed_epoch_ms\": " + System.currentTimeMillis() + "}");
        }
    }

    /** {@return the outcome's kind, and for an abort whether the deadline caused it and what it left} */
    private static String describe(RunOutcome<Job> outcome) {
        return switch (outcome) {
            case RunOutcome.Completed<Job> c -> "Completed(stopRequested=" + c.stopRequested() + ", failures="
                    + c.failures().size() + ")";
            case RunOutcome.Aborted<Job> a -> "Aborted(deadlinePassed=" + a.deadlinePassed() + ", discarded="
                    + a.discarded().size() + ", cancelled=" + a.cancelled().size() + ")";
            default -> outcome.getClass().getSimpleName();
        };
    }

    private static void say(String line) {
        System.out.println(line);
        System.out.flush();
    }
}
