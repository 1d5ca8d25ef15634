package dev.drain.report;

import static org.assertj.core.api.Assertions.assertThat;

import dev.drain.measure.Json;
import dev.drain.measure.JsonReader;
import dev.drain.measure.Provenance;
import dev.drain.pool.MetricsSink;
import dev.drain.pool.PoolStats;
import dev.drain.pool.Results;
import dev.drain.pool.WorkerPool;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.IntStream;
import jdk.jfr.consumer.RecordedEvent;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * WP-15: a timeline of {@code ./contract-report --html} is drawn from the pool's own JFR events,
 * never by hand: every attempt event is a bar in its worker's lane with its outcome, labelled with
 * its item, drawn as retried when a later attempt of its item followed; every timeout and
 * escalation is a marker, the stop is a run-wide marker, the lead is every pull's; the page draws
 * exactly that data, and each of its colours means one thing.
 */
class TimelineTest {
    private static Timeline timeline = new Timeline("", Duration.ZERO, List.of(), List.of(), List.of(), List.of(), 0);
    private static List<RecordedEvent> events = List.of();
    private static PoolStats stats = new PoolStats(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);

    /** A run with a stubborn item (a timeout and two escalations), a retry, plain successes, and a stop. */
    @BeforeAll
    static void record() {
        CountDownLatch stopNow = new CountDownLatch(1);
        AtomicBoolean firstTry = new AtomicBoolean(true);
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
            if (item == 1 && firstTry.getAndSet(false)) {
                throw new IOException("item 1 fails once"); // retried: its second attempt succeeds
            }
            if (item == 3) {
                stopNow.countDown();
            }
            return item;
        }).workers(2).queueSize(2).itemTimeout(Duration.ofMillis(50)).retryable(IOException.class).maxRetries(1)
                .metrics(sink).name("timeline-test").build();
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

    /** WP-15, WP-5: an attempt followed by a later attempt of its item is drawn as retried, not as failed; the item's last attempt by its outcome. */
    @Test
    void aRetriedAttemptIsDrawnAsRetried() {
        assertThat(timeline.bars()).filteredOn(b -> b.item().equals("1")).extracting(b -> b.attempt() + " " + b.outcome()
                + " drawn as " + b.drawnAs()).containsExactly("1 failed drawn as retried", "2 succeeded drawn as succeeded");
        assertThat(timeline.bars()).filteredOn(b -> b.item().equals("0")).singleElement()
                .satisfies(b -> assertThat(b.drawnAs()).isEqualTo("timed out"));
        assertThat(timeline.bars()).allSatisfy(b -> assertThat(b.retried()).as("item %s attempt %s", b.item(), b.attempt())
                .isEqualTo(timeline.bars().stream().anyMatch(o -> o.item().equals(b.item()) && o.attempt() > b.attempt())));
    }

    /** WP-15: every bar is labelled with its item (and its attempt's number after the first), as text on or beside it. */
    @Test
    void everyBarIsLabelledWithItsItem() {
        Matcher labels = Pattern.compile("<title>item ([^,<]+), attempt (\\d+)[^<]*</title></rect><text class=\"label\"[^>]*>([^<]+)</text>")
                .matcher(page());
        List<String> drawn = labels.results().map(m -> m.group(1) + "/" + m.group(2) + "=" + m.group(3)).toList();
        assertThat(drawn).containsExactlyInAnyOrderElementsOf(timeline.bars().stream()
                .map(b -> b.item() + "/" + b.attempt() + "=" + b.item() + (b.attempt() > 1 ? " #" + b.attempt() : "")).toList());
    }

    /**
     * WP-15: each colour of the page means one thing: the legend's colours differ from each other
     * and from the text's; every bar is in the colour of how it is drawn, every marker in its
     * kind's, the lead and its bound in theirs; and the legend shows each colour once.
     */
    @Test
    void eachColourMeansOneThing() {
        List<String> colours = TimelinePage.SWATCHES.stream().map(TimelinePage.Swatch::colour).toList();
        assertThat(colours).doesNotHaveDuplicates().doesNotContain(TimelinePage.TEXT, TimelinePage.MUTED, TimelinePage.GRID);
        String page = page();
        String drawing = page.substring(page.indexOf("<svg class=\"timeline\""));
        Map<String, String> meaningOf = new java.util.HashMap<>();
        record Mark(String pattern, java.util.function.Function<Matcher, String> meaning) {}
        List<Mark> marks = List.of(
                new Mark("<rect class=\"attempt\"[^>]* fill=\"(#\\w+)\"><title>item ([^,<]+), attempt (\\d+)", m -> bar(m).drawnAs()),
                new Mark("<path class=\"marker\"[^>]* fill=\"(#\\w+)\"><title>(round|timeout)", m -> m.group(2)),
                new Mark("<line class=\"marker\"[^>]* stroke=\"(#\\w+)\"[^>]*><title>(\\w+)", m -> m.group(2)),
                new Mark("<line class=\"bound\"[^>]* stroke=\"(#\\w+)\"", m -> "bound"),
                new Mark("<polyline class=\"lead\"[^>]* stroke=\"(#\\w+)\"", m -> "lead"));
        for (Mark mark : marks) {
            Matcher m = Pattern.compile(mark.pattern()).matcher(drawing);
            while (m.find()) {
                String meaning = mark.meaning().apply(m);
                assertThat(m.group(1)).as("the colour of %s", meaning).isEqualTo(TimelinePage.colour(meaning));
                assertThat(meaningOf.putIfAbsent(m.group(1), meaning)).as("what %s means", m.group(1)).isIn(null, meaning);
            }
        }
        assertThat(meaningOf.values()).contains("retried", "timed out", "succeeded", "timeout", "round", "stop", "lead", "bound");
        Matcher used = Pattern.compile("(?:fill|stroke)=\"(#\\w+)\"").matcher(drawing);
        assertThat(used.results().map(m -> m.group(1)).distinct().toList()).as("every colour drawn")
                .isSubsetOf(java.util.stream.Stream.concat(colours.stream(), java.util.stream.Stream.of(TimelinePage.TEXT,
                        TimelinePage.MUTED, TimelinePage.GRID)).toList());
        String legend = page.substring(0, page.indexOf("<section"));
        for (TimelinePage.Swatch swatch : TimelinePage.SWATCHES) {
            assertThat(Pattern.compile(Pattern.quote(swatch.colour())).matcher(legend).results().count())
                    .as("the legend's swatches of %s", swatch.label()).isOne();
            assertThat(legend).contains(swatch.label());
        }
    }

    /** The bar a match of item and attempt (groups 2 and 3) points at. */
    private static Timeline.Bar bar(Matcher m) {
        return timeline.bars().stream().filter(b -> b.item().equals(m.group(2)) && b.attempt() == Integer.parseInt(m.group(3)))
                .findFirst().orElseThrow();
    }

    private static String page() {
        CaseResult row = new CaseResult("timeline-test", "queue", "", List.of(1, 2), "-", Map.of(1, 1), 2, 5, "normal", "",
                true, 0, 0, 0, List.of(), 1);
        return TimelinePage.render(Provenance.now(), List.of(new TimelinePage.Entry(row, "a test run", timeline)));
    }

    /** WP-15: the page draws exactly the timeline's data: a rect per bar, a mark per marker, the lead, and the data itself. */
    @Test
    void thePageDrawsTheData() {
        String page = page();
        assertThat(Pattern.compile("<rect class=\"attempt\"").matcher(page).results().count()).isEqualTo(timeline.bars().size());
        assertThat(Pattern.compile("class=\"marker\"").matcher(page).results().count()).isEqualTo(timeline.markers().size());
        assertThat(page).contains("<polyline class=\"lead\"", "class=\"bound\"", "id=\"timelines\"");
        String data = page.substring(page.indexOf("id=\"timelines\">") + "id=\"timelines\">".length(), page.indexOf("</script>"));
        assertThat(JsonReader.parseObject(data.strip())).isEqualTo(JsonReader.parseObject(Json.write(Map.of("timelines",
                List.of(Map.of("id", "timeline-test-queue", "timeline", timeline.toJson()))))));
    }
}
