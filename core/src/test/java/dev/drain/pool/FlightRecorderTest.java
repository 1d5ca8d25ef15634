package dev.drain.pool;

import static dev.drain.pool.Workloads.assertNoThreadsLeft;
import static dev.drain.pool.Workloads.drain;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.drain.pool.Workloads.CountingSource;
import dev.drain.pool.Workloads.Gate;
import dev.drain.support.Bounds;
import dev.drain.support.Waits;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicInteger;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;
import org.junit.jupiter.api.Test;

/** WP-15: a JDK Flight Recorder recording shows the pool's life: attempts, escalations, stop, abort and abandon. */
class FlightRecorderTest {

    /** Records the pool's events while {@code body} runs; returns them. */
    private static List<RecordedEvent> record(Runnable body) throws IOException {
        try (Recording recording = new Recording()) {
            for (String event : List.of("Attempt", "Escalation", "StopRequested", "Abort", "Abandon")) {
                recording.enable("dev.drain.pool." + event).withThreshold(Duration.ZERO);
            }
            recording.start();
            body.run();
            recording.stop();
            Path file = Files.createTempFile("drain", ".jfr");
            try {
                recording.dump(file);
                return RecordingFile.readAllEvents(file);
            } finally {
                Files.delete(file);
            }
        }
    }

    /** The events of one type, in the order they happened (a recording file need not be in order). */
    private static List<RecordedEvent> named(List<RecordedEvent> events, String name) {
        return events.stream().filter(e -> e.getEventType().getName().equals("dev.drain.pool." + name))
                .sorted(Comparator.comparing(RecordedEvent::getStartTime)).toList();
    }

    /** WP-15: each attempt is an event with its item, attempt number, worker, outcome and duration. */
    @Test
    void attemptsAreRecorded() throws IOException {
        WorkerPool<Integer, String> pool = WorkerPool.<Integer, String>builder(Workloads.echo()).workers(2).build();
        List<RecordedEvent> events = record(() -> {
            try (Results<Integer, String> results = pool.run(CountingSource.of(5))) {
                assertThat(drain(results)).hasSize(5);
            }
        });
        List<RecordedEvent> attempts = named(events, "Attempt");
        assertThat(attempts).hasSize(5).allSatisfy(e -> {
            assertThat(e.getString("pool")).isEqualTo(pool.name());
            assertThat(e.getInt("attempt")).isOne();
            assertThat(e.getInt("worker")).isBetween(0, 1);
            assertThat(e.getString("outcome")).isEqualTo("succeeded");
            assertThat(e.getDuration()).isPositive();
        });
        assertThat(attempts).extracting(e -> e.getString("item")).containsExactlyInAnyOrder("0", "1", "2", "3", "4");
        assertNoThreadsLeft(pool);
    }

    /** WP-15, WP-4: a handler that swallows interrupts shows as a timed-out attempt with its escalations. */
    @Test
    void escalationsAreRecorded() throws IOException {
        WorkerPool<Integer, String> pool = WorkerPool.<Integer, String>builder(
                        Workloads.swallowing(2, new AtomicInteger(), new CountDownLatch(1)))
                .itemTimeout(Duration.ofMillis(100)).build();
        List<RecordedEvent> events = record(() -> {
            try (Results<Integer, String> results = pool.run(List.of(1))) {
                assertThatThrownBy(results::hasNext).isInstanceOf(PoolFailure.class);
            }
        });
        assertThat(named(events, "Escalation")).extracting(e -> e.getInt("round")).containsExactly(2, 3);
        assertThat(named(events, "Attempt")).singleElement()
                .satisfies(e -> assertThat(e.getString("outcome")).isEqualTo("timed out"));
        assertNoThreadsLeft(pool);
    }

    /** WP-15: requestStop and abort are events; the abort says how many queued items it dropped. */
    @Test
    void stopAndAbortAreRecorded() throws IOException {
        Gate gate = new Gate();
        WorkerPool<Integer, String> pool = WorkerPool.<Integer, String>builder(Workloads.behind(gate))
                .workers(1).queueSize(2).itemTimeout(Bounds.WAIT).build();
        List<RecordedEvent> events = record(() -> {
            try (Results<Integer, String> results = pool.run(CountingSource.endless())) {
                gate.awaitArrivals(1);
                Waits.until("the queue is full, and the producer holds one more", () -> results.stats().accepted() == 4);
                pool.requestStop();
                pool.abort();
                assertThatThrownBy(results::hasNext).isInstanceOf(PoolAborted.class);
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
        });
        assertThat(named(events, "StopRequested")).hasSize(1);
        assertThat(named(events, "Abort")).singleElement()
                .satisfies(e -> assertThat(e.getInt("discarded")).isEqualTo(2));
        // The worker's attempt, and possibly the producer's: after the stop it handles the item it
        // held itself, and the abort cancels that attempt too.
        assertThat(named(events, "Attempt")).isNotEmpty()
                .allSatisfy(e -> assertThat(e.getString("outcome")).isEqualTo("cancelled"));
        assertNoThreadsLeft(pool);
    }

    /** WP-15, WP-13, WP-14: an abandon is an event that says whether the consumer was interrupted, or closed the results early. */
    @Test
    void abandonsAreRecorded() throws IOException {
        WorkerPool<Integer, String> closed = WorkerPool.<Integer, String>builder(Workloads.echo()).workers(2).build();
        WorkerPool<Integer, String> interrupted = WorkerPool.<Integer, String>builder(Workloads.echo()).workers(2).build();
        List<RecordedEvent> events = record(() -> {
            try (Results<Integer, String> results = closed.run(CountingSource.endless())) {
                results.next();
            }
            try (Results<Integer, String> results = interrupted.run(CountingSource.endless())) {
                Thread.currentThread().interrupt(); // decision 0002: hasNext() with the interrupt set is an interrupted wait
                assertThatThrownBy(results::hasNext).isInstanceOf(java.util.concurrent.CancellationException.class);
                assertThat(Thread.interrupted()).as("the interrupt is set again").isTrue();
            }
        });
        assertThat(named(events, "Abandon")).extracting(e -> e.getString("pool") + " " + e.getBoolean("interrupted"))
                .containsExactly(closed.name() + " false", interrupted.name() + " true");
        assertNoThreadsLeft(closed);
        assertNoThreadsLeft(interrupted);
    }
}
