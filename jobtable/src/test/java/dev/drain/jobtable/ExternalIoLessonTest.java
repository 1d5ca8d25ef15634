package dev.drain.jobtable;

import static org.assertj.core.api.Assertions.assertThat;

import dev.drain.jshell.DrainJShell;
import dev.drain.support.Bounds;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * jshell/README.md, script 23: the JShell lesson on external I/O under a deadline runs as {@code jshell/drain-jshell 23}
 * runs it, on the embedded PostgreSQL and the JDK's own HTTP server, and prints its key result: the attempt's deadline
 * reaches the handler (WP-3's {@code ItemContext.remaining()}), which hands it to the driver; an interrupt alone (a
 * timeout's, WP-3, or an abort's, WP-24) leaves the query running on the server. The core's {@code JShellScriptsTest}
 * runs every other script; this one needs the lab and the PostgreSQL driver on the class path.
 */
class ExternalIoLessonTest {
    private static final Path SCRIPT = Path.of("jshell", "23-external-io-under-a-deadline.jsh");

    /**
     * WP-3, WP-24: an interrupt alone ends the JDBC call by closing its connection, and the server runs the query to
     * its end; the deadline handed to the driver cancels the query on the server and keeps the connection; a deploy's
     * requestStop(within) shorter than the itemTimeout cuts the connection, a longer one lets the query end by its own
     * deadline. Over HTTP, send() cancels the exchange on an interrupt, sendAsync().get() does not; a request timeout does.
     */
    @Test
    void theLessonRunsAndShowsWhatTheDriverDoesWithAnInterruptAndWithADeadline() throws Exception {
        DrainJShell.ScriptRun run = DrainJShell.runScript(SCRIPT, Bounds.WAIT.multipliedBy(3));
        assertThat(run.problems()).as("what went wrong; its output:%n%s", run.output()).isEmpty();
        List<String> lines = run.output().lines().map(line -> line.strip().replaceAll("\\s+", " ")).toList();
        assertThat(lines).as("the output:%n%s", run.output()).containsSubsequence(
                "PostgreSQL, an interrupt alone (the statement has no timeout):",
                "the handler's call threw PSQLException, SQLState 08006: An I/O error occurred while sending to the backend.",
                "it ended before the pool's deadline: false; the item failed with TimeoutException",
                "the connection is closed: true",
                "pg_sleep queries the server is still running: 1",
                "the server ran it to its end, 3 s after it began: true",
                "PostgreSQL, the deadline handed to the driver (SET LOCAL statement_timeout):",
                "the handler's call threw PSQLException, SQLState 57014: ERROR: canceling statement due to statement timeout",
                "it ended before the pool's deadline: true; the item failed with PSQLException",
                "pg_sleep queries the server is still running: 0",
                "the same connection is open: true, and SELECT 1 returns 1",
                "PostgreSQL, a deploy's requestStop(within), the deadline handed to the driver:",
                "requestStop(PT0.1S): Aborted, deadline passed: true; the connection is closed: true",
                "the server ended item 0's query before pg_sleep's 3 s (its statement_timeout): true",
                "requestStop(PT3S): Completed, stop requested: true, failed [0]; the connection is closed: false",
                "the server ended item 0's query before pg_sleep's 3 s (its statement_timeout): true",
                "a first request, answered at once: 204",
                "HTTP, an interrupt alone, client.send():",
                "the handler's call threw InterruptedException",
                "it ended before the pool's deadline: false; the item failed with TimeoutException",
                "the server, answering once the run had ended: its write failed: the client had closed the connection",
                "HTTP, an interrupt alone, client.sendAsync(...).get():",
                "the handler's call threw InterruptedException",
                "it ended before the pool's deadline: false; the item failed with TimeoutException",
                "the server, answering once the run had ended: it wrote its answer: the request was still open",
                "HTTP, the deadline handed to the request, timeout(...), with the same sendAsync(...).get():",
                "the handler's call threw HttpTimeoutException",
                "it ended before the pool's deadline: true; the item failed with HttpTimeoutException",
                "the server, answering once the run had ended: its write failed: the client had closed the connection",
                "the HTTP client has terminated: true");
        assertThat(run.exercise()).as("the Try it lines").isNotEmpty();
        assertThat(lines).as("the Try it lines' answer").contains(
                "itemTimeout PT0.5S: java.util.concurrent.TimeoutException: item=1 attempt=1 worker=0 outlived itemTimeout"
                        + " PT0.5S; the connection is closed: true",
                "itemTimeout PT2S: org.postgresql.util.PSQLException: ERROR: canceling statement due to user request;"
                        + " the connection is closed: false");
    }

    /** jshell/README.md: script 23 starts with its lesson and uses no reflection. */
    @Test
    void theLessonStartsWithItsLesson() throws Exception {
        DrainJShell.assertStartsWithItsLesson(SCRIPT);
        assertThat(DrainJShell.needsTheJobTable(SCRIPT)).as("the launcher gives it the job table and the lab").isTrue();
    }
}
