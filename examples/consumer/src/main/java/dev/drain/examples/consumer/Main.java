package dev.drain.examples.consumer;

import dev.drain.pool.PoolFailure;
import dev.drain.pool.PoolStats;
import dev.drain.pool.Results;
import dev.drain.pool.RunOutcome;
import dev.drain.pool.WorkerPool;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * drain used from another project: a worker pool over a few words, its results, how the run ended,
 * and a check of each. Exits with status 1 if a check fails.
 */
public final class Main {
    private Main() {}

    /** The items of the run. */
    static final List<String> WORDS = List.of("drain", "queue", "pool", "module", "preview");

    /**
     * Runs the example.
     *
     * @param args none
     */
    public static void main(String[] args) {
        List<String> problems = run(System.out);
        if (!problems.isEmpty()) {
            problems.forEach(problem -> System.err.println("consumer: " + problem));
            System.exit(1);
        }
        System.out.println("consumer: ok");
    }

    /**
     * Runs a pool over {@link #WORDS}, prints what it gives, and checks it.
     *
     * @param out where the results and the outcome go
     * @return what is off, one line each; empty if nothing is
     */
    static List<String> run(PrintStream out) {
        WorkerPool<String, String> pool = WorkerPool.<String, String>builder(Main::describe)
                .workers(3)
                .queueSize(2)
                .itemTimeout(Duration.ofSeconds(5))
                .name("consumer")
                .build();
        List<String> results = new ArrayList<>();
        Optional<RunOutcome<String>> outcome;
        PoolStats stats;
        try (Results<String, String> run = pool.run(WORDS)) {
            while (run.hasNext()) {
                String result = run.next(); // in completion order
                out.println("result: " + result);
                results.add(result);
            }
            outcome = run.outcome();
            stats = run.stats();
        } catch (PoolFailure failure) { // some item failed permanently
            return List.of("the run failed: " + failure.failures());
        }
        out.println("outcome: " + outcome.map(Object::toString).orElse("none"));
        out.println("succeeded: " + stats.succeeded() + " of " + stats.pulled() + "; threads left: " + pool.liveThreads());

        Module drain = WorkerPool.class.getModule();
        if (drain.getDescriptor() != null) { // null on the class path, where drain is no module
            out.println("drain: module " + drain.getDescriptor().toNameAndVersion() + ", exports "
                    + drain.getDescriptor().exports().stream().map(Object::toString).sorted().toList());
        }

        List<String> problems = new ArrayList<>();
        List<String> expected = WORDS.stream().map(Main::describe).sorted().toList();
        if (!results.stream().sorted().toList().equals(expected)) {
            problems.add("results " + results + ", expected " + expected + " in any order");
        }
        if (!(outcome.orElse(null) instanceof RunOutcome.Completed<String>(boolean stopRequested, var failures))
                || stopRequested || !failures.isEmpty()) {
            problems.add("outcome " + outcome + ", expected Completed[stopRequested=false]");
        }
        if (stats.succeeded() != WORDS.size() || stats.delivered() != WORDS.size()) {
            problems.add("stats " + stats + ", expected " + WORDS.size() + " succeeded and delivered");
        }
        if (pool.liveThreads() != 0) {
            problems.add(pool.liveThreads() + " threads of the pool still running after close()");
        }
        if (!drain.isNamed() || !Main.class.getModule().isNamed()) {
            problems.add("not run as modules (drain: " + drain + ", this: " + Main.class.getModule() + "); use --module-path");
        }
        return problems;
    }

    private static String describe(String word) {
        return word + " has " + word.length() + " letters";
    }
}
