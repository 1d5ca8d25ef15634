package dev.drain.pool;

import dev.drain.pool.Workloads.CountingSource;

/**
 * A program that forgets to close its results (WP-20): {@code main} takes one result of an endless
 * run and returns. The JDK then closes the run's scope as the main thread exits; the process must
 * exit. Run by {@link WholeProcessTest} in a JVM of its own.
 */
final class ForgetfulMain {
    private ForgetfulMain() {}

    public static void main(String[] args) {
        WorkerPool<Integer, String> pool = WorkerPool.<Integer, String>builder(Workloads.echo()).workers(2).queueSize(2)
                .intake(WorkerPool.IntakeKind.valueOf(args[0])).name("forgetful").build();
        Results<Integer, String> results = pool.run(CountingSource.endless());
        System.out.println("took " + results.next()); // and returns without closing the results
    }
}
