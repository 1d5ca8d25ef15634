package dev.drain.pool;

import static dev.drain.pool.Workloads.assertLedgerExact;
import static dev.drain.pool.Workloads.assertNoThreadsLeft;
import static dev.drain.pool.Workloads.drain;
import static org.assertj.core.api.Assertions.assertThat;

import dev.drain.pool.Workloads.RecordingSink;
import dev.drain.support.ThreadDump;
import dev.drain.support.Waits;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.IntStream;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * WP-8: the sink sees each item's events in the order they happened, and every event of a
 * transition the run accepted before its outcome was decided. On both intakes.
 */
@ParameterizedClass
@EnumSource(WorkerPool.IntakeKind.class)
class EventOrderTest {
    private static final Pattern ITEM = Pattern.compile("^(\\S+) item=(\\d+)[ ]?");

    private final WorkerPool.IntakeKind intake;

    EventOrderTest(WorkerPool.IntakeKind intake) {
        this.intake = intake;
    }

    /**
     * WP-8: over 4,000 items on four workers, every item's first event is item.accepted, and its
     * attempt.started never comes before it (the producer used to report the acceptance only once
     * the item was in the intake, where a worker could already have started it).
     */
    @Test
    void everyItemIsAcceptedBeforeItsAttemptStarts() {
        RecordingSink sink = new RecordingSink(false);
        WorkerPool<Integer, String> pool = WorkerPool.<Integer, String>builder(Workloads.echo()).intake(intake)
                .workers(4).queueSize(4).metrics(sink).build();
        try (Results<Integer, String> results = pool.run(IntStream.range(0, 4_000).boxed())) {
            assertThat(drain(results)).hasSize(4_000);
        }
        Map<Integer, List<String>> byItem = new HashMap<>();
        for (String event : sink.startingWith("item.", "attempt.")) {
            Matcher m = ITEM.matcher(event);
            if (m.find()) {
                byItem.computeIfAbsent(Integer.parseInt(m.group(2)), k -> new ArrayList<>()).add(m.group(1));
            }
        }
        assertThat(byItem).hasSize(4_000);
        assertThat(byItem.entrySet()).as("items whose events did not begin with item.accepted")
                .filteredOn(e -> !e.getValue().getFirst().equals(MetricsEvent.ITEM_ACCEPTED.id())).isEmpty();
        assertThat(byItem.values()).allSatisfy(events -> assertThat(events)
                .containsExactly("item.accepted", "attempt.started", "attempt.succeeded"));
        assertNoThreadsLeft(pool);
    }

    /** A call that comes at the very end of a run, from the sink. */
    enum Late {
        ABORT, REQUEST_STOP;

        void call(WorkerPool<?, ?> pool) {
            switch (this) {
                case ABORT -> pool.abort();
                case REQUEST_STOP -> pool.requestStop();
            }
        }

        MetricsEvent event() {
            return this == ABORT ? MetricsEvent.POOL_ABORT : MetricsEvent.POOL_STOP_REQUESTED;
        }
    }

    /**
     * WP-8, WP-19: an abort or a stop that comes while the driver waits for the last events, once
     * every other thread of the run has finished, is refused: its event never reaches the sink, and
     * the run completes as it would have. Had it been accepted, its event would reach the sink after
     * the outcome, and a sink's fatal error on it could no longer make the run Crashed.
     */
    @ParameterizedTest
    @EnumSource(Late.class)
    void aStopOrAbortWhileTheOutcomeIsDecidedIsRefused(Late late) {
        AtomicReference<@Nullable WorkerPool<Integer, String>> self = new AtomicReference<>();
        List<MetricsEvent> seen = new CopyOnWriteArrayList<>();
        String name = "late-" + late + "-" + intake;
        MetricsSink sink = (event, detail) -> {
            seen.add(event);
            if (event == MetricsEvent.ATTEMPT_SUCCEEDED) {
                WorkerPool<Integer, String> pool = Objects.requireNonNull(self.get());
                Waits.until("the driver waits for the last events before it decides",
                        () -> ThreadDump.someThreadIn(name + "-driver-", "Reporter.flush("));
                late.call(pool);
            }
            if (event == late.event()) {
                throw new OutOfMemoryError("the sink, on " + event); // would make the run Crashed
            }
        };
        WorkerPool<Integer, String> pool = WorkerPool.<Integer, String>builder(Workloads.echo()).intake(intake)
                .workers(1).queueSize(1).metrics(sink).name(name).build();
        self.set(pool);
        try (Results<Integer, String> results = pool.run(List.of(0))) {
            assertThat(drain(results)).containsExactly(Workloads.result(0));
            assertThat(assertLedgerExact(results)).isEqualTo(new RunOutcome.Completed<Integer>(false));
        }
        assertThat(seen).as("events the sink saw").doesNotContain(late.event()).endsWith(MetricsEvent.POOL_DRAINED);
        assertNoThreadsLeft(pool);
    }
}
