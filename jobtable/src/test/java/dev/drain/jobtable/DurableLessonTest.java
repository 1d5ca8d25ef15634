package dev.drain.jobtable;

import static org.assertj.core.api.Assertions.assertThat;

import dev.drain.jshell.DrainJShell;
import dev.drain.support.Bounds;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * jshell/README.md, script 20: the JShell lesson on a job table runs as {@code jshell/drain-jshell 20} runs it,
 * on the embedded PostgreSQL, and prints its key result (JT-8, JT-6, WP-22). The core's
 * {@code JShellScriptsTest} runs every other script; this one needs this module on the class path.
 */
class DurableLessonTest {
    private static final Path SCRIPT = Path.of("jshell", "20-durable-job-table.jsh");

    /** JT-8, JT-6, WP-22: done on take loses what an abort drops; claims() with settler() leaves it ready, and the next run handles exactly that. */
    @Test
    void theLessonRunsAndShowsWhatIsLostAndWhatIsRedelivered() throws Exception {
        DrainJShell.ScriptRun run = DrainJShell.runScript(SCRIPT, Bounds.WAIT.multipliedBy(3));
        assertThat(run.problems()).as("what went wrong; its output:%n%s", run.output()).isEmpty();
        List<String> lines = run.output().lines().map(line -> line.strip().replaceAll("\\s+", " ")).toList();
        assertThat(lines).as("the output:%n%s", run.output()).contains(
                "the table: done [1, 2, 3, 4, 5, 6, 7, 8], ready [9, 10], running [], dead []",
                "done in the table and never finished (lost): [3, 4, 5, 6, 7, 8]; no run will claim them again",
                "the run: Aborted, discarded [5, 6, 7, 8], cancelled [3, 4]",
                "the table once the run ended: done [1, 2], ready [3, 4, 5, 6, 7, 8, 9, 10], running [], dead []",
                "the next run handled [3, 4, 5, 6, 7, 8, 9, 10]",
                "the table: done [1, 2, 3, 4, 5, 6, 7, 8, 9, 10], ready [], running [], dead []");
        assertThat(run.exercise()).as("the Try it lines").isNotEmpty();
        assertThat(lines).as("the Try it lines' answer").anyMatch(line -> line.startsWith("done [1, 2, 3") && line.contains("running [], dead [4]"));
        assertThat(lines).as("the Try it lines print the dead job's failure (JT-14)")
                .contains("job 4 (dead, 1 claim): after 1 attempts: java.lang.IllegalStateException: poison");
    }

    /** jshell/README.md: script 20 starts with its lesson and uses no reflection. */
    @Test
    void theLessonStartsWithItsLesson() throws Exception {
        DrainJShell.assertStartsWithItsLesson(SCRIPT);
        assertThat(DrainJShell.needsTheJobTable(SCRIPT)).as("the launcher gives it the job table").isTrue();
    }
}
