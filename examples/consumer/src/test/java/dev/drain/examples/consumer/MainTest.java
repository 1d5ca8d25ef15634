package dev.drain.examples.consumer;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The example's run, as a test: surefire runs it with --enable-preview (its argLine). */
class MainTest {
    @Test
    void theRunCompletesWithEveryResult() {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        List<String> problems = Main.run(new PrintStream(out, true, StandardCharsets.UTF_8));
        assertEquals(List.of(), problems, out.toString(StandardCharsets.UTF_8));
    }
}
