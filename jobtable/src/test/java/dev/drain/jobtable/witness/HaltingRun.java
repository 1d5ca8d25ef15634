package dev.drain.jobtable.witness;

import dev.drain.jobtable.Backlog;
import dev.drain.jobtable.Job;
import dev.drain.jobtable.JobTable;
import dev.drain.pool.RunOutcome;
import dev.drain.pool.WorkerPool;
import java.time.Duration;
import java.util.stream.Stream;

/**
 * A pool of one worker over a job table whose job {@code "halt"} halts the JVM
 * ({@code Runtime.halt(3)}: no shutdown hook, no finally, no close), as a job that crashes its
 * process does; every other job is done at once. Runs batch after batch (each takes one suspect,
 * JT-3) and exits 0 once nothing is due and no lease has run out.
 *
 * <p>Arguments of {@link #main}: JDBC URL, table, lease in milliseconds.
 */
public final class HaltingRun {
    /** The exit status of a process that the halting job ended. */
    public static final int HALTED = 3;

    private HaltingRun() {}

    /** Halts the JVM if the job is {@code "halt"}; does nothing else. */
    private static void handle(Job job) {
        if (job.payload().equals("halt")) {
            Runtime.getRuntime().halt(HALTED);
        }
    }

    /**
     * Drains the table named by {@code args} (see the class comment), then exits.
     *
     * @param args JDBC URL, table, lease in milliseconds
     * @throws Exception whatever the run throws: the process then exits with status 1
     */
    public static void main(String[] args) throws Exception {
        try (JobTable t = JobTable.on(WitnessedRun.dataSource(args[0])).table(args[1]).ownerPrefix("halting")
                .lease(Duration.ofMillis(Long.parseLong(args[2]))).open()) {
            // A batch run takes one suspect at a time (JT-3): run after run, until nothing is claimable.
            Backlog left;
            do {
                WorkerPool<Job, Void> pool = WorkerPool.<Job>forEach(HaltingRun::handle).workers(1).settler(t.settler()).build();
                try (Stream<Job> claims = t.claims()) {
                    if (!(pool.drain(claims) instanceof RunOutcome.Completed<Job>)) {
                        System.exit(1);
                    }
                }
                left = t.operations().backlog();
            } while (left.due() + left.expired() > 0);
        }
    }
}
