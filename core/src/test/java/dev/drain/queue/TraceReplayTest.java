package dev.drain.queue;

import static org.assertj.core.api.Assertions.assertThat;

import dev.drain.measure.JsonReader;
import dev.drain.support.Evidence;
import dev.drain.support.PropertyReport;
import dev.drain.support.Repository;
import dev.drain.support.ThreadKind;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every scenario recorded on CPython 3.13 ({@code specs/traces/recorded/}), replayed against
 * {@link ShutdownQueue} on platform and virtual threads: after every step, the completed calls
 * (values and exceptions) and the queue's state (size, items in get order, unfinished count,
 * shutdown flag, waiter counts, blocked tasks, and {@code toString()} against Python's
 * {@code str(queue)}) must agree exactly. Re-recording is one command; see
 * {@code specs/traces/README.md}.
 */
@ExtendWith(PropertyReport.class)
class TraceReplayTest {
    static final Path CORPORA = Repository.root().resolve(Path.of("specs", "traces", "recorded"));

    /** A recorded corpus file: its header (seed, counts) and its scenarios. */
    record Corpus(Map<String, @Nullable Object> header, List<TraceReplayer.Scenario> scenarios) {
        @SuppressWarnings("unchecked")
        static Corpus read(String name) {
            try {
                Map<String, @Nullable Object> file = (Map<String, @Nullable Object>) JsonReader.parseObject(
                        Files.readString(CORPORA.resolve(name + ".json")));
                List<TraceReplayer.Scenario> scenarios =
                        ((List<Map<String, @Nullable Object>>) Objects.requireNonNull(file.get("scenarios")))
                                .stream().map(TraceReplayer.Scenario::from).toList();
                return new Corpus((Map<String, @Nullable Object>) Objects.requireNonNull(file.get("header")),
                        scenarios);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        Stream<Arguments> withThreadKinds() {
            return Stream.of(ThreadKind.values())
                    .flatMap(threads -> scenarios.stream().map(s -> Arguments.of(s, threads)));
        }
    }

    static final Corpus HANDWRITTEN = Corpus.read("handwritten");
    static final Corpus RANDOM = Corpus.read("random");

    static Stream<Arguments> handwritten() {
        return HANDWRITTEN.withThreadKinds();
    }

    static Stream<Arguments> random() {
        return RANDOM.withThreadKinds();
    }

    /** SQ-01 … SQ-14, SQ-17, SQ-21: a hand-written scenario (the probes of specs/probes.md and CPython's own tests) agrees with CPython 3.13 step by step. */
    @ParameterizedTest(name = "{0} on {1}")
    @MethodSource("handwritten")
    void handwrittenScenarioAgreesWithCPython(TraceReplayer.Scenario scenario, ThreadKind threads, Evidence evidence)
            throws Exception {
        evidence.property("Each hand-written scenario (every probe of specs/probes.md, CPython's own tests) agrees with "
                + "CPython 3.13 after every step, on platform and virtual threads.", CLAUSES);
        replay(scenario, threads, evidence);
    }

    /** SQ-01 … SQ-14, SQ-17, SQ-21: a seeded random scenario agrees with CPython 3.13 step by step. */
    @ParameterizedTest(name = "{0} on {1}")
    @MethodSource("random")
    void randomScenarioAgreesWithCPython(TraceReplayer.Scenario scenario, ThreadKind threads, Evidence evidence)
            throws Exception {
        evidence.property("Each seeded random scenario agrees with CPython 3.13 after every step, on platform and "
                + "virtual threads.", CLAUSES).seed(Objects.requireNonNull(RANDOM.header().get("seed")));
        replay(scenario, threads, evidence);
    }

    /**
     * The clauses a trace can observe: everything but timeouts, nulls and memory effects; and
     * SQ-21, since every batch of a trace runs as one step of {@code atomically}.
     */
    static final String[] CLAUSES = {"SQ-01", "SQ-02", "SQ-03", "SQ-04", "SQ-05", "SQ-06", "SQ-07", "SQ-08",
        "SQ-09", "SQ-10", "SQ-11", "SQ-12", "SQ-13", "SQ-14", "SQ-17", "SQ-21"};

    /**
     * SQ-08: the traces catch a deliberately broken queue (an immediate shutdown that forgets to
     * subtract the drained items from the unfinished count): some hand-written scenario disagrees.
     */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void tracesCatchABrokenQueue(ThreadKind threads, Evidence evidence) {
        evidence.property("The traces catch a deliberately broken queue (an immediate shutdown that forgets the "
                + "unfinished count): some FIFO hand-written scenario disagrees with CPython.", "SQ-08");
        List<String> caught = new ArrayList<>();
        for (TraceReplayer.Scenario scenario : HANDWRITTEN.scenarios()) {
            if (!scenario.kind().equals("fifo")) {
                continue;
            }
            evidence.tries(1);
            try (TraceReplayer replayer = new TraceReplayer(scenario, threads,
                    BrokenQueues.Variant.DRAIN_FORGETS_COUNT.create(scenario.maxsize()))) {
                for (int i = 0; i < scenario.steps().size(); i++) {
                    if (!replayer.step(scenario.steps().get(i)).equals(expectedResult(scenario, i))) {
                        caught.add(scenario.name() + " step " + i);
                        break;
                    }
                }
            } catch (InterruptedException e) {
                throw new AssertionError(e);
            }
        }
        evidence.count("scenarios that caught the bug", caught.size());
        assertThat(caught).as("scenarios that disagree with CPython on the broken queue").isNotEmpty();
    }

    private static TraceReplayer.StepResult expectedResult(TraceReplayer.Scenario scenario, int step) {
        Map<String, @Nullable Object> expected = scenario.expected().get(step);
        @SuppressWarnings("unchecked")
        var completed = (List<Map<String, @Nullable Object>>) Objects.requireNonNull(expected.get("completed"));
        @SuppressWarnings("unchecked")
        var state = (Map<String, @Nullable Object>) Objects.requireNonNull(expected.get("state"));
        return new TraceReplayer.StepResult(completed, state);
    }

    static void replay(TraceReplayer.Scenario scenario, ThreadKind threads, Evidence evidence) throws Exception {
        evidence.tries(1).count("runs on " + threads.name().toLowerCase(java.util.Locale.ROOT) + " threads", 1)
                .count(scenario.kind() + " runs", 1);
        try (TraceReplayer replayer = new TraceReplayer(scenario, threads)) {
            for (int i = 0; i < scenario.steps().size(); i++) {
                Map<String, @Nullable Object> step = scenario.steps().get(i);
                Map<String, @Nullable Object> expected = scenario.expected().get(i);
                TraceReplayer.StepResult actual = replayer.step(step);
                String where = scenario.name() + " step " + i + " " + step;
                assertThat(actual.completed()).as("calls completed at %s", where).isEqualTo(expected.get("completed"));
                assertThat(actual.state()).as("state after %s", where).isEqualTo(expected.get("state"));
                count(evidence, step, expected, actual);
            }
        }
    }

    /** The statistics of the report: what kinds of step were compared. */
    private static void count(Evidence evidence, Map<String, @Nullable Object> step,
                              Map<String, @Nullable Object> expected, TraceReplayer.StepResult actual) {
        evidence.count("steps compared", 1).count("calls compared", actual.completed().size());
        if (step.get("batch") instanceof List<?> batch) {
            evidence.count("batches (atomic driver actions)", 1);
            if (batch.size() > 1) {
                evidence.count("batches of 2+ actions (in-transit situations)", 1);
            }
        }
        if (step.containsKey("cancel")) {
            evidence.count("cancel steps (interrupts of blocked calls)", 1);
        }
        if (Boolean.TRUE.equals(expected.get("order_sensitive"))) {
            evidence.count("order-sensitive steps (outcome depends on wake-up order)", 1);
        }
        if (!((Map<?, ?>) Objects.requireNonNull(actual.state().get("blocked"))).isEmpty()) {
            evidence.count("steps ending with a call blocked", 1);
        }
        for (Map<String, @Nullable Object> call : actual.completed()) {
            if ("shutdown".equals(call.get("op"))) {
                evidence.count(call.containsKey("drained") ? "immediate shutdowns" : "graceful shutdowns", 1);
            }
            if (call.get("raises") instanceof String raised) {
                evidence.count("calls raising " + raised, 1);
            }
        }
    }
}
