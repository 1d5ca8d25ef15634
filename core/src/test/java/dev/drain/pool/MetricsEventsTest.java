package dev.drain.pool;

import static dev.drain.pool.Workloads.assertLedgerExact;
import static dev.drain.pool.Workloads.drain;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.drain.pool.Workloads.CountingSource;
import dev.drain.pool.Workloads.Gate;
import dev.drain.pool.Workloads.RecordingSink;
import dev.drain.pool.Workloads.WaitingFeed;
import dev.drain.support.Bounds;
import dev.drain.support.Waits;
import java.io.IOException;
import java.time.Duration;
import java.util.Iterator;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * WP-8, WP-15: the metrics sink receives the events of specs/worker-pool.md ("Metrics events"),
 * in order, each with the detail the table gives it. One worker where the order matters, so that
 * each run has one sequence of events. On both intakes.
 */
@ParameterizedClass
@EnumSource(WorkerPool.IntakeKind.class)
class MetricsEventsTest {
    private final WorkerPool.IntakeKind intake;

    MetricsEventsTest(WorkerPool.IntakeKind intake) {
        this.intake = intake;
    }

    private WorkerPool.Builder<Integer, String> pool(Handler<Integer, String> handler, RecordingSink sink) {
        return WorkerPool.<Integer, String>builder(handler).intake(intake).metrics(sink).name("events");
    }

    /** WP-8: every event is found by its name and prints as that name, and a name that is no event's finds nothing. */
    @Test
    void everyEventIsFoundByItsName() {
        for (MetricsEvent event : MetricsEvent.values()) {
            assertThat(MetricsEvent.ofId(event.id())).as("ofId(%s)", event.id()).contains(event);
            assertThat(event).hasToString(event.id());
        }
        assertThat(MetricsEvent.ofId("attempt.nonsense")).isEmpty();
        assertThat(MetricsEvent.ATTEMPT_FAILED.id()).isEqualTo("attempt.failed");
    }

    /** WP-8, WP-5, WP-6: each attempt's start, success, failure and retry, and an item's permanent failure, are reported in order with their details. */
    @Test
    void attemptsRetriesAndFailuresAreReportedInOrder() {
        RecordingSink sink = new RecordingSink(false);
        AtomicInteger flaky = new AtomicInteger();
        WorkerPool<Integer, String> pool = pool(item -> {
            if (item == 1 && flaky.getAndIncrement() == 0) {
                throw new IOException("flaky " + item);
            }
            if (item == 2) {
                throw new IllegalArgumentException("bad " + item);
            }
            return Workloads.result(item);
        }, sink).workers(1).queueSize(4).retryable(IOException.class).maxRetries(1).build();
        try (Results<Integer, String> results = pool.run(CountingSource.of(3))) {
            assertThat(catchThrowable(() -> drain(results))).isInstanceOf(PoolFailure.class);
            assertLedgerExact(results);
        }
        assertThat(sink.startingWith("item.accepted")).containsExactly("item.accepted item=0", "item.accepted item=1",
                "item.accepted item=2");
        assertThat(sink.startingWith("attempt.", "item.failed")).containsExactly(
                "attempt.started item=0 attempt=1 worker=0",
                "attempt.succeeded item=0 attempt=1 worker=0",
                "attempt.started item=1 attempt=1 worker=0",
                "attempt.failed item=1 attempt=1 worker=0 cause=java.io.IOException: flaky 1",
                "attempt.retry item=1 next_attempt=2",
                "attempt.started item=1 attempt=2 worker=0",
                "attempt.succeeded item=1 attempt=2 worker=0",
                "attempt.started item=2 attempt=1 worker=0",
                "attempt.failed item=2 attempt=1 worker=0 cause=java.lang.IllegalArgumentException: bad 2",
                "item.failed item=2 attempts=1 cause=java.lang.IllegalArgumentException: bad 2");
        assertThat(sink.startingWith("pool.")).containsExactly(
                "pool.drained outcome=Failed pulled=3 succeeded=2 failed=1 discarded=0 cancelled=0");
    }

    /**
     * WP-3, WP-4, WP-8: an attempt that swallows every interrupt is reported timed out, escalated at
     * rounds 2 and 3, then stuck, and it is found stuck no sooner than its timeout plus
     * {@value Watchdog.INTERRUPT_ROUNDS} rounds of waiting, one timeout each.
     */
    @Test
    void aStuckAttemptIsReportedRoundByRound() throws Exception {
        RecordingSink sink = new RecordingSink(false);
        Duration timeout = Duration.ofMillis(50);
        CountDownLatch release = new CountDownLatch(1);
        AtomicLong started = new AtomicLong();
        AtomicLong stuckAfter = new AtomicLong();
        AtomicInteger interrupts = new AtomicInteger();
        Handler<Integer, String> stubborn = Workloads.swallowing(Integer.MAX_VALUE, interrupts, release);
        WorkerPool<Integer, String> pool = pool(item -> {
            started.set(System.nanoTime());
            return stubborn.handle(item);
        }, sink).workers(1).queueSize(1).itemTimeout(timeout).build();
        try (Results<Integer, String> results = pool.run(CountingSource.of(1))) {
            Thread releaser = Thread.ofVirtual().start(() -> {
                try {
                    Waits.until("the attempt is found stuck", () -> results.stats().failed() == 1);
                    stuckAfter.set(System.nanoTime() - started.get());
                } finally {
                    release.countDown(); // whatever happened: a handler left blocked would hang the run's close
                }
            });
            assertThat(catchThrowable(() -> drain(results))).isInstanceOf(PoolFailure.class);
            assertThat(releaser.join(Duration.ofSeconds(20))).as("the releaser ended").isTrue();
            assertThat(Duration.ofNanos(stuckAfter.get())).as("found stuck after the timeout and every round")
                    .isGreaterThanOrEqualTo(timeout.multipliedBy(1 + Watchdog.INTERRUPT_ROUNDS));
            assertLedgerExact(results);
        }
        String attempt = "item=0 attempt=1 worker=0";
        String stuck = attempt + ": the handler was still running after 3 rounds of interrupts, PT0.05S apart";
        assertThat(sink.startingWith("attempt.", "item.failed")).containsExactly(
                "attempt.started " + attempt,
                "attempt.timeout " + attempt + " timeout=PT0.05S",
                "attempt.escalated " + attempt + " round=2",
                "attempt.escalated " + attempt + " round=3",
                "item.failed item=0 attempts=1 cause=dev.drain.pool.StuckAttempt: " + stuck,
                "attempt.stuck " + stuck);
        assertThat(interrupts).as("one interrupt per round").hasValue(Watchdog.INTERRUPT_ROUNDS);
    }

    /** WP-7, WP-8: requestStop() is reported once, with the pool's name, however often it is called; after an abort it is not reported at all. */
    @Test
    void aStopIsReportedOnceAndNeverAfterAnAbort() throws Exception {
        RecordingSink stopped = new RecordingSink(false);
        WorkerPool<Integer, String> once = pool(Workloads.echo(), stopped).build();
        once.requestStop();
        once.requestStop();
        try (Results<Integer, String> results = once.run(CountingSource.of(3))) {
            once.requestStop();
            drain(results);
        }
        assertThat(stopped.startingWith("pool.")).containsExactly("pool.stop_requested events",
                "pool.drained outcome=Completed pulled=0 succeeded=0 failed=0 discarded=0 cancelled=0");

        RecordingSink aborted = new RecordingSink(false);
        CountDownLatch arrived = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        // the attempt outlives the abort's interrupts until released, so the run is still ABORTING at the stop
        Handler<Integer, String> stubborn = Workloads.swallowing(Integer.MAX_VALUE, new AtomicInteger(), release);
        WorkerPool<Integer, String> after = pool(item -> {
            arrived.countDown();
            return stubborn.handle(item);
        }, aborted).workers(1).itemTimeout(Duration.ofMillis(20)).build();
        try (Results<Integer, String> results = after.run(CountingSource.of(1))) {
            try {
                assertThat(arrived.await(Bounds.WAIT.toNanos(), TimeUnit.NANOSECONDS)).as("the attempt started").isTrue();
                after.abort();
                after.requestStop();
                assertThat(after.toString()).as("still aborting when the stop comes").endsWith(", ABORTING]");
            } finally {
                release.countDown(); // a handler left blocked would hang the run's close
            }
            assertThat(catchThrowable(() -> drain(results))).isInstanceOf(PoolAborted.class);
        }
        assertThat(aborted.startingWith("pool.stop_requested")).isEmpty();
    }

    /** WP-12, WP-8: an abort reports how many items it dropped from the intake, each dropped item, and each cancelled attempt, exactly as the outcome lists them. */
    @Test
    void anAbortReportsEveryDroppedAndCancelledItem() throws Exception {
        RecordingSink sink = new RecordingSink(false);
        Gate gate = new Gate(); // never opens: the attempt ends by the abort's interrupt
        WorkerPool<Integer, String> pool = pool(Workloads.behind(gate), sink).workers(1).queueSize(3).build();
        RunOutcome<Integer> outcome;
        try (Results<Integer, String> results = pool.run(CountingSource.of(20))) {
            gate.awaitArrivals(1);
            // 0 in the worker's hands, 1 to 3 queued, 4 held by the producer: the lead at its bound
            Waits.until("the producer holds an item it cannot put",
                    () -> results.stats().pulled() == 5 && results.stats().accepted() == 5);
            pool.abort();
            assertThat(catchThrowable(() -> drain(results))).isInstanceOf(PoolAborted.class);
            outcome = assertLedgerExact(results);
        }
        RunOutcome.Aborted<Integer> aborted = (RunOutcome.Aborted<Integer>) outcome;
        assertThat(sink.startingWith("item.discarded")).containsExactlyInAnyOrderElementsOf(
                aborted.discarded().stream().map(item -> "item.discarded item=" + item).toList());
        assertThat(aborted.discarded()).as("the queued items and the one the producer held")
                .containsExactlyInAnyOrder(1, 2, 3, 4);
        assertThat(sink.startingWith("attempt.cancelled")).containsExactly("attempt.cancelled item=0");
        assertThat(aborted.cancelled()).containsExactly(0);
        assertThat(sink.startingWith("pool.abort")).as("the three the abort took from the intake")
                .containsExactly("pool.abort discarded=3");
    }

    /** WP-13, WP-14, WP-8: an interrupted consumer's run is reported abandoned once, as interrupted, though the consumer then closes it. */
    @Test
    void anAbandonIsReportedOnceWithItsCause() throws Exception {
        RecordingSink sink = new RecordingSink(false);
        Gate gate = new Gate();
        WorkerPool<Integer, String> pool = pool(Workloads.behind(gate), sink).workers(1).queueSize(1).build();
        try (Results<Integer, String> results = pool.run(CountingSource.of(5))) {
            gate.awaitArrivals(1);
            Thread.currentThread().interrupt();
            assertThat(catchThrowable(results::hasNext)).isNotNull();
            assertThat(Thread.interrupted()).as("the interrupt status is kept").isTrue();
        }
        assertThat(sink.startingWith("pool.abandoned")).containsExactly("pool.abandoned consumer interrupted");

        RecordingSink closed = new RecordingSink(false);
        Gate held = new Gate();
        WorkerPool<Integer, String> early = pool(Workloads.behind(held), closed).workers(1).queueSize(1).build();
        try (Results<Integer, String> results = early.run(CountingSource.of(5))) {
            held.awaitArrivals(1);
            assertThat(results.outcome()).as("still running when closed").isEmpty();
        }
        assertThat(closed.startingWith("pool.abandoned")).containsExactly("pool.abandoned results closed");
    }

    /** WP-16, WP-8: a source that throws is reported as source.failed with its cause. */
    @Test
    void aSourceFailureIsReportedWithItsCause() {
        RecordingSink sink = new RecordingSink(false);
        Iterator<Integer> broken = Workloads.endlessCalling(n -> {
            if (n == 2) {
                throw new IllegalStateException("the source broke at 2");
            }
        });
        WorkerPool<Integer, String> pool = pool(Workloads.echo(), sink).workers(1).queueSize(4).build();
        try (Results<Integer, String> results = pool.run(broken)) {
            assertThat(catchThrowable(() -> drain(results))).isNotNull();
            assertLedgerExact(results);
        }
        assertThat(sink.startingWith("source.")).containsExactly(
                "source.failed cause=java.lang.IllegalStateException: the source broke at 2");
        assertThat(sink.startingWith("pool.")).containsExactly(
                "pool.drained outcome=SourceFailed pulled=2 succeeded=2 failed=0 discarded=0 cancelled=0");
        assertThat(IntStream.range(0, 2).mapToObj(i -> "item.accepted item=" + i).toList())
                .isEqualTo(sink.startingWith("item.accepted"));
    }

    /** WP-7, WP-8: a stop that interrupts a source waiting for its next item is reported as source.interrupted, not as source.failed. */
    @Test
    void aStopThatInterruptsTheSourceIsReportedAsSuch() throws Exception {
        RecordingSink sink = new RecordingSink(false);
        WaitingFeed feed = new WaitingFeed(2);
        WorkerPool<Integer, String> pool = pool(Workloads.echo(), sink).workers(1).queueSize(4).build();
        try (Results<Integer, String> results = pool.run(feed)) {
            feed.awaitWaiting();
            pool.requestStop();
            assertThat(drain(results)).hasSize(2);
            assertLedgerExact(results);
        }
        assertThat(sink.startingWith("source.")).containsExactly("source.interrupted cause=java.lang.IllegalStateException: "
                + "the feed was interrupted");
    }
}
