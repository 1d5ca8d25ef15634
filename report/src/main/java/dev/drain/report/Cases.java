package dev.drain.report;

import static dev.drain.report.Waiting.await;
import static dev.drain.report.Waiting.join;
import static dev.drain.report.Waiting.until;

import dev.drain.pool.ItemContext;
import dev.drain.pool.MetricsEvent;
import dev.drain.pool.MetricsSink;
import dev.drain.pool.Results;
import dev.drain.pool.RunOutcome;
import dev.drain.pool.WorkerPool;
import dev.drain.report.Waiting.CountingSource;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.IntStream;
import org.jspecify.annotations.Nullable;

/**
 * The contract's cases, each a small program that runs a {@link WorkerPool} and checks what it
 * promised: the eight of the contract (happy, retry, timeout-retry, stubborn, permanent-failures,
 * request-stop, metrics-failing, context-isolation), then abandon, abort and caller-interrupted,
 * and leaky-handler, which shows that the leak check sees a leak the pool cannot prevent. The list
 * and what each case shows is {@code specs/contract-report.md}. Every case is deterministic: where
 * timing would decide an outcome, a latch decides it.
 */
final class Cases {
    private Cases() {}

    /** How long any wait in a case may take before the case is reported as hung. */
    static final Duration BOUND = Waiting.BOUND;
    /** The item timeout of the cases that time out: short, so escalation takes well under a second. */
    static final Duration TIMEOUT = Duration.ofMillis(100);

    /** One case: its name, what it shows, and the program that runs it. */
    record Case(String name, String shows, Function<WorkerPool.IntakeKind, CaseResult> program) {}

    static final List<Case> ALL = List.of(
            new Case("happy", "every item succeeds, once, results in completion order", Cases::happy),
            new Case("retry", "retryable failures succeed within maxRetries", Cases::retry),
            new Case("timeout-retry", "a first attempt outlives itemTimeout; TimeoutException is retryable",
                    Cases::timeoutRetry),
            new Case("stubborn", "handlers swallow 1, 2, and every interrupt: stopped at rounds 2 and 3, and stuck",
                    Cases::stubborn),
            new Case("permanent-failures", "failures stop intake, the queue drains, one PoolFailure",
                    Cases::permanentFailures),
            new Case("request-stop", "requestStop() twice, from two threads, mid-stream", Cases::requestStop),
            new Case("metrics-failing", "a metrics sink that throws on every call", Cases::metricsFailing),
            new Case("context-isolation", "two items rendezvous, each with its own context", Cases::contextIsolation),
            new Case("abandon", "the consumer closes the results early", Cases::abandon),
            new Case("abort", "the emergency path: drop, cancel, report", Cases::abort),
            new Case("caller-interrupted", "the thread iterating the results is interrupted",
                    Cases::callerInterrupted),
            new Case("leaky-handler", "a handler leaves a thread of its own running: the JVM-wide count sees it",
                    Cases::leakyHandler));

    // ---- the cases -----------------------------------------------------------------------------------

    /** Six items, all in flight; the consumer releases them newest first, so completion order is reversed. */
    static CaseResult happy(WorkerPool.IntakeKind intake) {
        return completesInReverse("happy", intake, null);
    }

    static CaseResult metricsFailing(WorkerPool.IntakeKind intake) {
        return completesInReverse("metrics-failing", intake, (event, detail) -> {
            throw new IllegalStateException("the metrics backend is down");
        });
    }

    private static CaseResult completesInReverse(String name, WorkerPool.IntakeKind intake, @Nullable MetricsSink sink) {
        int n = 6;
        List<CountDownLatch> go = IntStream.range(0, n).mapToObj(i -> new CountDownLatch(1)).toList();
        Trial trial = new Trial(name, intake, 2, n); // a worker per item: all six are in flight at once
        WorkerPool.Builder<Integer, Integer> builder = trial.pool(item -> {
            await(go.get(item));
            return item;
        });
        if (sink != null) {
            builder.metrics(sink);
        }
        go.get(n - 1).countDown();
        trial.consume(builder.build(), range(n), result -> {
            if (result > 0) {
                go.get(result - 1).countDown(); // release the next older item
            }
        });
        List<Integer> reversed = IntStream.range(0, n).map(i -> n - 1 - i).boxed().toList();
        trial.order(trial.results.equals(reversed));
        trial.expect(trial.outcomeIs(RunOutcome.Completed.class), "the run completes normally");
        trial.expect(trial.attemptsAre(i -> 1), "one attempt per item");
        if (sink != null) {
            trial.expect(trial.stats().metricsRaised() > 0, "the sink's failures are counted");
        }
        return trial.result();
    }

    /** Item i fails with IOException on its first i % 3 attempts; maxRetries 2: everything succeeds. */
    static CaseResult retry(WorkerPool.IntakeKind intake) {
        Trial trial = new Trial("retry", intake, 2, 2);
        WorkerPool<Integer, Integer> pool = trial.pool(item -> {
            if (ItemContext.current().attempt() <= item % 3) {
                throw new IOException("transient failure of " + item);
            }
            return item;
        }).retryable(IOException.class).maxRetries(2).build();
        trial.consume(pool, range(6), result -> { });
        trial.expect(trial.resultSet().equals(new TreeSet<>(List.of(0, 1, 2, 3, 4, 5))), "every item succeeds");
        trial.expect(trial.attemptsAre(i -> i % 3 + 1), "item i takes i % 3 + 1 attempts");
        trial.expect(trial.outcomeIs(RunOutcome.Completed.class), "the run completes normally");
        return trial.result();
    }

    /** Odd items hang on their first attempt until interrupted; TimeoutException is retryable. */
    static CaseResult timeoutRetry(WorkerPool.IntakeKind intake) {
        Trial trial = new Trial("timeout-retry", intake, 2, 2);
        WorkerPool<Integer, Integer> pool = trial.pool(item -> {
            if (item % 2 == 1 && ItemContext.current().attempt() == 1) {
                new CountDownLatch(1).await(); // only the timeout's interrupt ends this
            }
            return item;
        }).itemTimeout(TIMEOUT).retryable(TimeoutException.class).maxRetries(1).build();
        trial.consume(pool, range(4), result -> { });
        trial.expect(trial.resultSet().equals(new TreeSet<>(List.of(0, 1, 2, 3))), "every item succeeds");
        trial.expect(trial.attemptsAre(i -> i % 2 + 1), "odd items take two attempts");
        trial.expect(trial.stats().timedOut() == 2, "two attempts time out");
        return trial.result();
    }

    /**
     * Four items in flight at once: item 0 swallows one interrupt (the second round stops it), item
     * 1 swallows two (the third round stops it), item 2 swallows every one (after the third round it
     * is reported stuck, and the sink, hearing of it, lets it go), item 3 is fine.
     */
    static CaseResult stubborn(WorkerPool.IntakeKind intake) {
        Trial trial = new Trial("stubborn", intake, 2, 4);
        CountDownLatch letGo = new CountDownLatch(1);
        Map<Integer, String> rounds = new ConcurrentSkipListMap<>();
        MetricsSink sink = (event, detail) -> {
            Matcher escalated = Pattern.compile("item=(\\d+) .* round=(\\d+)").matcher(detail);
            if (event == MetricsEvent.ATTEMPT_ESCALATED && escalated.find()) {
                rounds.put(Integer.valueOf(escalated.group(1)), "round " + escalated.group(2));
            } else if (event == MetricsEvent.ATTEMPT_STUCK) {
                rounds.put(2, "stuck after round 3");
                letGo.countDown(); // the pool reported it while it still ran; now it may return
            }
        };
        WorkerPool<Integer, Integer> pool = trial.pool(item -> {
            if (item == 3) {
                return item;
            }
            for (int swallowed = 0; ; ) {
                try {
                    if (item == 2 && swallowed == 3) {
                        await(letGo);
                        return item;
                    }
                    new CountDownLatch(1).await(); // only an interrupt ends this wait
                } catch (InterruptedException e) {
                    if (++swallowed > item + 1 && item < 2) {
                        throw e; // item 0 gives up at the 2nd interrupt, item 1 at the 3rd
                    }
                }
            }
        }).itemTimeout(TIMEOUT).metrics(sink).build();
        long start = System.nanoTime();
        trial.consume(pool, range(4), result -> { });
        Duration took = Duration.ofNanos(System.nanoTime() - start);
        trial.expect(trial.failedItems().equals(List.of(0, 1, 2)) && trial.failureCauses()
                .equals(List.of("TimeoutException", "TimeoutException", "StuckAttempt")),
                "items 0 and 1 fail with TimeoutException, item 2 with StuckAttempt");
        trial.expect(trial.stats().escalations() == 1 + 2 + 2, "escalated interrupts: 1 for item 0, 2 each for items 1 and 2");
        trial.expect(took.compareTo(TIMEOUT.multipliedBy(4).plusSeconds(2)) < 0, "stopped in bounded time");
        trial.expect(trial.results.equals(List.of(3)), "item 3 still succeeds");
        trial.expect(rounds.equals(Map.of(0, "round 2", 1, "round 3", 2, "stuck after round 3")),
                "item 0 stopped by round 2 of interrupts, item 1 by round 3, item 2 stuck after round 3");
        trial.note("interrupt rounds " + rounds);
        return trial.result();
    }

    /**
     * A handler that starts a thread of its own and leaves it running: a leak no pool can prevent.
     * The case expects the JVM-wide count to see exactly that one thread, then lets it end.
     */
    static CaseResult leakyHandler(WorkerPool.IntakeKind intake) {
        Trial trial = new Trial("leaky-handler", intake, 2, 2);
        CountDownLatch release = new CountDownLatch(1);
        List<Thread> leaked = new CopyOnWriteArrayList<>();
        WorkerPool<Integer, Integer> pool = trial.pool(item -> {
            if (item == 0) {
                leaked.add(Thread.ofVirtual().name("leaked-by-a-handler").start(() -> await(release)));
            }
            return item;
        }).build();
        trial.consume(pool, range(3), result -> { });
        trial.expect(trial.resultSet().equals(Set.of(0, 1, 2)), "every item succeeds");
        trial.expect(pool.liveThreads() == 0, "the pool's own count sees nothing: the thread is not the pool's");
        trial.expectLeaks(1);
        CaseResult result = trial.result(); // counted while the leaked thread still runs
        release.countDown();
        leaked.forEach(Waiting::join);
        return result;
    }

    /** An endless source; item 3 fails outright, item 4 exhausts its retries: intake stops, the rest drains. */
    static CaseResult permanentFailures(WorkerPool.IntakeKind intake) {
        Trial trial = new Trial("permanent-failures", intake, 3, 2);
        WorkerPool<Integer, Integer> pool = trial.pool(item -> {
            if (item == 3) {
                throw new IllegalStateException("item 3 is malformed");
            }
            if (item == 4) {
                throw new IOException("item 4's backend keeps failing");
            }
            return item;
        }).retryable(IOException.class).maxRetries(1).build();
        CountingSource source = new CountingSource(Integer.MAX_VALUE);
        trial.consume(pool, source, result -> { });
        Set<Integer> pulled = source.pulled();
        Set<Integer> shouldFail = new TreeSet<>(pulled);
        shouldFail.retainAll(Set.of(3, 4));
        trial.expect(new TreeSet<>(trial.failedItems()).equals(shouldFail), "PoolFailure holds exactly the failed items");
        Set<Integer> rest = new TreeSet<>(pulled);
        rest.removeAll(Set.of(3, 4));
        trial.expect(trial.resultSet().equals(rest) && trial.results.size() == rest.size(),
                "every other pulled item was handled once (the queue drained)");
        trial.expect(pulled.size() <= 4 + trial.leadBound, "intake stopped");
        return trial.result();
    }

    /** An endless source; after ten results two threads call requestStop at once. */
    static CaseResult requestStop(WorkerPool.IntakeKind intake) {
        Trial trial = new Trial("request-stop", intake, 4, 3);
        WorkerPool<Integer, Integer> pool = trial.pool(item -> item).build();
        CyclicBarrier together = new CyclicBarrier(2);
        List<Thread> stoppers = new ArrayList<>();
        CountingSource source = new CountingSource(Integer.MAX_VALUE);
        trial.consume(pool, source, result -> {
            if (trial.results.size() == 10) {
                for (int i = 0; i < 2; i++) {
                    stoppers.add(Thread.ofVirtual().start(() -> {
                        await(together);
                        pool.requestStop();
                    }));
                }
            }
        });
        stoppers.forEach(Waiting::join);
        trial.expect(Objects.equals(trial.outcome, new RunOutcome.Completed<Integer>(true)), "the run ends normally, stopped");
        trial.expect(trial.resultSet().equals(source.pulled()) && trial.results.size() == source.pulled().size(),
                "every pulled item is handled exactly once");
        return trial.result();
    }

    /** Two items meet at a barrier while both are in flight; each must still see only its own context. */
    static CaseResult contextIsolation(WorkerPool.IntakeKind intake) {
        ScopedValue<Integer> mine = ScopedValue.newInstance();
        ThreadLocal<Integer> local = new ThreadLocal<>();
        CyclicBarrier rendezvous = new CyclicBarrier(2);
        AtomicBoolean isolated = new AtomicBoolean(true);
        Trial trial = new Trial("context-isolation", intake, 2, 2);
        WorkerPool<Integer, Integer> pool = trial.pool(item -> {
            local.set(item);
            return ScopedValue.where(mine, item).call(() -> {
                await(rendezvous);
                if (!item.equals(ItemContext.current().item()) || !item.equals(mine.get()) || !item.equals(local.get())) {
                    isolated.set(false);
                }
                return item;
            });
        }).build();
        trial.consume(pool, range(2), result -> { });
        trial.expect(isolated.get(), "each item saw its own ItemContext, ScopedValue and ThreadLocal");
        trial.expect(trial.resultSet().equals(Set.of(0, 1)), "both items succeed");
        return trial.result();
    }

    /** Handlers block until interrupted; the consumer closes the results while both are in flight. */
    static CaseResult abandon(WorkerPool.IntakeKind intake) {
        Trial trial = new Trial("abandon", intake, 2, 2);
        CountDownLatch inFlight = new CountDownLatch(2);
        WorkerPool<Integer, Integer> pool = trial.blockedUntilInterrupted(inFlight);
        Results<Integer, Integer> run = pool.run(new CountingSource(Integer.MAX_VALUE));
        await(inFlight);
        run.close();
        trial.ended(pool, run);
        trial.expect(trial.outcome instanceof RunOutcome.Abandoned<Integer> a && !a.interrupted(), "the run is abandoned");
        trial.expect(pool.liveThreads() == 0, "close() returned only after every thread of the run finished");
        return trial.result();
    }

    /** Handlers block until interrupted; once the queue is full and the producer waits to put, abort. */
    static CaseResult abort(WorkerPool.IntakeKind intake) {
        Trial trial = new Trial("abort", intake, 3, 2);
        CountDownLatch inFlight = new CountDownLatch(2);
        WorkerPool<Integer, Integer> pool = trial.blockedUntilInterrupted(inFlight);
        CountingSource source = new CountingSource(Integer.MAX_VALUE);
        try (Results<Integer, Integer> run = pool.run(source)) {
            await(inFlight);
            // two in flight, three queued, and the sixth in the producer's hands: the lead at its bound
            until(() -> run.stats().pulled() == trial.leadBound);
            pool.abort();
            trial.drain(pool, run);
        }
        if (trial.outcome instanceof RunOutcome.Aborted<Integer> a) {
            Set<Integer> settled = new TreeSet<>(a.discarded());
            settled.addAll(a.cancelled());
            trial.expect(a.cancelled().size() == 2, "the two in-flight items are cancelled");
            trial.expect(settled.equals(source.pulled()) && a.discarded().size() + a.cancelled().size() == settled.size(),
                    "every pulled item is discarded or cancelled, once, and named");
        } else {
            trial.expect(false, "the run ends in PoolAborted");
        }
        return trial.result();
    }

    /**
     * The consumer runs the pool on its own thread, which owns the results; that thread is
     * interrupted while it waits for a result.
     */
    static CaseResult callerInterrupted(WorkerPool.IntakeKind intake) {
        Trial trial = new Trial("caller-interrupted", intake, 2, 2);
        CountDownLatch inFlight = new CountDownLatch(2);
        WorkerPool<Integer, Integer> pool = trial.blockedUntilInterrupted(inFlight);
        AtomicReference<String> seen = new AtomicReference<>("nothing");
        AtomicInteger liveWhenCancelled = new AtomicInteger(-1);
        Thread consumer = Thread.ofVirtual().start(() -> {
            try (Results<Integer, Integer> run = pool.run(new CountingSource(Integer.MAX_VALUE))) {
                try {
                    seen.set("hasNext returned " + run.hasNext());
                } catch (CancellationException e) {
                    seen.set(Thread.currentThread().isInterrupted() ? "cancelled, still interrupted" : "cancelled");
                    liveWhenCancelled.set(pool.liveThreads()); // hasNext threw only once every thread had finished
                    trial.ended(pool, run);
                }
            }
        });
        await(inFlight);
        until(() -> consumer.getState() == Thread.State.WAITING);
        consumer.interrupt();
        join(consumer);
        trial.expect(seen.get().equals("cancelled, still interrupted"),
                "the consumer gets CancellationException and keeps its interrupt status");
        trial.expect(trial.outcome instanceof RunOutcome.Abandoned<Integer> a && a.interrupted(), "the run is abandoned");
        trial.expect(liveWhenCancelled.get() == 0, "every thread of the run finished before hasNext threw");
        return trial.result();
    }

    private static Iterator<Integer> range(int n) {
        return IntStream.range(0, n).iterator();
    }
}
