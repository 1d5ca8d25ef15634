package dev.drain.pool;

import static dev.drain.pool.Workloads.assertEveryResultDelivered;
import static dev.drain.pool.Workloads.assertLedgerExact;
import static dev.drain.pool.Workloads.assertNoThreadsLeft;
import static dev.drain.pool.Workloads.drain;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.drain.pool.Workloads.RecordingSink;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * WP-6, WP-18: a handler may throw anything, and an item's {@code toString} (or an exception's
 * message) may too. What a handler throws, {@code Error}s and {@link VirtualMachineError}s included,
 * fails its attempt (it ran on a thread of its own, which is gone); text that cannot be built, a
 * {@code StackOverflowError} included, is described in events and messages and changes nothing
 * else (decision 0027). On both intakes.
 */
@ParameterizedClass
@EnumSource(WorkerPool.IntakeKind.class)
class HandlerFaultsTest {
    private final WorkerPool.IntakeKind intake;

    HandlerFaultsTest(WorkerPool.IntakeKind intake) {
        this.intake = intake;
    }

    /** What a handler throws. */
    enum Thrown {
        ERROR, VIRTUAL_MACHINE_ERROR, INTERRUPTED_WITHOUT_AN_INTERRUPT;

        Throwable create(int item) {
            return switch (this) {
                case ERROR -> new AssertionError("handler bug at " + item);
                case VIRTUAL_MACHINE_ERROR -> new StackOverflowError("handler recursed at " + item);
                case INTERRUPTED_WITHOUT_AN_INTERRUPT -> new InterruptedException("the handler's own, at " + item);
            };
        }
    }

    /** WP-6, WP-18: whatever a handler throws fails that item alone, with that cause; every other item is handled. */
    @ParameterizedTest
    @EnumSource(Thrown.class)
    void whateverAHandlerThrowsFailsItsItem(Thrown thrown) {
        WorkerPool<Integer, String> pool = WorkerPool.<Integer, String>builder(item -> {
            if (item == 2) {
                throw Workloads.<Exception>sneaky(thrown.create(item));
            }
            return Workloads.result(item);
        }).intake(intake).workers(2).queueSize(4).build();
        List<String> got = new ArrayList<>();
        try (Results<Integer, String> results = pool.run(IntStream.range(0, 5).boxed())) {
            PoolFailure failure = catchThrowableOfType(PoolFailure.class, () -> results.forEachRemaining(got::add));
            assertThat(failure.failures()).singleElement().satisfies(f -> {
                assertThat(f.item()).isEqualTo(2);
                assertThat(f.cause()).hasMessageContaining("at 2").isInstanceOf(thrown.create(2).getClass());
            });
            assertLedgerExact(results);
            assertEveryResultDelivered(results); // the consumer read to the end
        }
        assertThat(got).as("every pulled item but 2 succeeded").doesNotContain(Workloads.result(2));
        assertNoThreadsLeft(pool);
    }

    /** An item whose toString throws. */
    record Unprintable(int n, boolean overflow) {
        @Override
        public String toString() {
            if (overflow) {
                throw new StackOverflowError("toString recursed");
            }
            throw new IllegalStateException("no text for " + n);
        }
    }

    /** WP-18: items whose toString throws are described in events and in a timeout's message, and the run is unaffected. */
    @Test
    void itemsWhoseToStringThrowsAreDescribed() {
        RecordingSink sink = new RecordingSink(false);
        WorkerPool<Unprintable, Integer> pool = WorkerPool.<Unprintable, Integer>builder(item -> {
            if (item.n() == 0) {
                new CountDownLatch(1).await(); // times out: its TimeoutException names the item
            }
            return item.n();
        }).intake(intake).workers(2).queueSize(2).itemTimeout(Duration.ofMillis(100)).metrics(sink).build();
        try (Results<Unprintable, Integer> results = pool.run(IntStream.range(0, 6).mapToObj(n -> new Unprintable(n, false)))) {
            PoolFailure failure = catchThrowableOfType(PoolFailure.class, () -> drain(results));
            assertThat(failure.getMessage()).contains("whose toString() threw java.lang.IllegalStateException");
            assertThat(failure.failures()).singleElement().satisfies(f -> assertThat(f.cause().getMessage())
                    .contains("<a dev.drain.pool.HandlerFaultsTest$Unprintable whose toString() threw"));
            RunOutcome<Unprintable> outcome = results.outcome().orElseThrow();
            assertThat(outcome).isInstanceOf(RunOutcome.Failed.class);
            assertThat(results.stats().succeeded()).isEqualTo(results.stats().pulled() - 1);
        }
        assertThat(sink.named(MetricsEvent.ATTEMPT_STARTED)).isNotEmpty()
                .allSatisfy(event -> assertThat(event).contains("whose toString() threw"));
        assertNoThreadsLeft(pool);
    }

    /**
     * WP-18 (decision 0027): an item whose toString overflows the stack is described wherever the
     * pool prints it, and the run ends as it would for a printable item: Completed, every item
     * handled once.
     */
    @Test
    void itemWhoseToStringOverflowsIsDescribed() {
        RecordingSink sink = new RecordingSink(false);
        WorkerPool<Unprintable, Integer> pool = WorkerPool.<Unprintable, Integer>builder(Unprintable::n).intake(intake)
                .workers(2).queueSize(2).metrics(sink).build();
        try (Results<Unprintable, Integer> results = pool.run(IntStream.range(0, 6).mapToObj(n -> new Unprintable(n, n == 3)))) {
            assertThat(drain(results)).containsExactlyInAnyOrder(0, 1, 2, 3, 4, 5);
            assertThat(assertLedgerExact(results)).isEqualTo(new RunOutcome.Completed<Unprintable>(false));
        }
        assertThat(sink.named(MetricsEvent.ATTEMPT_STARTED)).anySatisfy(event -> assertThat(event)
                .contains("<a dev.drain.pool.HandlerFaultsTest$Unprintable whose toString() threw java.lang.StackOverflowError>"));
        assertNoThreadsLeft(pool);
    }

    /**
     * WP-18, WP-3 (decision 0027): an item whose toString overflows in its worker's own hands (the
     * message of its timeout names it) fails with that timeout, which describes it.
     */
    @Test
    void itemWhoseToStringOverflowsOnItsWorkerTimesOut() {
        WorkerPool<Unprintable, Integer> pool = WorkerPool.<Unprintable, Integer>builder(item -> {
            new CountDownLatch(1).await(); // times out, and the timeout's message prints the item
            return item.n();
        }).intake(intake).workers(1).queueSize(1).itemTimeout(Duration.ofMillis(20)).build();
        try (Results<Unprintable, Integer> results = pool.run(IntStream.range(0, 1).mapToObj(n -> new Unprintable(n, true)))) {
            PoolFailure failure = catchThrowableOfType(PoolFailure.class, () -> drain(results));
            assertThat(failure.failures()).singleElement().satisfies(f -> assertThat(f.cause())
                    .isInstanceOf(java.util.concurrent.TimeoutException.class)
                    .hasMessageContaining("whose toString() threw java.lang.StackOverflowError"));
            assertThat(assertLedgerExact(results)).isInstanceOf(RunOutcome.Failed.class);
        }
        assertNoThreadsLeft(pool);
    }

    /** A handler's exception whose message overflows the stack when it is built: its cause chain is a cycle. */
    static final class Cyclic extends Exception {
        @java.io.Serial
        private static final long serialVersionUID = 1L;

        Cyclic(int item) {
            super("at " + item);
        }

        @Override
        public String getMessage() {
            return "at item, caused by " + getCause(); // the cause's toString asks for this message again
        }

        static Cyclic at(int item) {
            Cyclic first = new Cyclic(item);
            Cyclic second = new Cyclic(item);
            first.initCause(second);
            second.initCause(first); // initCause allows a cycle of two
            return first;
        }
    }

    /**
     * WP-18, WP-8 (decision 0027): a handler's exception whose message overflows the stack when built
     * fails just its item, and the run ends the same way with a metrics sink as without one.
     */
    @ParameterizedTest
    @org.junit.jupiter.params.provider.ValueSource(booleans = {false, true})
    void anExceptionWhoseMessageOverflowsFailsJustItsItemSinkOrNot(boolean withSink) {
        RecordingSink sink = new RecordingSink(false);
        // Item 1 fails only once the other three are in a worker's hands, so that its failure, which
        // stops the intake, cannot leave one of them unpulled: the other worker handles all three.
        CountDownLatch othersTaken = new CountDownLatch(3);
        WorkerPool.Builder<Integer, String> builder = WorkerPool.<Integer, String>builder(item -> {
            if (item == 1) {
                assertThat(othersTaken.await(10, TimeUnit.SECONDS)).as("the other three taken").isTrue();
                throw Cyclic.at(item);
            }
            othersTaken.countDown();
            return Workloads.result(item);
        }).intake(intake).workers(2).queueSize(2);
        WorkerPool<Integer, String> pool = (withSink ? builder.metrics(sink) : builder).build();
        try (Results<Integer, String> results = pool.run(IntStream.range(0, 4).boxed())) {
            PoolFailure failure = catchThrowableOfType(PoolFailure.class, () -> drain(results));
            assertThat(failure.failures()).singleElement().satisfies(f -> {
                assertThat(f.item()).isEqualTo(1);
                assertThat(f.cause()).isInstanceOf(Cyclic.class);
            });
            assertThat(failure.getMessage()).contains("whose toString() threw java.lang.StackOverflowError");
            assertThat(assertLedgerExact(results)).isInstanceOf(RunOutcome.Failed.class);
            assertThat(results.stats().succeeded()).isEqualTo(3);
        }
        if (withSink) {
            assertThat(sink.named(MetricsEvent.ITEM_FAILED)).singleElement().asString()
                    .contains("item=1", "whose toString() threw java.lang.StackOverflowError");
        }
        assertNoThreadsLeft(pool);
    }

    /**
     * WP-12, WP-5: an attempt that fails with a retryable exception in a run being aborted (here the
     * handler aborts its own run, then throws) is not retried: its item is cancelled, and no second
     * attempt of it starts.
     */
    @Test
    void aRetryableFailureInAnAbortedRunIsNotRetried() {
        // The handler's throw races the watchdog, which the abort wakes to cancel the attempt: where
        // the watchdog comes first the attempt ends cancelled, not failed. The throw came first in
        // about four runs of five here, so the run is repeated.
        for (int run = 0; run < 5; run++) {
            AtomicReference<WorkerPool<Integer, String>> self = new AtomicReference<>();
            Workloads.Attempts attempts = new Workloads.Attempts();
            RecordingSink sink = new RecordingSink(false);
            WorkerPool<Integer, String> pool = WorkerPool.<Integer, String>builder(item -> {
                attempts.next(item);
                Objects.requireNonNull(self.get()).abort();
                throw new IOException("retryable, at " + item);
            }).intake(intake).workers(1).queueSize(1).retryable(IOException.class).maxRetries(3).metrics(sink).build();
            self.set(pool);
            try (Results<Integer, String> results = pool.run(IntStream.range(0, 1).boxed())) {
                assertThat(catchThrowable(() -> drain(results))).isInstanceOf(PoolAborted.class);
                assertThat(assertLedgerExact(results).cancelled()).containsExactly(0);
                assertThat(results.stats().retried()).as("retries").isZero();
            }
            assertThat(attempts.of(0)).as("attempts at the item").isOne();
            // the sink hears an attempt's start before its thread is forked, so a second attempt would be
            // heard even where the cancellation kept its handler from being called
            assertThat(sink.named(MetricsEvent.ATTEMPT_STARTED)).as("attempts started").hasSize(1);
            assertNoThreadsLeft(pool);
        }
    }

    /** WP-6, WP-15: a PoolFailure's message counts the failed items and gives each one's item, attempts and cause, in the order they failed. */
    @Test
    void aPoolFailureSaysWhatFailedAndHow() {
        WorkerPool<Integer, String> pool = WorkerPool.<Integer, String>builder(item -> {
            throw new IOException("broken " + item);
        }).intake(intake).workers(1).queueSize(4).retryable(IOException.class).maxRetries(1).build();
        try (Results<Integer, String> results = pool.run(IntStream.range(0, 1).boxed())) {
            PoolFailure one = catchThrowableOfType(PoolFailure.class, () -> drain(results));
            assertThat(one).hasMessage("1 item failed: 0 after 2 attempts (java.io.IOException: broken 0)");
        }
        CountDownLatch pulledBoth = new CountDownLatch(2);
        Iterator<Integer> two = Workloads.calling(2, n -> pulledBoth.countDown());
        // both items are pulled before the first fails (the first failure stops intake)
        WorkerPool<Integer, String> gated = WorkerPool.<Integer, String>builder(item -> {
            pulledBoth.await();
            throw new IllegalStateException("bad " + item);
        }).intake(intake).workers(1).queueSize(4).build();
        try (Results<Integer, String> results = gated.run(two)) {
            PoolFailure both = catchThrowableOfType(PoolFailure.class, () -> drain(results));
            assertThat(both).hasMessage("2 items failed: 0 after 1 attempt (java.lang.IllegalStateException: bad 0); "
                    + "1 after 1 attempt (java.lang.IllegalStateException: bad 1)");
        }
    }
}
