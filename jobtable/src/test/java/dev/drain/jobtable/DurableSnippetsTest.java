package dev.drain.jobtable;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * README.md's sample of a pool over a job table is the region {@code durable} of {@link DurableSnippets}:
 * compiled by the build, run here, and shown in the README exactly as it is in the source. (The core's
 * {@code TourSnippetsTest} does the same for the queue's and the pool's samples.)
 */
class DurableSnippetsTest {
    private static final Path SOURCE = Path.of("jobtable/src/test/java/dev/drain/jobtable/DurableSnippets.java");
    private static final Path README = Path.of("README.md");

    /** The named region of a source, dedented, as javadoc's {@code @snippet} reads it. */
    private static String region(Path source, String name) throws IOException {
        Matcher m = Pattern.compile("// @start region=\"" + name + "\"\\n(.*?)\\n\\s*// @end", Pattern.DOTALL)
                .matcher(Files.readString(source));
        assertThat(m.find()).as("region %s in %s", name, source).isTrue();
        return m.group(1).stripIndent().strip();
    }

    /** The README's code block that says it shows the named region. */
    private static String readmeBlock(String name) throws IOException {
        Matcher m = Pattern.compile("<!-- snippet: " + name + " -->\\n```java\\n(.*?)\\n```", Pattern.DOTALL)
                .matcher(Files.readString(README));
        assertThat(m.find()).as("README block %s", name).isTrue();
        return m.group(1).strip();
    }

    /** README.md: the job table's code block is, character for character, the compiled region. */
    @Test
    void readmeShowsTheCompiledRegion() throws IOException {
        assertThat(readmeBlock("durable")).isEqualTo(region(SOURCE, "durable"));
    }

    /** JT-1, JT-8, WP-22: the README's pool over a job table creates the table, handles every job once, and leaves every row done. */
    @Test
    void durableRegionRuns() throws Exception {
        PrintStream original = System.out;
        ByteArrayOutputStream buffer = new ByteArrayOutputStream();
        System.setOut(new PrintStream(buffer, true, StandardCharsets.UTF_8));
        try {
            DurableSnippets.durable();
        } finally {
            System.setOut(original);
        }
        List<String> lines = buffer.toString(StandardCharsets.UTF_8).lines().toList();
        assertThat(lines).hasSize(4);
        assertThat(lines.subList(0, 3)).containsExactlyInAnyOrder("sent to ada", "sent to grace", "sent to barbara");
        assertThat(lines.get(3)).isEqualTo("{READY=0, RUNNING=0, DONE=3, DEAD=0}");
    }
}
