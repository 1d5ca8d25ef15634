package dev.drain.pool;

import static dev.drain.pool.Workloads.assertEveryResultDelivered;
import static dev.drain.pool.Workloads.assertLedgerExact;
import static dev.drain.pool.Workloads.assertNoThreadsLeft;
import static dev.drain.pool.Workloads.drain;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.drain.pool.Workloads.Gate;
import dev.drain.pool.Workloads.WaitingFeed;
import dev.drain.support.Bounds;
import dev.drain.support.Call;
import dev.drain.support.Spawner;
import dev.drain.support.ThreadKind;
import dev.drain.support.Waits;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Spliterator;
import java.util.Spliterators;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import java.util.stream.StreamSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * WP-16, WP-18: the source is user code. Whatever its {@code hasNext}, {@code next} or
 * {@code close} throws ends the run as {@link RunOutcome.SourceFailed} once every pulled item is
 * settled (a {@link VirtualMachineError} as {@link RunOutcome.Crashed}), and a {@code Stream}
 * source is closed exactly once on every path. On both intakes.
 */
@ParameterizedClass
@EnumSource(WorkerPool.IntakeKind.class)
class SourceFaultsTest {
    private final WorkerPool.IntakeKind intake;

    @RegisterExtension
    final Spawner spawn = new Spawner();

    SourceFaultsTest(WorkerPool.IntakeKind intake) {
        this.intake = intake;
    }

    private WorkerPool.Builder<Integer, String> pool(Handler<Integer, String> handler) {
        return WorkerPool.<Integer, String>builder(handler).intake(intake).workers(2).queueSize(2);
    }

    /** Where a source fails. */
    enum Fault { HAS_NEXT, NEXT, CLOSE }

    /** What it throws. */
    enum Kind {
        RUNTIME, ERROR, CHECKED;

        Throwable create() {
            return switch (this) {
                case RUNTIME -> new IllegalStateException("the source broke");
                case ERROR -> new AssertionError("the source's own bug");
                case CHECKED -> new IOException("thrown sneakily, as an Iterator can only throw a checked exception");
            };
        }
    }

    /** Items 0, 1, ...; at item 4 the chosen call throws (or close() throws at the end); counts its closes. */
    private static final class FailingSource implements Iterator<Integer> {
        final Fault fault;
        final Throwable thrown;
        int next;

        FailingSource(Fault fault, Throwable thrown) {
            this.fault = fault;
            this.thrown = thrown;
        }

        @Override
        public boolean hasNext() {
            if (fault == Fault.HAS_NEXT && next == 4) {
                throw Workloads.<RuntimeException>sneaky(thrown);
            }
            return next < 8;
        }

        @Override
        public Integer next() {
            if (fault == Fault.NEXT && next == 4) {
                throw Workloads.<RuntimeException>sneaky(thrown);
            }
            return next++;
        }
    }

    /**
     * WP-16, WP-18: a source that throws from hasNext, next or close ends the run as SourceFailed
     * after the pulled items are handled; the iteration rethrows an unchecked throwable as it is
     * and wraps a checked one; the source is closed once.
     */
    @ParameterizedTest
    @EnumSource(Fault.class)
    void sourceThatThrowsEndsTheRunAfterThePulledItems(Fault fault) {
        for (Kind kind : Kind.values()) {
            Throwable thrown = kind.create();
            FailingSource failing = new FailingSource(fault, thrown);
            AtomicInteger closes = new AtomicInteger();
            Stream<Integer> source = StreamSupport.stream(Spliterators.spliteratorUnknownSize(failing, Spliterator.ORDERED),
                    false).onClose(() -> {
                        closes.incrementAndGet();
                        if (fault == Fault.CLOSE) {
                            throw Workloads.<RuntimeException>sneaky(thrown);
                        }
                    });
            WorkerPool<Integer, String> pool = pool(Workloads.echo()).build();
            List<String> got = new ArrayList<>();
            try (Results<Integer, String> results = pool.run(source)) {
                Throwable end = catchThrowable(() -> results.forEachRemaining(got::add));
                if (kind == Kind.CHECKED) {
                    assertThat(end).isInstanceOf(CompletionException.class).hasCause(thrown);
                } else {
                    assertThat(end).as("%s from %s", kind, fault).isSameAs(thrown);
                }
                RunOutcome<Integer> outcome = assertLedgerExact(results);
                assertEveryResultDelivered(results); // the consumer read to the end
                assertThat(outcome).isInstanceOfSatisfying(RunOutcome.SourceFailed.class,
                        failed -> assertThat(failed.cause()).isSameAs(thrown));
                assertThat(results.stats().succeeded()).as("every pulled item handled").isEqualTo(results.stats().pulled());
                assertThat(got).hasSize(fault == Fault.CLOSE ? 8 : 4);
            }
            assertThat(closes).as("closes of the source").hasValue(1);
            assertNoThreadsLeft(pool);
        }
    }
    /** WP-16, WP-18: a source whose next() throws and whose close() then throws too ends with the first failure as the cause, the second suppressed in it. */
    @Test
    void aSecondSourceFailureIsSuppressedInTheFirst() {
        IllegalStateException broken = new IllegalStateException("next() broke");
        IllegalStateException closing = new IllegalStateException("close() broke too");
        Stream<Integer> source = StreamSupport.stream(Spliterators.spliteratorUnknownSize(
                new FailingSource(Fault.NEXT, broken), Spliterator.ORDERED), false).onClose(() -> {
                    throw closing;
                });
        WorkerPool<Integer, String> pool = pool(Workloads.echo()).build();
        try (Results<Integer, String> results = pool.run(source)) {
            assertThat(catchThrowable(() -> drain(results))).isSameAs(broken);
            assertThat(assertLedgerExact(results)).isInstanceOfSatisfying(RunOutcome.SourceFailed.class,
                    failed -> assertThat(failed.cause()).isSameAs(broken));
        }
        assertThat(broken.getSuppressed()).containsExactly(closing);
        assertNoThreadsLeft(pool);
    }

    /** WP-16, WP-19: after a source failure the queued work drains with intake stopped: the pool is STOPPING, not RUNNING. */
    @Test
    void aSourceFailureStopsIntake() throws Exception {
        Gate gate = new Gate();
        WorkerPool<Integer, String> pool = WorkerPool.<Integer, String>builder(Workloads.behind(gate)).intake(intake)
                .workers(1).queueSize(4).build();
        IllegalStateException broken = new IllegalStateException("the source broke at 1");
        try (Results<Integer, String> results = pool.run(Workloads.endlessCalling(n -> {
            if (n == 1) {
                throw broken;
            }
        }))) {
            gate.awaitArrivals(1); // item 0 in the worker's hands, the source already failed at item 1
            Waits.until("the source's failure is recorded", () -> !pool.toString().endsWith(", RUNNING]"));
            assertThat(pool.toString()).endsWith(", STOPPING]");
            gate.open();
            assertThat(catchThrowable(() -> drain(results))).isSameAs(broken);
        }
        assertNoThreadsLeft(pool);
    }

    /** WP-16: a source that gives null ends the run as SourceFailed with a NullPointerException. */
    @Test
    @SuppressWarnings("NullAway") // a null item on purpose
    void nullItemEndsTheRunAsSourceFailed() {
        WorkerPool<Integer, String> pool = pool(Workloads.echo()).build();
        List<Integer> items = new ArrayList<>(List.of(0, 1));
        items.add(null);
        try (Results<Integer, String> results = pool.run(items)) {
            assertThatThrownBy(() -> drain(results)).isInstanceOf(NullPointerException.class)
                    .hasMessageContaining("the source returned null");
            assertThat(assertLedgerExact(results)).isInstanceOf(RunOutcome.SourceFailed.class);
            assertEveryResultDelivered(results); // the consumer read to the end
        }
        assertNoThreadsLeft(pool);
    }

    /** WP-18: a VirtualMachineError from the source ends the run as Crashed, and the iteration throws it. */
    @Test
    void virtualMachineErrorFromTheSourceCrashesTheRun() {
        StackOverflowError overflow = new StackOverflowError("the source recursed");
        WorkerPool<Integer, String> pool = pool(Workloads.echo()).build();
        try (Results<Integer, String> results = pool.run(new FailingSource(Fault.NEXT, overflow))) {
            assertThat(catchThrowable(() -> drain(results))).isSameAs(overflow);
            assertThat(assertLedgerExact(results)).isInstanceOf(RunOutcome.Crashed.class);
            assertEveryResultDelivered(results); // the consumer read to the end
        }
        assertNoThreadsLeft(pool);
    }

    /** How a run over a Stream source ends. */
    enum Ending {
        NATURALLY, STOP, ABORT, ABORT_BEFORE_RUN, STOP_BEFORE_RUN, CLOSE_AT_ONCE, CLOSE_MID_RUN, ITEM_FAILS,
        CONSUMER_INTERRUPTED, SECOND_RUN_REFUSED
    }

    /** WP-16: a Stream source is closed exactly once, whichever way the run ends, the consumer on a platform or a virtual thread. */
    @ParameterizedTest
    @EnumSource(Ending.class)
    void streamSourceIsClosedExactlyOnce(Ending ending) {
        for (ThreadKind kind : ThreadKind.values()) {
            AtomicInteger closes = new AtomicInteger();
            AtomicInteger secondCloses = new AtomicInteger();
            Gate gate = new Gate();
            WorkerPool<Integer, String> pool = pool(item -> {
                if (item == 3 && ending == Ending.ITEM_FAILS) {
                    throw new IllegalStateException("item 3 fails");
                }
                if (ending == Ending.CONSUMER_INTERRUPTED) {
                    gate.pass();
                }
                return Workloads.result(item);
            }).itemTimeout(Bounds.WAIT).build();
            if (ending == Ending.ABORT_BEFORE_RUN) {
                pool.abort();
            } else if (ending == Ending.STOP_BEFORE_RUN) {
                pool.requestStop();
            }
            Stream<Integer> source = Stream.iterate(0, i -> i + 1).limit(ending == Ending.NATURALLY ? 10 : Long.MAX_VALUE)
                    .onClose(closes::incrementAndGet);
            Call<Void> owner = spawn.use(kind).run("owner", () -> {
                Results<Integer, String> results = pool.run(source);
                try (results) {
                    switch (ending) {
                        case CLOSE_AT_ONCE -> { }
                        case CLOSE_MID_RUN -> results.next();
                        case STOP -> {
                            results.next();
                            pool.requestStop();
                            drain(results);
                        }
                        case ABORT -> {
                            results.next();
                            pool.abort();
                            assertThat(catchThrowable(() -> drain(results))).isInstanceOf(PoolAborted.class);
                        }
                        case CONSUMER_INTERRUPTED -> {
                            gate.awaitArrivals(1);
                            Thread.currentThread().interrupt();
                            assertThat(catchThrowable(results::hasNext)).isInstanceOf(CancellationException.class);
                            assertThat(Thread.interrupted()).isTrue();
                        }
                        case SECOND_RUN_REFUSED -> {
                            Stream<Integer> second = Stream.of(1).onClose(secondCloses::incrementAndGet);
                            assertThatThrownBy(() -> pool.run(second)).isInstanceOf(IllegalStateException.class)
                                    .hasMessageContaining("runs once").hasMessageContaining("RUNNING");
                            results.next();
                        }
                        case ABORT_BEFORE_RUN -> assertThatThrownBy(() -> drain(results)).isInstanceOf(PoolAborted.class);
                        case ITEM_FAILS -> assertThatThrownBy(() -> drain(results)).isInstanceOf(PoolFailure.class);
                        case NATURALLY, STOP_BEFORE_RUN -> drain(results);
                    }
                }
                assertLedgerExact(results);
            });
            owner.value();
            Waits.until("the source is closed", () -> closes.get() > 0);
            assertThat(closes).as("%s on a %s thread: closes of the source", ending, kind).hasValue(1);
            if (ending == Ending.SECOND_RUN_REFUSED) {
                assertThat(secondCloses).as("the refused run's source is closed too").hasValue(1);
            }
            assertNoThreadsLeft(pool);
        }
    }

    /** WP-7, WP-18: requestStop() ends a run whose source waits for its next item: the stop interrupts it, and that is no failure. */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void requestStopEndsARunWhoseSourceIsWaiting(ThreadKind kind) throws Exception {
        WaitingFeed feed = new WaitingFeed(3);
        WorkerPool<Integer, String> pool = pool(Workloads.echo()).build();
        Call<RunOutcome<Integer>> owner = spawn.use(kind).call("owner", () -> {
            try (Results<Integer, String> results = pool.run(feed)) {
                assertThat(drain(results)).hasSize(3);
                assertEveryResultDelivered(results);
                return assertLedgerExact(results);
            }
        });
        feed.awaitWaiting();
        pool.requestStop();
        assertThat(owner.value()).isEqualTo(new RunOutcome.Completed<Integer>(true));
        assertNoThreadsLeft(pool);
    }

    /** WP-6, WP-18: a permanent failure ends a run whose source waits for its next item. */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void permanentFailureEndsARunWhoseSourceIsWaiting(ThreadKind kind) {
        WaitingFeed feed = new WaitingFeed(1);
        WorkerPool<Integer, String> pool = pool(item -> {
            feed.awaitWaiting();
            throw new IOException("item " + item + " failed");
        }).build();
        Call<PoolFailure> owner = spawn.use(kind).call("owner", () -> {
            try (Results<Integer, String> results = pool.run(feed)) {
                return catchThrowableOfType(PoolFailure.class, () -> drain(results));
            }
        });
        assertThat(java.util.Objects.requireNonNull(owner.value(), "the PoolFailure").failures()).hasSize(1);
        assertNoThreadsLeft(pool);
    }

    /** WP-16, WP-18: a Stream already used fails the run as SourceFailed, on the producer's thread, and is still closed once. */
    @Test
    void aUsedStreamFailsTheRunAndIsClosed() {
        AtomicInteger closes = new AtomicInteger();
        Stream<Integer> used = Stream.of(1, 2).onClose(closes::incrementAndGet);
        assertThat(used.count()).isEqualTo(2);
        WorkerPool<Integer, String> pool = pool(Workloads.echo()).build();
        try (Results<Integer, String> results = pool.run(used)) {
            assertThatThrownBy(() -> drain(results)).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("stream has already been operated upon or closed");
            assertThat(assertLedgerExact(results)).isInstanceOf(RunOutcome.SourceFailed.class);
        }
        assertThat(closes).hasValue(1);
        assertNoThreadsLeft(pool);
    }

    /** WP-16, WP-19: a second run() names the state, whatever the stream it is given, and closes that stream. */
    @Test
    void aSecondRunNamesTheStateAndClosesTheStream() {
        WorkerPool<Integer, String> pool = pool(Workloads.echo()).build();
        try (Results<Integer, String> results = pool.run(List.of(1))) {
            assertThat(drain(results)).hasSize(1);
        }
        AtomicInteger closes = new AtomicInteger();
        Stream<Integer> used = Stream.of(1, 2).onClose(closes::incrementAndGet);
        assertThat(used.count()).isEqualTo(2);
        assertThatThrownBy(() -> pool.run(used)).isInstanceOf(IllegalStateException.class).hasMessageContaining("runs once");
        assertThat(closes).hasValue(1);
    }
}
