package dev.drain.pool;

import static dev.drain.pool.Workloads.assertEveryResultDelivered;
import static dev.drain.pool.Workloads.assertLedgerExact;
import static dev.drain.pool.Workloads.assertNoThreadsLeft;
import static dev.drain.pool.Workloads.drain;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.drain.measure.JvmThreads;
import dev.drain.pool.Workloads.CountingSource;
import dev.drain.pool.Workloads.Gate;
import dev.drain.support.Bounds;
import dev.drain.support.Call;
import dev.drain.support.Spawner;
import dev.drain.support.ThreadKind;
import dev.drain.support.Waits;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * WP-2, WP-10, WP-12: the books are exact under every race of the endings, and the end of the
 * iteration is the end of the run. On both intakes, with the owner on a platform and on a virtual
 * thread.
 */
@ParameterizedClass
@EnumSource(WorkerPool.IntakeKind.class)
class LedgerTest {
    /** How many runs the race tests make; enough that each interleaving shows up. */
    private static final int RUNS = 200 * Bounds.FACTOR;

    private final WorkerPool.IntakeKind intake;

    @RegisterExtension
    final Spawner spawn = new Spawner();

    LedgerTest(WorkerPool.IntakeKind intake) {
        this.intake = intake;
    }

    private WorkerPool.Builder<Integer, String> pool(Handler<Integer, String> handler) {
        return WorkerPool.<Integer, String>builder(handler).intake(intake);
    }

    /**
     * WP-2, WP-12: every item an abort drops is in the outcome, even when the workers exit at once
     * on the dropped intake and the metrics sink is slow on the thread that called abort().
     */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void abortRecordsEveryDropBeforeTheOutcome(ThreadKind kind) throws Exception {
        Gate gate = new Gate(); // never opens: the two attempts end only by the abort's interrupt
        CountDownLatch outcomeSeen = new CountDownLatch(1);
        MetricsSink slowOnTheAborter = (event, detail) -> {
            if (Thread.currentThread().getName().equals("aborter")) {
                outcomeSeen.await(Bounds.WAIT.toNanos(), TimeUnit.NANOSECONDS); // holds abort() back until the end
            }
        };
        WorkerPool<Integer, String> pool = pool(Workloads.behind(gate)).workers(2).queueSize(5)
                .itemTimeout(Bounds.WAIT).metrics(slowOnTheAborter).build();
        Call<Set<Object>> owner = spawn.use(kind).call("owner", () -> {
            try (Results<Integer, String> results = pool.run(CountingSource.endless())) {
                gate.awaitArrivals(2);
                Waits.until("the intake is full, and the producer holds one more",
                        () -> results.stats().accepted() == 2 + 5 + 1);
                Call<Void> aborter = spawn.run("aborter", pool::abort);
                PoolAborted aborted = catchThrowableOfType(PoolAborted.class, results::hasNext);
                outcomeSeen.countDown();
                aborter.value();
                assertLedgerExact(results);
                assertEveryResultDelivered(results); // the consumer read to the end
                assertThat(aborted.discarded()).as("the five queued and the one the producer held")
                        .hasSize(5 + 1).hasSize((int) results.stats().discarded());
                Set<Object> settled = new HashSet<>(aborted.discarded());
                settled.addAll(aborted.cancelled());
                return settled;
            }
        });
        assertThat(owner.value()).hasSize(2 + 5 + 1); // two in flight, five queued, one held by the producer
        assertNoThreadsLeft(pool);
    }

    /** WP-2, WP-12: an abort at a random moment of a busy run leaves exact books, over many runs. */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void abortAtARandomMomentLeavesExactBooks(ThreadKind kind) {
        spawn.use(kind).run("owner", () -> {
            for (int run = 0; run < RUNS; run++) {
                int abortAfter = ThreadLocalRandom.current().nextInt(0, 8);
                WorkerPool<Integer, String> pool = pool(Workloads.echo()).workers(3).queueSize(2).build();
                try (Results<Integer, String> results = pool.run(CountingSource.of(20))) {
                    int seen = 0;
                    try {
                        while (results.hasNext()) {
                            results.next();
                            if (++seen == abortAfter) {
                                pool.abort();
                            }
                        }
                    } catch (PoolAborted expected) {
                        // an abort before the natural end
                    }
                    assertLedgerExact(results);
                    assertEveryResultDelivered(results); // the consumer read to the end
                }
                assertThat(pool.liveThreads()).isZero();
            }
        }).value();
    }

    /**
     * WP-10: when hasNext() returns false, every thread of the run has finished, by the pool's own
     * count and by the JVM's: over many runs, nothing of the run is left at that moment.
     */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void theEndOfTheIterationIsTheEndOfTheRun(ThreadKind kind) {
        spawn.use(kind).run("owner", () -> {
            for (int run = 0; run < RUNS; run++) {
                WorkerPool<Integer, String> pool = pool(Workloads.echo()).workers(4).queueSize(2)
                        .metrics((event, detail) -> { }).name("end-" + intake + "-" + kind + "-" + run).build();
                try (Results<Integer, String> results = pool.run(CountingSource.of(10))) {
                    assertThat(drain(results)).hasSize(10);
                    assertThat(pool.liveThreads()).as("run %s: threads when hasNext() returned false", run).isZero();
                    if (run % 20 == 0) { // a dump takes milliseconds: every twentieth run is also checked by the JVM
                        assertThat(JvmThreads.dump().threadsNamed(pool.name() + "-")).as("run %s", run).isEmpty();
                    }
                }
            }
        }).value();
    }

    /** WP-2, WP-13: closing at a random moment leaves exact books: every pulled item settled once, lists equal to counters. */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void closeAtARandomMomentLeavesExactBooks(ThreadKind kind) {
        spawn.use(kind).run("owner", () -> {
            for (int run = 0; run < RUNS; run++) {
                int closeAfter = ThreadLocalRandom.current().nextInt(0, 8);
                WorkerPool<Integer, String> pool = pool(Workloads.echo()).workers(3).queueSize(2).build();
                Results<Integer, String> results = pool.run(CountingSource.endless());
                for (int seen = 0; seen < closeAfter && results.hasNext(); seen++) {
                    results.next();
                }
                results.close();
                assertThat(assertLedgerExact(results)).isInstanceOf(RunOutcome.Abandoned.class);
                assertThat(pool.liveThreads()).isZero();
            }
        }).value();
    }

    /** WP-2, WP-7, WP-12: a stop and an abort racing each other from two threads leave exact books. */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void stopAndAbortRacingLeaveExactBooks(ThreadKind kind) throws Exception {
        for (int run = 0; run < RUNS / 4; run++) {
            WorkerPool<Integer, String> pool = pool(Workloads.echo()).workers(2).queueSize(2).build();
            try (Results<Integer, String> results = pool.run(CountingSource.endless())) {
                results.next();
                List<Call<Void>> enders = List.of(spawn.use(kind).run("stop", pool::requestStop),
                        spawn.use(kind).run("abort", pool::abort));
                try {
                    drain(results);
                } catch (PoolAborted expected) {
                    // the abort came first, or during the drain
                }
                enders.forEach(Call::value);
                assertLedgerExact(results);
                assertEveryResultDelivered(results); // the consumer read to the end
            }
            assertNoThreadsLeft(pool);
        }
    }

    /**
     * WP-2, WP-13, WP-14: a consumer that stops reading after the run has ended (a close, or an
     * interrupt) leaves the run's outcome as it was and its books exact; the results it did not
     * read are left unread, and counted (succeeded minus delivered).
     */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void aConsumerThatStopsReadingAfterTheEndLeavesTheOutcomeAsItWas(ThreadKind kind) {
        for (boolean interrupt : new boolean[] {false, true}) {
            WorkerPool<Integer, String> pool = pool(Workloads.echo()).workers(4).queueSize(2).build();
            Call<RunOutcome<Integer>> owner = spawn.use(kind).call("owner", () -> {
                Results<Integer, String> results = pool.run(CountingSource.of(3));
                try (results) {
                    assertThat(results.next()).startsWith("r");
                    Waits.until("the run has ended", () -> results.outcome().isPresent() && pool.liveThreads() == 0);
                    if (interrupt) {
                        Thread.currentThread().interrupt();
                        assertThat(catchThrowableOfType(java.util.concurrent.CancellationException.class, results::hasNext))
                                .isNotNull();
                        assertThat(Thread.interrupted()).as("the interrupt status is kept").isTrue();
                    }
                }
                assertThat(results.stats().succeeded() - results.stats().delivered()).as("left unread").isEqualTo(2);
                return assertLedgerExact(results);
            });
            assertThat(owner.value()).isEqualTo(new RunOutcome.Completed<Integer>(false));
            assertNoThreadsLeft(pool);
        }
    }

    /** WP-12, WP-6: an abort after a permanent failure keeps that failure: PoolAborted lists it beside the cancelled item, as the outcome does. */
    @Test
    void anAbortKeepsTheFailuresBeforeIt() throws Exception {
        Gate gate = new Gate(); // never opens: item 1's attempt ends by the abort
        CountDownLatch oneIsIn = new CountDownLatch(1); // item 0 fails only once item 1 is being handled
        WorkerPool<Integer, String> pool = pool(item -> {
            if (item == 0) {
                oneIsIn.await();
                throw new IllegalArgumentException("bad 0");
            }
            oneIsIn.countDown();
            gate.pass();
            return Workloads.result(item);
        }).workers(2).queueSize(2).build();
        try (Results<Integer, String> results = pool.run(CountingSource.of(2))) {
            gate.awaitArrivals(1);
            Waits.until("item 0 has failed", () -> results.stats().failed() == 1);
            pool.abort();
            PoolAborted aborted = catchThrowableOfType(PoolAborted.class, () -> drain(results));
            assertThat(aborted.failures()).singleElement().satisfies(f -> assertThat(f.item()).isEqualTo(0));
            assertThat(aborted.cancelled()).hasSize(1);
            assertThat(aborted.cancelled().getFirst()).as("the cancelled item").isEqualTo(1);
            assertLedgerExact(results);
        }
        assertNoThreadsLeft(pool);
    }
}
