package dev.drain.queue;

import static org.assertj.core.api.Assertions.assertThat;

import dev.drain.support.JsonReader;
import dev.drain.support.ThreadKind;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every scenario recorded on CPython 3.13 ({@code specs/traces/recorded/}), replayed against
 * {@link ShutdownQueue} on platform and virtual threads: after every step, the completed calls
 * (values and exceptions) and the queue's state (size, items in get order, unfinished count,
 * shutdown flag, waiter counts, blocked tasks, and {@code toString()} against Python's
 * {@code str(queue)}) must agree exactly. Re-recording is one command; see
 * {@code specs/traces/README.md}.
 */
class TraceReplayTest {
    static final Path CORPORA = Path.of("specs", "traces", "recorded");

    /** The recorded scenarios of one corpus file ({@code handwritten} or {@code random}). */
    @SuppressWarnings("unchecked")
    static List<TraceReplayer.Scenario> corpus(String name) {
        try {
            Object json = JsonReader.parse(Files.readString(CORPORA.resolve(name + ".json")));
            Map<String, @Nullable Object> file = (Map<String, @Nullable Object>) Objects.requireNonNull(json);
            return ((List<Map<String, @Nullable Object>>) Objects.requireNonNull(file.get("scenarios")))
                    .stream().map(TraceReplayer.Scenario::from).toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static Stream<Arguments> handwritten() {
        return withThreadKinds(corpus("handwritten"));
    }

    static Stream<Arguments> random() {
        return withThreadKinds(corpus("random"));
    }

    private static Stream<Arguments> withThreadKinds(List<TraceReplayer.Scenario> scenarios) {
        return Stream.of(ThreadKind.values())
                .flatMap(threads -> scenarios.stream().map(s -> Arguments.of(s, threads)));
    }

    /** SQ-01 … SQ-14, SQ-17: a hand-written scenario (edge cases of the reference notes) agrees with CPython 3.13 step by step. */
    @ParameterizedTest(name = "{0} on {1}")
    @MethodSource("handwritten")
    void handwrittenScenarioAgreesWithCPython(TraceReplayer.Scenario scenario, ThreadKind threads) throws Exception {
        replay(scenario, threads);
    }

    /** SQ-01 … SQ-14, SQ-17: a seeded random scenario agrees with CPython 3.13 step by step. */
    @ParameterizedTest(name = "{0} on {1}")
    @MethodSource("random")
    void randomScenarioAgreesWithCPython(TraceReplayer.Scenario scenario, ThreadKind threads) throws Exception {
        replay(scenario, threads);
    }

    static void replay(TraceReplayer.Scenario scenario, ThreadKind threads) throws Exception {
        try (TraceReplayer replayer = new TraceReplayer(scenario, threads)) {
            for (int i = 0; i < scenario.steps().size(); i++) {
                Map<String, @Nullable Object> step = scenario.steps().get(i);
                Map<String, @Nullable Object> expected = scenario.expected().get(i);
                TraceReplayer.StepResult actual = replayer.step(step);
                String where = scenario.name() + " step " + i + " " + step;
                assertThat(actual.completed()).as("calls completed at %s", where).isEqualTo(expected.get("completed"));
                assertThat(actual.state()).as("state after %s", where).isEqualTo(expected.get("state"));
            }
        }
    }
}
