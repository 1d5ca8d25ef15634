package dev.drain.report;

import dev.drain.measure.JvmThreads;
import dev.drain.pool.Handler;
import dev.drain.pool.ItemContext;
import dev.drain.pool.ItemFailure;
import dev.drain.pool.PoolAborted;
import dev.drain.pool.PoolFailure;
import dev.drain.pool.PoolStats;
import dev.drain.pool.Results;
import dev.drain.pool.RunOutcome;
import dev.drain.pool.WorkerPool;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.jspecify.annotations.Nullable;

/** One case on one intake: the pool it builds, what the consumer saw, and the checks. */
final class Trial {
    final String name;
    final WorkerPool.IntakeKind intake;
    final int queueSize;
    final int workers;
    final long leadBound;
    private final long start = System.nanoTime();
    private final Map<Integer, AtomicInteger> attempts = new ConcurrentHashMap<>();
    private final AtomicBoolean contextOk = new AtomicBoolean(true);
    final List<Integer> results = new ArrayList<>();
    private final List<String> failedChecks = new ArrayList<>();
    @Nullable RunOutcome<Integer> outcome;
    private @Nullable PoolStats stats;
    private String order = "-";
    private String settings = "";
    private String note = "";
    /** Every live thread of the JVM when the case began ({@link JvmThreads}). */
    private final JvmThreads.Snapshot before = JvmThreads.dump();
    /** The threads this case's handlers leak on purpose, which the measure must see. */
    private int expectedTaskDelta;

    /** What a case does with each result as it arrives. */
    @FunctionalInterface
    interface ResultHook {
        void accept(Integer result);
    }

    Trial(String name, WorkerPool.IntakeKind intake, int queueSize, int workers) {
        this.name = name;
        this.intake = intake;
        this.queueSize = queueSize;
        this.workers = workers;
        this.leadBound = queueSize + workers + 1L;
    }

    /** A builder for this trial's pool, its handler wrapped to count attempts and check contexts. */
    WorkerPool.Builder<Integer, Integer> pool(Handler<Integer, Integer> handler) {
        return WorkerPool.<Integer, Integer>builder(item -> {
            int attempt = attempts.computeIfAbsent(item, k -> new AtomicInteger()).incrementAndGet();
            ItemContext<?> context = ItemContext.current();
            if (!item.equals(context.item()) || context.attempt() != attempt) {
                contextOk.set(false);
            }
            return handler.handle(item);
        }).intake(intake).queueSize(queueSize).workers(workers).name(poolName(name, intake));
    }

    /** {@return the name of the pool of case {@code name} on {@code intake}} */
    static String poolName(String name, WorkerPool.IntakeKind intake) {
        return "report-" + name + "-" + intake.name().toLowerCase(Locale.ROOT);
    }

    /** A pool whose handlers count down {@code inFlight}, then block until they are interrupted. */
    WorkerPool<Integer, Integer> blockedUntilInterrupted(CountDownLatch inFlight) {
        return pool(item -> {
            inFlight.countDown();
            new CountDownLatch(1).await(); // never opens: only cancellation ends this
            return item;
        }).itemTimeout(Cases.BOUND).build();
    }

    /** Runs the pool over {@code source} on this thread, calling {@code each} after each result, then closes. */
    void consume(WorkerPool<Integer, Integer> pool, Iterator<Integer> source, ResultHook each) {
        try (Results<Integer, Integer> run = pool.run(source)) {
            try {
                while (run.hasNext()) {
                    Integer result = run.next();
                    results.add(result);
                    each.accept(result);
                }
            } catch (PoolFailure | PoolAborted expected) {
                // the outcome says which, typed
            }
            ended(pool, run);
        }
    }

    /** Iterates what is left of a run, then records its end; the caller closes it. */
    void drain(WorkerPool<Integer, Integer> pool, Results<Integer, Integer> run) {
        try {
            while (run.hasNext()) {
                results.add(run.next());
            }
        } catch (PoolFailure | PoolAborted expected) {
            // the outcome says which, typed
        }
        ended(pool, run);
    }

    /** Records the end of a run: its outcome, its counters, and the pool's settings. */
    void ended(WorkerPool<Integer, Integer> pool, Results<Integer, Integer> run) {
        outcome = run.outcome().orElse(null);
        stats = run.stats();
        settings = pool.settings();
    }

    /** Adds what the outcome alone does not show to the case's detail. */
    void note(String text) {
        note = text;
    }

    /** The case's handlers leak {@code threads} threads on purpose: the measure must see exactly them. */
    void expectLeaks(int threads) {
        expectedTaskDelta = threads;
    }

    PoolStats stats() {
        return Objects.requireNonNull(stats, "the run has not ended");
    }

    void order(boolean completionOrder) {
        order = completionOrder ? "completion" : "WRONG";
        expect(completionOrder, "results arrive in completion order");
    }

    void expect(boolean holds, String what) {
        if (!holds) {
            failedChecks.add(what);
        }
    }

    boolean outcomeIs(Class<?> type) {
        return type.isInstance(outcome);
    }

    boolean attemptsAre(Function<Integer, Integer> expected) {
        return attempts.entrySet().stream().allMatch(e -> e.getValue().get() == expected.apply(e.getKey()));
    }

    Set<Integer> resultSet() {
        return new TreeSet<>(results);
    }

    List<Integer> failedItems() {
        return failures().stream().map(ItemFailure::item).toList();
    }

    List<String> failureCauses() {
        return failures().stream().map(f -> f.cause().getClass().getSimpleName()).toList();
    }

    private List<ItemFailure<Integer>> failures() {
        return outcome == null ? List.of() : outcome.failures();
    }

    /**
     * The case's row. Call it once every thread the case started has ended: it dumps every live
     * thread of the JVM again, and the threads alive now that were not when the case began are
     * the case's {@code task_delta}.
     */
    CaseResult result() {
        PoolStats end = stats();
        int taskDelta = JvmThreads.dump().tasksNotIn(before).size();
        expect(end.maxLead() <= leadBound, "the lead stays within queueSize + workers + 1");
        expect(contextOk.get(), "every attempt sees its own context");
        expect(taskDelta == expectedTaskDelta, expectedTaskDelta == 0 ? "no thread outlives the run"
                : "the measure sees exactly the " + expectedTaskDelta + " thread(s) the handlers leaked");
        Map<Integer, Integer> byItem = new TreeMap<>();
        attempts.forEach((item, n) -> byItem.put(item, n.get()));
        return new CaseResult(name, intake == WorkerPool.IntakeKind.SHUTDOWN_QUEUE ? "queue" : "sentinel", settings,
                results, order, byItem, end.maxLead(), leadBound, summarize(outcome),
                note.isEmpty() ? detail(outcome) : detail(outcome) + "; " + note, contextOk.get(),
                end.metricsRaised(), taskDelta, expectedTaskDelta, failedChecks,
                Duration.ofNanos(System.nanoTime() - start).toMillis());
    }

    /** The outcome in a few words, for the table. */
    static String summarize(@Nullable RunOutcome<?> outcome) {
        return switch (outcome) {
            case null -> "not ended";
            case RunOutcome.Completed<?> c -> c.stopRequested() ? "normal (stopped)" : "normal";
            case RunOutcome.Failed<?> f -> "PoolFailure(" + f.failures().size() + ")";
            case RunOutcome.Aborted<?> a -> "aborted: " + a.discarded().size() + " discarded, " + a.cancelled().size()
                    + " cancelled";
            case RunOutcome.Abandoned<?> a -> a.interrupted() ? "abandoned (interrupted)" : "abandoned (closed)";
            case RunOutcome.SourceFailed<?> s -> "source failed";
            case RunOutcome.Crashed<?> c -> "CRASHED";
            case RunOutcome.Unsettled<?> u -> summarize(u.ended()) + ", " + u.unsettled().size() + " unsettled";
        };
    }

    /** The outcome in full: the failures' items, types and messages, or the discarded and cancelled items. */
    static String detail(@Nullable RunOutcome<Integer> outcome) {
        return switch (outcome) {
            case null -> "";
            case RunOutcome.Completed<Integer> c -> "";
            case RunOutcome.Failed<Integer> f -> f.failures().stream()
                    .map(i -> "item " + i.item() + " after " + i.attempts() + (i.attempts() == 1 ? " attempt: " : " attempts: ")
                            + i.cause().getClass().getSimpleName() + " '" + i.cause().getMessage() + "'")
                    .collect(Collectors.joining("; "));
            case RunOutcome.Aborted<Integer> a -> "discarded " + new TreeSet<>(a.discarded()) + ", cancelled "
                    + new TreeSet<>(a.cancelled());
            case RunOutcome.Abandoned<Integer> a -> "discarded " + new TreeSet<>(a.discarded()) + ", cancelled "
                    + new TreeSet<>(a.cancelled());
            case RunOutcome.SourceFailed<Integer> s -> String.valueOf(s.cause());
            case RunOutcome.Crashed<Integer> c -> String.valueOf(c.cause());
            case RunOutcome.Unsettled<Integer> u -> detail(u.ended()) + "; unsettled " + u.unsettled().size()
                    + ": " + u.cause();
        };
    }
}
