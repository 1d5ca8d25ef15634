package dev.drain.report;

import static org.assertj.core.api.Assertions.assertThat;

import dev.drain.pool.MetricsSink;
import dev.drain.pool.PoolStats;
import dev.drain.pool.Results;
import dev.drain.pool.WorkerPool;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import java.util.stream.IntStream;
import jdk.jfr.consumer.RecordedEvent;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * WP-15: a timeline of {@code ./contract-report --html} is drawn from the pool's own JFR events,
 * never by hand: every attempt event is a bar in its worker's lane with its outcome, every timeout
 * and escalation is a marker, the stop is a run-wide marker, the lead is every pull's; and the
 * page draws exactly that data.
 */
class TimelineTest {
    private static Timeline timeline = new Timeline("", Duration.ZERO, List.of(), List.of(), List.of(), List.of(), 0);
    private static List<RecordedEvent> events = List.of();
    private static PoolStats stats = new PoolStats(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);

    /** A run with a stubborn item (a timeout and two escalations), a retry, plain successes, and a stop. */
    @BeforeAll
    static void record() {
        CountDownLatch stopNow = new CountDownLatch(1);
        MetricsSink sink = (event, detail) -> { };
        WorkerPool<Integer, Integer> pool = WorkerPool.<Integer, Integer>builder(item -> {
            if (item == 0) {
                for (int swallowed = 0; ; swallowed++) {
                    try {
                        new CountDownLatch(1).await(); // only interrupts end this
                    } catch (InterruptedException e) {
                        if (swallowed == 2) {
                            throw e; // gives up at the third interrupt
                        }
                    }
                }
            }
            if (item == 3) {
                stopNow.countDown();
            }
            return item;
        }).workers(2).queueSize(2).itemTimeout(Duration.ofMillis(50)).metrics(sink).name("timeline-test").build();
        Timeline.Recorded<PoolStats> recorded = Timeline.record(() -> {
            try (Results<Integer, Integer> results = pool.run(IntStream.iterate(0, i -> i + 1).boxed())) {
                try {
                    if (!stopNow.await(20, TimeUnit.SECONDS)) {
                        throw new AssertionError("item 3 never ran");
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new AssertionError(e);
                }
                pool.requestStop();
                try {
                    results.forEachRemaining(result -> { });
                } catch (RuntimeException expected) {
                    // item 0 fails (timed out): the run ends with a PoolFailure
                }
                return results.stats();
            }
        });
        stats = recorded.value();
        events = recorded.events().stream().filter(e -> e.getEventType().getName().startsWith("dev.drain.pool.")
                && "timeline-test".equals(e.getString("pool"))).toList();
        timeline = Timeline.of("timeline-test", "timeline-test", recorded.events());
    }

    private static List<RecordedEvent> named(String name) {
        return events.stream().filter(e -> e.getEventType().getName().equals("dev.drain.pool." + name)).toList();
    }

    /** WP-15: every attempt event is one bar, in its worker's lane, with its item, attempt number and outcome. */
    @Test
    void everyAttemptIsABar() {
        assertThat(timeline.bars()).hasSameSizeAs(named("Attempt")).hasSize((int) (stats.succeeded() + stats.failed()
                + stats.cancelled() + stats.retried()));
        assertThat(timeline.bars()).extracting(b -> b.worker() + "/" + b.item() + "/" + b.attempt() + "/" + b.outcome())
                .containsExactlyInAnyOrderElementsOf(named("Attempt").stream().map(e -> e.getInt("worker") + "/"
                        + e.getString("item") + "/" + e.getInt("attempt") + "/" + e.getString("outcome")).toList());
        assertThat(timeline.bars()).anySatisfy(b -> assertThat(b.outcome()).isEqualTo("timed out"));
        assertThat(timeline.workers()).containsAll(timeline.bars().stream().map(Timeline.Bar::worker).toList());
        assertThat(timeline.bars()).allSatisfy(b -> assertThat(b.end()).isGreaterThanOrEqualTo(b.start()));
    }

    /** WP-15, WP-4: the timeout and both escalated rounds are markers in the stubborn attempt's lane; the stop is run-wide. */
    @Test
    void timeoutsRoundsAndTheStopAreMarkers() {
        assertThat(timeline.markers()).filteredOn(m -> m.kind().equals("timeout")).hasSameSizeAs(named("Timeout"))
                .hasSize((int) stats.timedOut());
        assertThat(timeline.markers()).filteredOn(m -> m.kind().startsWith("round")).extracting(Timeline.Marker::kind)
                .containsExactly("round 2", "round 3");
        int stubbornLane = timeline.bars().stream().filter(b -> b.item().equals("0")).findFirst().orElseThrow().worker();
        assertThat(timeline.markers()).filteredOn(m -> !m.kind().equals("stop"))
                .allSatisfy(m -> assertThat(m.worker()).isEqualTo(stubbornLane));
        assertThat(timeline.markers()).filteredOn(m -> m.kind().equals("stop")).singleElement()
                .satisfies(m -> assertThat(m.worker()).isEqualTo(Timeline.RUN));
    }

    /** WP-15, WP-1: the lead is drawn at every pull, reaches the run's maximum lead, and is drawn against its bound. */
    @Test
    void theLeadIsEveryPull() {
        assertThat(timeline.lead()).hasSize((int) stats.pulled());
        assertThat(timeline.lead().stream().mapToLong(Timeline.LeadPoint::lead).max().orElse(0)).isEqualTo(stats.maxLead());
        assertThat(timeline.leadBound()).isEqualTo(2 + 2 + 1);
    }

    /** WP-15: the page draws exactly the timeline's data: a rect per bar, a mark per marker, the lead, and the data itself. */
    @Test
    void thePageDrawsTheData() {
        CaseResult row = new CaseResult("timeline-test", "queue", "", List.of(1, 2), "-", Map.of(1, 1), 2, 5, "normal", "",
                true, 0, 0, 0, List.of(), 1);
        String page = TimelinePage.render(Provenance.now(), List.of(new TimelinePage.Entry(row, "a test run", timeline)));
        assertThat(Pattern.compile("<rect class=\"attempt\"").matcher(page).results().count()).isEqualTo(timeline.bars().size());
        assertThat(Pattern.compile("class=\"marker\"").matcher(page).results().count()).isEqualTo(timeline.markers().size());
        assertThat(page).contains("<polyline class=\"lead\"", "class=\"bound\"", "id=\"timelines\"");
        String data = page.substring(page.indexOf("id=\"timelines\">") + "id=\"timelines\">".length(), page.indexOf("</script>"));
        assertThat(JsonReader.parse(data.strip())).isEqualTo(JsonReader.parse(Json.write(Map.of("timelines",
                List.of(Map.of("id", "timeline-test-queue", "timeline", timeline.toJson()))))));
    }
}
