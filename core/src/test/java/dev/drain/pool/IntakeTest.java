package dev.drain.pool;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * WP-2, WP-12: the {@link Intake} contract that the pool's books rest on, on each intake by
 * itself, with no thread but the test's. {@link LedgerTest} races the same endings inside whole
 * runs, where a window between the producer's look at the run's phase and its put is hit only by
 * chance; here each window is entered on purpose. Every call is expected to return at once: a
 * {@code put} or {@code take} that blocks fails its test at the timeout.
 */
@Timeout(value = 20, unit = TimeUnit.SECONDS)
@ParameterizedClass
@EnumSource(WorkerPool.IntakeKind.class)
class IntakeTest {
    /**
     * Room for every item a test puts and a marker per worker, and one slot more: a sentinel intake
     * that pushed one marker too many would still return (that mutant is equivalent in a run).
     */
    private static final int CAPACITY = 5;
    private static final int WORKERS = 2;

    private final Intake<String> intake;

    IntakeTest(WorkerPool.IntakeKind kind) {
        this.intake = switch (kind) {
            case SHUTDOWN_QUEUE -> new QueueIntake<>(CAPACITY);
            case SENTINEL -> new SentinelIntake<>(CAPACITY, WORKERS);
        };
    }

    /**
     * WP-2, WP-12: a put that comes after {@code abort()} (the producer looked at the run's phase
     * just before the abort) answers {@code false}, so the item stays the producer's to account
     * for, and nothing of it is queued.
     */
    @Test
    void aPutAfterAnAbortIsRefusedAndQueuesNothing() throws InterruptedException {
        intake.put("queued");
        assertThat(intake.abort()).containsExactly("queued");

        assertThat(intake.put("late")).isFalse();
        assertThat(intake.abort()).isEmpty();
    }

    /** WP-12: {@code abort()} hands back every queued item, so that the run reports each as discarded. */
    @Test
    void anAbortHandsBackEveryQueuedItem() throws InterruptedException {
        for (String item : List.of("a", "b", "c", "d")) {
            assertThat(intake.put(item)).isTrue();
        }
        assertThat(intake.abort()).containsExactlyInAnyOrder("a", "b", "c", "d");
    }

    /**
     * WP-2: after the end of input, the workers take every queued item, and then each of them
     * learns of the end ({@code null}), however many there are.
     */
    @Test
    void afterTheEndOfInputEveryItemIsTakenThenEachWorkerEnds() throws InterruptedException {
        intake.put("a");
        intake.put("b");
        intake.endOfInput();

        List<@Nullable String> taken = Arrays.asList(intake.take(), intake.take());
        assertThat(taken).containsExactlyInAnyOrder("a", "b");
        for (int worker = 0; worker < WORKERS; worker++) {
            assertThat(intake.take()).isNull();
        }
    }
}
