package dev.drain.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import dev.drain.jshell.DrainJShell;
import dev.drain.support.Bounds;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * jshell/README.md, script 21: the JShell lesson on a consumer group runs as {@code jshell/drain-jshell 21} runs it,
 * on a broker it starts, and prints its key result (KC-9, KC-6, WP-22). The core's {@code JShellScriptsTest} runs the
 * scripts that need no adapter; this one needs this module on the class path.
 */
class KafkaLessonTest {
    private static final Path SCRIPT = Path.of("jshell", "21-kafka-consumer-group.jsh");

    /** KC-9, KC-6: committing on take loses what an abort drops; records() with settler() commits only what was done, and the next member handles exactly the rest. */
    @Test
    void theLessonRunsAndShowsWhatIsLostAndWhatIsRedelivered() throws Exception {
        DrainJShell.ScriptRun run = DrainJShell.runScript(SCRIPT, Bounds.WAIT.multipliedBy(4));
        assertThat(run.problems()).as("what went wrong; its output:%n%s", run.output()).isEmpty();
        List<String> lines = run.output().lines().map(line -> line.strip().replaceAll("\\s+", " ")).toList();
        assertThat(lines).as("the output:%n%s", run.output()).contains(
                "the run: discarded [4, 5, 6, 7], cancelled [2, 3]",
                "the group's next member starts at offset 8: never finished and never delivered again (lost): [2, 3, 4, 5, 6, 7]",
                "the run: Aborted, discarded [4, 5, 6, 7], cancelled [2, 3]",
                "the group's committed offset: 2 (0 and 1 done)",
                "the next member handled [2, 3, 4, 5, 6, 7, 8, 9]",
                "the group's committed offset: 10");
        assertThat(run.exercise()).as("the Try it lines").isNotEmpty();
        assertThat(lines).as("the Try it lines' answer").anyMatch(line -> line.startsWith("committed ") && line.endsWith("dead letters written 1"));
    }

    /** jshell/README.md: script 21 starts with its lesson and uses no reflection. */
    @Test
    void theLessonStartsWithItsLesson() throws Exception {
        DrainJShell.assertStartsWithItsLesson(SCRIPT);
        assertThat(DrainJShell.needsKafka(SCRIPT)).as("the launcher gives it the Kafka module").isTrue();
    }
}
