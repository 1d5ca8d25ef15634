package dev.drain.pool;

import static dev.drain.pool.Workloads.assertNoThreadsLeft;
import static dev.drain.pool.Workloads.drain;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.drain.pool.Workloads.Gate;
import dev.drain.support.Bounds;
import java.io.IOException;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * WP-16: the settings {@link WorkerPool.Builder#build()} refuses and the ones it accepts, at their
 * edges: the retry policy's two halves, which need each other; the worker count's bounds; the
 * largest queue; and the {@code Stream} that a refused {@code run()} was given. On both intakes.
 * The one message that names every invalid setting at once is checked by
 * {@link WorkerPoolContractTest}.
 */
@ParameterizedClass
@EnumSource(WorkerPool.IntakeKind.class)
class SettingsTest {
    /** How many items the runs here handle: a small source. */
    static final int ITEMS = 20;

    private final WorkerPool.IntakeKind intake;

    SettingsTest(WorkerPool.IntakeKind intake) {
        this.intake = intake;
    }

    private WorkerPool.Builder<Integer, String> echo() {
        return WorkerPool.<Integer, String>builder(Workloads.echo()).intake(intake);
    }

    /** The items 0 … ITEMS - 1 as a Stream whose onClose counts into {@code closes}. */
    private static Stream<Integer> items(AtomicInteger closes) {
        return IntStream.range(0, ITEMS).boxed().onClose(closes::incrementAndGet);
    }

    // ---- the retry policy ----------------------------------------------------------------------------

    /** WP-16: maxRetries above zero with nothing retryable is refused by build(), in a message naming maxRetries and retryable. */
    @Test
    void retriesWithNothingRetryableAreRefused() {
        assertThatThrownBy(() -> echo().maxRetries(2).build()).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContainingAll("maxRetries", "retryable");
    }

    /** WP-16: retryable types with maxRetries 0 are refused by build(), in a message naming retryable and maxRetries. */
    @Test
    void retryableTypesWithoutRetriesAreRefused() {
        assertThatThrownBy(() -> echo().retryable(IOException.class).maxRetries(0).build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContainingAll("retryable", "maxRetries");
    }

    // ---- the worker count ----------------------------------------------------------------------------

    /** WP-16: zero workers are refused by build(), in a message naming workers. */
    @Test
    void zeroWorkersAreRefused() {
        assertThatThrownBy(() -> echo().workers(0).build()).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("workers");
    }

    /** WP-16: one worker more than MAX_WORKERS is refused by build(), in a message naming workers. */
    @Test
    void moreThanMaxWorkersAreRefused() {
        assertThatThrownBy(() -> echo().workers(WorkerPool.Builder.MAX_WORKERS + 1).build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("workers");
    }

    /** WP-16: exactly MAX_WORKERS workers are accepted by build() (the pool is not run). */
    @Test
    void maxWorkersAreAccepted() {
        WorkerPool<Integer, String> pool = echo().workers(WorkerPool.Builder.MAX_WORKERS).build();
        assertThat(pool.settings()).startsWith("workers=" + WorkerPool.Builder.MAX_WORKERS + ",");
    }

    // ---- the largest queue ---------------------------------------------------------------------------

    /** WP-16: queueSize(Integer.MAX_VALUE) runs a small Stream source to completion, every item's result delivered. */
    @Test
    void theLargestQueueRunsToCompletion() {
        WorkerPool<Integer, String> pool = echo().workers(2).queueSize(Integer.MAX_VALUE).build();
        Set<String> expected = new HashSet<>();
        IntStream.range(0, ITEMS).forEach(i -> expected.add(Workloads.result(i)));
        try (Results<Integer, String> results = pool.run(items(new AtomicInteger()))) {
            assertThat(new HashSet<>(drain(results))).isEqualTo(expected);
            assertThat(results.outcome()).contains(new RunOutcome.Completed<Integer>(false));
        }
        assertNoThreadsLeft(pool);
    }

    /** WP-16: with queueSize(Integer.MAX_VALUE), the Stream source's onClose runs exactly once. */
    @Test
    void theLargestQueueClosesItsStreamOnce() {
        AtomicInteger closes = new AtomicInteger();
        WorkerPool<Integer, String> pool = echo().workers(2).queueSize(Integer.MAX_VALUE).build();
        try (Results<Integer, String> results = pool.run(items(closes))) {
            assertThat(drain(results)).hasSize(ITEMS);
        }
        assertThat(closes).as("closes of the source").hasValue(1);
        assertNoThreadsLeft(pool);
    }

    // ---- a refused run -------------------------------------------------------------------------------

    /** When a second run() is refused. */
    enum Refused { WHILE_THE_FIRST_RUNS, AFTER_THE_FIRST_ENDED }

    /** WP-16: a run() refused because the pool has run closes the Stream it was given exactly once, before it throws. */
    @ParameterizedTest
    @EnumSource(Refused.class)
    void aRefusedRunClosesItsStreamOnce(Refused when) throws Exception {
        Gate gate = new Gate();
        WorkerPool<Integer, String> pool = WorkerPool.<Integer, String>builder(Workloads.behind(gate)).intake(intake)
                .workers(1).queueSize(1).itemTimeout(Bounds.WAIT).build();
        AtomicInteger closes = new AtomicInteger();
        try (Results<Integer, String> first = pool.run(List.of(1))) {
            if (when == Refused.WHILE_THE_FIRST_RUNS) {
                gate.awaitArrivals(1);
                assertThatThrownBy(() -> pool.run(items(closes))).isInstanceOf(IllegalStateException.class);
                assertThat(closes).as("closes of the refused run's source").hasValue(1);
            }
            gate.open();
            assertThat(drain(first)).containsExactly(Workloads.result(1));
        }
        if (when == Refused.AFTER_THE_FIRST_ENDED) {
            assertThatThrownBy(() -> pool.run(items(closes))).isInstanceOf(IllegalStateException.class);
            assertThat(closes).as("closes of the refused run's source").hasValue(1);
        }
        assertNoThreadsLeft(pool);
    }

    /**
     * WP-16 ("build() rejects an invalid configuration with one IllegalArgumentException naming
     * every invalid setting"), decision 0053 ("the pool asks batchesInFlight() once, when it is
     * built"): a settler whose batchesInFlight() throws a checked exception (sneakily, as a Kotlin
     * or Lombok settler can) is refused like one that throws an unchecked one, naming it.
     */
    @Test
    void aBatchesInFlightThatThrowsACheckedExceptionIsRefusedByName() {
        Settler<Integer> sneaky = new Settler<>() {
            @Override
            public void settle(List<Settlement<Integer>> batch) { }

            @Override
            public int batchesInFlight() {
                throw Workloads.<RuntimeException>sneaky(new IOException("the store's config is unreadable"));
            }
        };
        assertThatThrownBy(() -> WorkerPool.<Integer, String>builder(Workloads.echo()).settler(sneaky).build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("batchesInFlight()");
    }
}
