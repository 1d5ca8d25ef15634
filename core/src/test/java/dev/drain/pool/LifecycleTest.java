package dev.drain.pool;

import static dev.drain.pool.Workloads.assertEveryResultDelivered;
import static dev.drain.pool.Workloads.assertLedgerExact;
import static dev.drain.pool.Workloads.assertNoThreadsLeft;
import static dev.drain.pool.Workloads.drain;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import dev.drain.pool.Workloads.CountingSource;
import dev.drain.pool.Workloads.RecordingSink;
import dev.drain.support.Bounds;
import dev.drain.support.Waits;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * WP-19: a run has one state, NEW → RUNNING → STOPPING | ABORTING | ABANDONING → ENDED → CLOSED,
 * moving only forward; every call that the state forbids fails with one line that names the
 * state, and every call the state makes pointless does nothing. On both intakes.
 */
@ParameterizedClass
@EnumSource(WorkerPool.IntakeKind.class)
class LifecycleTest {
    private final WorkerPool.IntakeKind intake;

    LifecycleTest(WorkerPool.IntakeKind intake) {
        this.intake = intake;
    }

    private WorkerPool<Integer, String> pool() {
        return WorkerPool.<Integer, String>builder(Workloads.echo()).intake(intake).workers(2).queueSize(2).build();
    }

    /** WP-19: the pool's toString, and its results', show the state as the run moves through it. */
    @Test
    void thePoolShowsItsState() {
        WorkerPool<Integer, String> pool = pool();
        assertThat(pool.toString()).endsWith(", NEW]");
        try (Results<Integer, String> results = pool.run(CountingSource.endless())) {
            results.next();
            assertThat(pool.toString()).endsWith(", RUNNING]");
            assertThat(results.toString()).startsWith("Results[" + pool.name() + " RUNNING, pulled=");
            pool.requestStop();
            assertThat(pool.toString()).containsAnyOf(", STOPPING]", ", ENDED]");
            drain(results);
            assertThat(pool.toString()).endsWith(", ENDED]");
        }
        assertThat(pool.toString()).endsWith(", CLOSED]");
        assertNoThreadsLeft(pool);
    }

    /** WP-16: settings() gives the configuration in one line: workers, queue, timeout, retry policy, intake, whether there is a sink, and the settler's batches. */
    @Test
    void theSettingsSayHowThePoolIsConfigured() {
        assertThat(WorkerPool.<Integer, String>builder(Workloads.echo()).workers(3).queueSize(5).build().settings())
                .isEqualTo("workers=3, queueSize=5, itemTimeout=PT30S, retries=none, intake=SHUTDOWN_QUEUE, metrics=no, settler=no");
        assertThat(WorkerPool.<Integer, String>builder(Workloads.echo()).retryable(java.io.IOException.class)
                .maxRetries(2).intake(WorkerPool.IntakeKind.SENTINEL).metrics((event, detail) -> { }).build().settings())
                .isEqualTo("workers=4, queueSize=16, itemTimeout=PT30S, retries=[IOException] x2, intake=SENTINEL, metrics=yes, settler=no");
        assertThat(WorkerPool.<Integer, String>builder(Workloads.echo()).settler(batch -> { }).settleBatch(8).build()
                .settings()).endsWith("metrics=no, settler=yes, batches of 8");
    }

    /** WP-19: a second run() fails with a message naming the state, whether the first is running or over. */
    @Test
    void aSecondRunNamesTheState() {
        WorkerPool<Integer, String> pool = pool();
        try (Results<Integer, String> results = pool.run(CountingSource.endless())) {
            results.next();
            assertThatThrownBy(() -> pool.run(List.of(1))).isInstanceOf(IllegalStateException.class)
                    .hasMessage("a WorkerPool runs once, and this one is RUNNING; build another from the same Builder for another run");
        }
        assertThatThrownBy(() -> pool.run(List.of(1))).hasMessageContaining("this one is CLOSED");
        assertNoThreadsLeft(pool);
    }

    /** WP-19: next() past the end fails with a message naming the state; hasNext() keeps returning false. */
    @Test
    void nextPastTheEndNamesTheState() {
        WorkerPool<Integer, String> pool = pool();
        Results<Integer, String> results = pool.run(List.of(1));
        try (results) {
            assertThat(drain(results)).hasSize(1);
            assertThat(results.hasNext()).isFalse();
            assertThatThrownBy(results::next).isInstanceOf(NoSuchElementException.class)
                    .hasMessage("no more results: the run is ENDED");
        }
        assertThat(results.hasNext()).isFalse();
        assertThatThrownBy(results::next).hasMessage("no more results: the run is CLOSED");
        assertNoThreadsLeft(pool);
    }

    /** WP-19, WP-12: an abort before the run starts the run aborted: nothing is pulled, and the end is PoolAborted with nothing in it. */
    @Test
    void abortBeforeTheRunStartsItAborted() {
        WorkerPool<Integer, String> pool = pool();
        pool.abort();
        CountingSource source = CountingSource.of(10);
        try (Results<Integer, String> results = pool.run(source)) {
            assertThatThrownBy(results::hasNext).isInstanceOf(PoolAborted.class);
            assertThat(assertLedgerExact(results)).isEqualTo(new RunOutcome.Aborted<Integer>(List.of(), List.of(), List.of()));
            assertEveryResultDelivered(results); // the consumer read to the end
        }
        assertThat(source.pulled()).isZero();
        assertNoThreadsLeft(pool);
    }

    /** WP-19: after the end, requestStop(), abort() and a second close() do nothing. */
    @Test
    void callsAfterTheEndDoNothing() {
        WorkerPool<Integer, String> pool = pool();
        Results<Integer, String> results = pool.run(List.of(1, 2));
        try (results) {
            assertThat(drain(results)).hasSize(2);
            pool.requestStop();
            pool.abort();
            assertThat(results.outcome()).contains(new RunOutcome.Completed<Integer>(false));
        }
        results.close();
        pool.abort();
        assertThat(results.outcome()).contains(new RunOutcome.Completed<Integer>(false));
        assertNoThreadsLeft(pool);
    }

    /**
     * WP-19: an abort() while a crash is cancelling the run does nothing: the sink hears
     * {@code pool.abort} once, for the crash, and the run still ends Crashed.
     */
    @Test
    void abortAfterACrashDoesNothing() {
        OutOfMemoryError fatal = new OutOfMemoryError("the source, at item 1");
        CountDownLatch started = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        AtomicInteger interrupts = new AtomicInteger();
        Handler<Integer, String> swallowing = Workloads.swallowing(Integer.MAX_VALUE, interrupts, release);
        RecordingSink sink = new RecordingSink(false);
        WorkerPool<Integer, String> pool = WorkerPool.<Integer, String>builder(item -> {
            started.countDown();
            return swallowing.handle(item);
        }).intake(intake).workers(1).queueSize(2).metrics(sink).build();
        Iterator<Integer> source = Workloads.calling(2, item -> {
            if (item == 1) {
                awaitBounded(started);
                throw fatal; // a VirtualMachineError from the source crashes the run
            }
        });
        try (Results<Integer, String> results = pool.run(source)) {
            Waits.until("the crash interrupts the running attempt", () -> interrupts.get() > 0);
            pool.abort(); // the run is ABORTING, by the crash, not by a request
            release.countDown();
            assertThat(catchThrowable(() -> drain(results))).isSameAs(fatal);
            assertThat(assertLedgerExact(results)).isInstanceOf(RunOutcome.Crashed.class);
        }
        assertThat(sink.named(MetricsEvent.POOL_ABORT)).as("pool.abort events").hasSize(1);
        assertNoThreadsLeft(pool);
    }

    private static void awaitBounded(CountDownLatch latch) {
        try {
            assertThat(latch.await(Bounds.WAIT.toNanos(), TimeUnit.NANOSECONDS)).as("the latch opens").isTrue();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted while waiting", e);
        }
    }
}
