package dev.drain.examples.kafka;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.drain.lab.LocalKafka;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The example, as a test: on a broker of its own, two members of a group ship every order once, the poison one dead-lettered. */
class MainTest {
    /** Every order is shipped once or dead-lettered, across the two members, and nothing is off. */
    @Test
    void everyOrderIsShippedOnceOrDeadLettered() throws Exception {
        ByteArrayOutputStream printed = new ByteArrayOutputStream();
        try (LocalKafka kafka = LocalKafka.start();
                PrintStream out = new PrintStream(printed, true, StandardCharsets.UTF_8)) {
            List<String> problems = Main.run(kafka.bootstrapServers(), out);
            assertEquals(List.of(), problems, printed.toString(StandardCharsets.UTF_8));
        }
    }
}
