package dev.drain.report;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.function.Supplier;
import jdk.jfr.Recording;
import jdk.jfr.consumer.RecordedEvent;
import jdk.jfr.consumer.RecordingFile;

/**
 * One run of a pool in time, built from the pool's own JDK Flight Recorder events (never drawn by
 * hand): a lane per worker (only workers run handlers, the item the producer held at a stop
 * included),
 * a bar per attempt with its outcome (an attempt that failed or timed out and was then retried is
 * marked so: a later attempt of the same item tells), markers for each timeout, each escalated
 * interrupt, and each {@code requestStop}, {@code abort} and abandon ({@code close} before the
 * end), and the lead of the source at each pull against its bound. Times are from the first event of the run.
 *
 * @param title what the run was
 * @param span from the first event to the last
 * @param workers the lanes: worker numbers in order
 * @param bars one per attempt
 * @param markers timeouts, interrupt rounds, and the run's stop, abort and abandon
 * @param lead the lead at each pull
 * @param leadBound {@code queueSize + workers + 1}
 */
record Timeline(String title, Duration span, List<Integer> workers, List<Bar> bars, List<Marker> markers,
                List<LeadPoint> lead, long leadBound) {

    /** The JFR events the timelines are drawn from. */
    static final List<String> EVENTS = List.of("Attempt", "Timeout", "Escalation", "StopRequested", "Abort", "Abandon",
            "Lead");

    /**
     * One attempt.
     *
     * @param worker its lane
     * @param start when it was forked
     * @param end when it ended
     * @param item the item, as text
     * @param attempt its number
     * @param outcome {@code succeeded}, {@code failed}, {@code timed out}, {@code cancelled} or
     *     {@code stuck}, as its event says
     * @param retried whether a later attempt of the same item was recorded: then this one's
     *     failure or timeout was not the item's fate
     */
    record Bar(int worker, Duration start, Duration end, String item, int attempt, String outcome, boolean retried) {
        /** {@return how the bar is drawn: {@code retried} for an attempt that was retried, else its outcome} */
        String drawnAs() {
            return retried ? "retried" : outcome;
        }
    }

    /**
     * Something that happened at one moment.
     *
     * @param kind {@code timeout}, {@code round 2}, {@code round 3}, {@code stop}, {@code abort} or {@code close}
     * @param at when
     * @param worker the lane it belongs to, or {@link #RUN} for the whole run
     * @param item the item it concerns, or empty
     */
    record Marker(String kind, Duration at, int worker, String item) {}

    /** A marker of the whole run, not of one lane. */
    static final int RUN = Integer.MIN_VALUE;

    /**
     * The lead at one pull.
     *
     * @param at when
     * @param lead items pulled and not yet settled
     */
    record LeadPoint(Duration at, long lead) {}

    Timeline {
        workers = List.copyOf(workers);
        bars = List.copyOf(bars);
        markers = List.copyOf(markers);
        lead = List.copyOf(lead);
    }

    /** Runs {@code body} under a recording of the pool's events; {@return what it recorded, for {@link #of}} */
    static <V> Recorded<V> record(Supplier<V> body) {
        try (Recording recording = new Recording()) {
            EVENTS.forEach(name -> recording.enable("dev.drain.pool." + name).withThreshold(Duration.ZERO));
            recording.start();
            V value = body.get();
            recording.stop();
            Path file = Files.createTempFile("drain-timeline", ".jfr");
            try {
                recording.dump(file);
                return new Recorded<>(value, RecordingFile.readAllEvents(file));
            } finally {
                Files.deleteIfExists(file);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * What a recorded body returned, and the events it recorded.
     *
     * @param value the body's value
     * @param events every event of the recording
     * @param <V> the value's type
     */
    record Recorded<V>(V value, List<RecordedEvent> events) {
        Recorded {
            events = List.copyOf(events);
        }
    }

    /** {@return the timeline of the pool named {@code pool}, from {@code events}} */
    static Timeline of(String title, String pool, List<RecordedEvent> events) {
        List<RecordedEvent> ours = events.stream()
                .filter(e -> e.getEventType().getName().startsWith("dev.drain.pool.") && pool.equals(e.getString("pool")))
                .sorted(Comparator.comparing(RecordedEvent::getStartTime)).toList();
        Instant zero = ours.isEmpty() ? Instant.EPOCH : ours.getFirst().getStartTime();
        Instant last = zero;
        TreeSet<Integer> workers = new TreeSet<>();
        List<Bar> bars = new ArrayList<>();
        List<Marker> markers = new ArrayList<>();
        List<LeadPoint> lead = new ArrayList<>();
        long bound = 0;
        for (RecordedEvent e : ours) {
            Duration at = Duration.between(zero, e.getStartTime());
            last = e.getEndTime().isAfter(last) ? e.getEndTime() : last;
            switch (e.getEventType().getName().substring("dev.drain.pool.".length())) {
                case "Attempt" -> workers.add(e.getInt("worker"));
                case "Timeout" -> markers.add(new Marker("timeout", at, e.getInt("worker"), e.getString("item")));
                case "Escalation" -> markers.add(new Marker("round " + e.getInt("round"), at,
                        workerOf(ours, e.getString("item"), e.getInt("attempt")), e.getString("item")));
                case "StopRequested" -> markers.add(new Marker("stop", at, RUN, ""));
                case "Abort" -> markers.add(new Marker("abort", at, RUN, ""));
                case "Abandon" -> markers.add(new Marker("close", at, RUN, ""));
                case "Lead" -> {
                    lead.add(new LeadPoint(at, e.getLong("lead")));
                    bound = e.getLong("bound");
                }
                default -> { }
            }
        }
        // an attempt was retried if the same item has an attempt with a higher number
        Map<String, Integer> lastAttempt = new HashMap<>();
        List<RecordedEvent> attempts = ours.stream().filter(e -> e.getEventType().getName().equals("dev.drain.pool.Attempt"))
                .toList();
        attempts.forEach(e -> lastAttempt.merge(e.getString("item"), e.getInt("attempt"), Math::max));
        for (RecordedEvent e : attempts) {
            bars.add(new Bar(e.getInt("worker"), Duration.between(zero, e.getStartTime()),
                    Duration.between(zero, e.getEndTime()), e.getString("item"), e.getInt("attempt"), e.getString("outcome"),
                    e.getInt("attempt") < lastAttempt.getOrDefault(e.getString("item"), 0)));
        }
        return new Timeline(title, Duration.between(zero, last), List.copyOf(workers), bars, markers, lead, bound);
    }

    /** The lane of the attempt an escalation concerns: escalation events name the item and attempt, not the worker. */
    private static int workerOf(List<RecordedEvent> events, String item, int attempt) {
        return events.stream().filter(e -> e.getEventType().getName().equals("dev.drain.pool.Attempt")
                        && item.equals(e.getString("item")) && e.getInt("attempt") == attempt)
                .map(e -> e.getInt("worker")).findFirst().orElse(RUN);
    }

    /** {@return the timeline as JSON-ready data: what the page draws, for checks} */
    Map<String, Object> toJson() {
        return Map.of("title", title, "spanMillis", span.toNanos() / 1e6, "workers", workers,
                "bars", bars.stream().map(b -> Map.<String, Object>of("worker", b.worker(), "startMillis",
                        b.start().toNanos() / 1e6, "endMillis", b.end().toNanos() / 1e6, "item", b.item(), "attempt",
                        b.attempt(), "outcome", b.outcome(), "retried", b.retried(), "drawnAs", b.drawnAs())).toList(),
                "markers", markers.stream().map(m -> Map.<String, Object>of("kind", m.kind(), "atMillis",
                        m.at().toNanos() / 1e6, "worker", m.worker() == RUN ? "run" : m.worker(), "item", m.item()))
                        .toList(),
                "lead", lead.stream().map(p -> Map.<String, Object>of("atMillis", p.at().toNanos() / 1e6, "lead",
                        p.lead())).toList(),
                "leadBound", leadBound);
    }
}
