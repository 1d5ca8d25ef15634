package dev.drain.examples.jobtable;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.drain.lab.LocalPostgres;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The example on a PostgreSQL of the test's: the committed orders' e-mails and the reminder are
 * sent, the rolled-back order's never is, the job that failed for good is read with its failure
 * and requeued by it, and the backlog says so.
 */
class MainTest {
    @Test
    void theQueueSendsWhatWasCommittedAndNamesWhatFailed() throws Exception {
        ByteArrayOutputStream printed = new ByteArrayOutputStream();
        try (LocalPostgres postgres = LocalPostgres.start(); PrintStream out = new PrintStream(printed, true, StandardCharsets.UTF_8)) {
            Main.run(postgres.dataSource(), out);
        }
        List<String> lines = printed.toString(StandardCharsets.UTF_8).lines().toList();
        assertTrue(lines.contains("sent: [order 1 to ada@example.com, reminder to ada@example.com]"), () -> "sent, in " + lines);
        assertTrue(lines.stream().anyMatch(line -> line.startsWith("dead: job ") && line.endsWith(
                "(dead, 1 claim): after 1 attempts: java.lang.IllegalArgumentException: no such mailbox: nobody@example.com")),
                () -> "the dead job, in " + lines);
        assertTrue(lines.contains("requeued the jobs that died of a missing mailbox: 1"), () -> "the requeue, in " + lines);
        assertTrue(lines.contains("backlog: due 0, scheduled 0, running 0 (+ 0 abandoned), done 2, dead 1"),
                () -> "the backlog before the requeue, in " + lines);
        assertTrue(lines.contains("backlog: due 1, scheduled 0, running 0 (+ 0 abandoned), done 2, dead 0"),
                () -> "the backlog after the requeue, in " + lines);
    }
}
