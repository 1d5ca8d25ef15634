package dev.drain.pool;

import static org.assertj.core.api.Assertions.assertThat;
import static org.quicktheories.QuickTheory.qt;

import dev.drain.support.Evidence;
import dev.drain.support.PropertyReport;
import dev.drain.support.ThreadDump;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.quicktheories.api.Pair;
import org.quicktheories.core.Gen;
import org.quicktheories.generators.Generate;
import org.quicktheories.generators.SourceDSL;

/**
 * The pool's contract as properties over random workloads (QuickTheories, shrinking on): items
 * that succeed, fail permanently, fail retryably some number of times, time out, or swallow
 * interrupts; random workers, queue size, intake, retry policy, and a stop or abort at a random
 * point. Each test checks one property over its own tries. Seeded for reproducibility:
 * {@code -Dqt.seed=N}, {@code -Dqt.examples=N}.
 */
@ExtendWith(PropertyReport.class)
class WorkerPoolProperties {
    static final long SEED = Long.getLong("qt.seed", 20261129L);
    static final int EXAMPLES = Integer.getInteger("qt.examples", 25);
    /** Short, so the items that time out (and escalate) keep each try quick. */
    static final Duration TIMEOUT = Duration.ofMillis(40);

    /** What one item's handler does. */
    sealed interface Behaviour {
        record Succeed() implements Behaviour {}

        record FailPermanently() implements Behaviour {}

        /** Throws IOException on its first {@code times} attempts, then succeeds. */
        record FailRetryably(int times) implements Behaviour {}

        /** Blocks until interrupted, swallowing the first {@code swallowed} interrupts. */
        record TimeOut(int swallowed) implements Behaviour {}
    }

    /** How the run ends. */
    enum Ending { NATURALLY, STOP, ABORT }

    /** One generated run. */
    record Workload(List<Behaviour> items, int workers, int queueSize, WorkerPool.IntakeKind intake,
                    int maxRetries, boolean retryTimeouts, Ending ending, int endAfter) {

        /** {@return whether the item ends as a permanent failure when nothing cancels it} */
        boolean fails(int item) {
            return switch (items.get(item)) {
                case Behaviour.Succeed s -> false;
                case Behaviour.FailPermanently f -> true;
                case Behaviour.FailRetryably r -> r.times() > maxRetries;
                case Behaviour.TimeOut t -> true; // every attempt times out, retried or not
            };
        }

        /** {@return how many attempts the item gets when nothing cancels it} */
        int attempts(int item) {
            return switch (items.get(item)) {
                case Behaviour.Succeed s -> 1;
                case Behaviour.FailPermanently f -> 1;
                case Behaviour.FailRetryably r -> Math.min(r.times(), maxRetries) + 1;
                case Behaviour.TimeOut t -> retryTimeouts ? maxRetries + 1 : 1;
            };
        }
    }

    static Gen<Behaviour> behaviours() {
        return Generate.frequency(
                Pair.of(12, Generate.constant((Behaviour) new Behaviour.Succeed())),
                Pair.of(2, Generate.constant((Behaviour) new Behaviour.FailPermanently())),
                Pair.of(3, Generate.range(1, 3).map(n -> (Behaviour) new Behaviour.FailRetryably(n))),
                Pair.of(1, Generate.range(0, 2).map(n -> (Behaviour) new Behaviour.TimeOut(n))));
    }

    /** The first half of a workload, as QuickTheories zips at most five generators at a time. */
    private record Shape(List<Behaviour> items, int workers, int queueSize, WorkerPool.IntakeKind intake,
                         int maxRetries) {}

    static Gen<Workload> workloads() {
        Gen<Shape> shape = SourceDSL.lists().of(behaviours()).ofSizeBetween(0, 20).zip(Generate.range(1, 5),
                Generate.range(1, 4), Generate.enumValues(WorkerPool.IntakeKind.class), Generate.range(0, 3),
                Shape::new);
        return shape.zip(Generate.booleans(), Generate.enumValues(Ending.class), Generate.range(0, 4),
                (s, retryTimeouts, ending, endAfter) -> new Workload(s.items(), s.workers(), s.queueSize(),
                        s.intake(), s.maxRetries(), retryTimeouts, ending, endAfter));
    }

    /** What a run showed. */
    record Observed(List<Integer> pulled, List<Integer> succeeded, List<ItemFailure<Integer>> failures,
                    List<Integer> discarded, List<Integer> cancelled, RunOutcome<Integer> outcome, PoolStats stats,
                    Map<Integer, Integer> attempts, List<String> crossedContexts, int liveThreadsAfter,
                    int dumpedThreadsAfter) {}

    /** Runs one workload to its end and reports what happened. */
    static Observed run(Workload w) {
        List<Integer> pulled = Collections.synchronizedList(new ArrayList<>());
        Map<Integer, AtomicInteger> attempts = new ConcurrentHashMap<>();
        List<String> crossed = Collections.synchronizedList(new ArrayList<>());
        ThreadLocal<Integer> local = new ThreadLocal<>();
        Handler<Integer, Integer> handler = item -> {
            int attempt = attempts.computeIfAbsent(item, k -> new AtomicInteger()).incrementAndGet();
            ItemContext<?> context = ItemContext.current();
            if (!context.item().equals(item) || context.attempt() != attempt || local.get() != null) {
                crossed.add("item " + item + " attempt " + attempt + " saw " + context + " and local " + local.get());
            }
            local.set(item);
            switch (w.items().get(item)) {
                case Behaviour.Succeed s -> { }
                case Behaviour.FailPermanently f -> throw new IllegalStateException("permanent " + item);
                case Behaviour.FailRetryably r -> {
                    if (attempt <= r.times()) {
                        throw new IOException("transient " + item);
                    }
                }
                case Behaviour.TimeOut t -> {
                    for (int seen = 0; ; seen++) {
                        try {
                            new CountDownLatch(1).await();
                        } catch (InterruptedException e) {
                            if (seen >= t.swallowed()) {
                                throw e;
                            }
                        }
                    }
                }
            }
            return item;
        };
        WorkerPool.Builder<Integer, Integer> builder = WorkerPool.<Integer, Integer>builder(handler)
                .workers(w.workers()).queueSize(w.queueSize()).intake(w.intake()).itemTimeout(TIMEOUT)
                .maxRetries(w.maxRetries()).retryable(IOException.class);
        if (w.retryTimeouts()) {
            builder.retryable(TimeoutException.class);
        }
        WorkerPool<Integer, Integer> pool = builder.build();
        Iterator<Integer> source = new Iterator<>() {
            int next;

            @Override
            public boolean hasNext() {
                return next < w.items().size();
            }

            @Override
            public Integer next() {
                pulled.add(next);
                return next++;
            }
        };
        List<Integer> succeeded = new ArrayList<>();
        Results<Integer, Integer> results = pool.run(source);
        try (results) {
            if (w.ending() != Ending.NATURALLY && w.endAfter() == 0) {
                end(pool, w.ending());
            }
            while (results.hasNext()) {
                succeeded.add(results.next());
                if (w.ending() != Ending.NATURALLY && succeeded.size() == w.endAfter()) {
                    end(pool, w.ending());
                }
            }
        } catch (PoolFailure | PoolAborted expected) {
            // the outcome, typed, says which
        }
        RunOutcome<Integer> outcome = results.outcome().orElseThrow();
        Map<Integer, Integer> attemptCounts = new HashMap<>();
        attempts.forEach((item, n) -> attemptCounts.put(item, n.get()));
        return new Observed(List.copyOf(pulled), succeeded, outcome.failures(), outcome.discarded(), outcome.cancelled(),
                outcome, results.stats(), attemptCounts, List.copyOf(crossed),
                pool.liveThreads(), ThreadDump.threadsNamed(pool.name() + "-").size());
    }

    private static void end(WorkerPool<?, ?> pool, Ending ending) {
        switch (ending) {
            case STOP -> pool.requestStop();
            case ABORT -> pool.abort();
            case NATURALLY -> { }
        }
    }

    private static void count(Evidence evidence, Workload w, Observed o) {
        evidence.tries(1).count("runs ending " + w.ending().name().toLowerCase(java.util.Locale.ROOT), 1)
                .count("runs on the " + w.intake() + " intake", 1)
                .count("items pulled", o.pulled().size()).count("items succeeded", o.succeeded().size())
                .count("items failed", o.failures().size()).count("items discarded", o.discarded().size())
                .count("items cancelled", o.cancelled().size()).count("retries", o.stats().retried())
                .count("timeouts", o.stats().timedOut()).count("escalated interrupts", o.stats().escalations());
    }

    /** WP-2, WP-12: every pulled item is settled exactly once (succeeded, failed, discarded or cancelled), and results are exactly the successes. */
    @Test
    void everyPulledItemIsSettledExactlyOnce(Evidence evidence) {
        evidence.property("Every pulled item is settled exactly once (succeeded, failed, discarded or cancelled) "
                + "and the results are exactly the successes, for random workloads, intakes and endings.",
                "WP-2", "WP-6", "WP-7", "WP-12").seed(SEED);
        qt().withFixedSeed(SEED).withExamples(EXAMPLES).forAll(workloads()).checkAssert(w -> {
            Observed o = run(w);
            count(evidence, w, o);
            List<Integer> settled = new ArrayList<>(o.succeeded());
            o.failures().forEach(f -> settled.add(f.item()));
            settled.addAll(o.discarded());
            settled.addAll(o.cancelled());
            assertThat(settled).as("settled items").doesNotHaveDuplicates()
                    .containsExactlyInAnyOrderElementsOf(o.pulled());
            assertThat(o.succeeded()).allSatisfy(item -> assertThat(w.fails(item)).as("item %s fails", item).isFalse());
            if (w.ending() != Ending.ABORT) {
                assertThat(o.discarded()).isEmpty();
                assertThat(o.cancelled()).isEmpty();
            }
        });
    }

    /** WP-6, WP-5: the PoolFailure holds exactly the items that fail permanently, each with its number of attempts. */
    @Test
    void failureHoldsExactlyThePermanentFailures(Evidence evidence) {
        evidence.property("A run that is not aborted ends with a PoolFailure holding exactly the pulled items that "
                + "fail permanently, each with its expected attempts, and nothing else.", "WP-5", "WP-6", "WP-3").seed(SEED);
        qt().withFixedSeed(SEED + 1).withExamples(EXAMPLES).forAll(workloads())
                .assuming(w -> w.ending() != Ending.ABORT).checkAssert(w -> {
                    Observed o = run(w);
                    count(evidence, w, o);
                    Set<Integer> expected = new HashSet<>();
                    o.pulled().stream().filter(w::fails).forEach(expected::add);
                    assertThat(o.failures()).extracting(ItemFailure::item)
                            .containsExactlyInAnyOrderElementsOf(expected);
                    assertThat(o.failures()).allSatisfy(f -> {
                        assertThat(f.attempts()).isEqualTo(w.attempts(f.item()));
                        assertThat(f.cause()).isInstanceOfAny(IllegalStateException.class, IOException.class,
                                TimeoutException.class);
                    });
                    assertThat(o.outcome()).isInstanceOf(expected.isEmpty()
                            ? RunOutcome.Completed.class : RunOutcome.Failed.class);
                });
    }

    /** WP-1, WP-10: the lead never exceeds queueSize + workers + 1, and no thread of the pool outlives the run. */
    @Test
    void leadIsBoundedAndNothingLeaks(Evidence evidence) {
        evidence.property("The source is never more than queueSize + workers + 1 items ahead of finished work, "
                + "and after the run no thread of the pool is running (own count and JSON thread dump).",
                "WP-1", "WP-10").seed(SEED);
        qt().withFixedSeed(SEED + 2).withExamples(EXAMPLES).forAll(workloads()).checkAssert(w -> {
            Observed o = run(w);
            count(evidence, w, o);
            assertThat(o.stats().maxLead()).isLessThanOrEqualTo(w.queueSize() + w.workers() + 1L);
            assertThat(o.liveThreadsAfter()).isZero();
            assertThat(o.dumpedThreadsAfter()).isZero();
        });
    }

    /** WP-9: every attempt sees its own item and attempt number, and never a ThreadLocal set by another attempt. */
    @Test
    void contextsNeverCross(Evidence evidence) {
        evidence.property("Every attempt sees its own ItemContext (item and attempt number) and no ThreadLocal "
                + "value from any other attempt, including its own earlier attempts.", "WP-9").seed(SEED);
        qt().withFixedSeed(SEED + 3).withExamples(EXAMPLES).forAll(workloads()).checkAssert(w -> {
            Observed o = run(w);
            count(evidence, w, o);
            assertThat(o.crossedContexts()).isEmpty();
            o.attempts().forEach((item, n) -> {
                @Nullable Integer expected = w.ending() == Ending.NATURALLY ? w.attempts(item) : null;
                if (expected != null) {
                    assertThat(n).as("attempts of item %s", item).isEqualTo(expected);
                }
            });
        });
    }
}
