package dev.drain.snippets;

import static org.assertj.core.api.Assertions.assertThat;

import dev.drain.jshell.DrainJShell;
import dev.drain.support.Bounds;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every code sample of the javadoc and the core's samples in the README are regions of {@link TourSnippets}:
 * compiled by the build and run here; those README.md shows ({@link #IN_README}) are shown there exactly as
 * they are in the source, and pasted into JShell as the README shows them. The README's job-table sample is
 * the job table's ({@code dev.drain.jobtable.DurableSnippetsTest}).
 */
class TourSnippetsTest {
    static final Path SOURCE = Path.of("core/src/test/java/dev/drain/snippets/TourSnippets.java");
    static final Path README = Path.of("README.md");

    /** The regions README.md shows, in its order; the others are the javadoc's, or examples run here. */
    static final List<String> IN_README = List.of("graceful", "stop");

    /** README.md's code blocks that another module's tests compile, run and compare (the job table's). */
    static final Set<String> ELSEWHERE = Set.of("durable");

    /** Runs {@code region}, capturing what it prints. */
    private static List<String> printed(ThrowingRunnable region) throws Exception {
        PrintStream original = System.out;
        ByteArrayOutputStream buffer = new ByteArrayOutputStream();
        System.setOut(new PrintStream(buffer, true, StandardCharsets.UTF_8));
        try {
            region.run();
        } finally {
            System.setOut(original);
        }
        return buffer.toString(StandardCharsets.UTF_8).lines().toList();
    }

    @FunctionalInterface
    interface ThrowingRunnable {
        void run() throws Exception;
    }

    /** The regions of the snippet source, each dedented, by name. */
    static Map<String, String> regions() throws IOException {
        Map<String, String> regions = new LinkedHashMap<>();
        Matcher m = Pattern.compile("// @start region=\"([a-z-]+)\"\\n(.*?)\\n\\s*// @end", Pattern.DOTALL)
                .matcher(Files.readString(SOURCE));
        while (m.find()) {
            regions.put(m.group(1), m.group(2).stripIndent().strip());
        }
        return regions;
    }

    /** The README's code blocks that say which region they show, by region name. */
    static Map<String, String> readmeBlocks() throws IOException {
        Map<String, String> blocks = new LinkedHashMap<>();
        Matcher m = Pattern.compile("<!-- snippet: ([a-z-]+) -->\\n```java\\n(.*?)\\n```", Pattern.DOTALL)
                .matcher(Files.readString(README));
        while (m.find()) {
            blocks.put(m.group(1), m.group(2).strip());
        }
        return blocks;
    }

    /** The compiled regions, by name, in the README's order. */
    private static final Map<String, ThrowingRunnable> COMPILED = compiled();

    private static Map<String, ThrowingRunnable> compiled() {
        Map<String, ThrowingRunnable> compiled = new LinkedHashMap<>();
        compiled.put("queue", TourSnippets::queue);
        compiled.put("graceful", TourSnippets::graceful);
        compiled.put("immediate", TourSnippets::immediate);
        compiled.put("recipe", TourSnippets::recipe);
        compiled.put("pool", TourSnippets::pool);
        compiled.put("stop", TourSnippets::stop);
        compiled.put("context", TourSnippets::context);
        compiled.put("tree", TourSnippets::tree);
        return Collections.unmodifiableMap(compiled);
    }

    /** README.md: each code block is, character for character, the compiled region it names. */
    @Test
    void readmeShowsTheCompiledRegions() throws IOException {
        Map<String, String> regions = regions();
        Map<String, String> blocks = readmeBlocks();
        List<String> expected = new ArrayList<>(IN_README);
        expected.addAll(ELSEWHERE);
        assertThat(blocks.keySet()).as("README snippets").containsExactlyInAnyOrderElementsOf(expected);
        assertThat(COMPILED.keySet()).as("the regions compiled here").containsAll(IN_README);
        List<String> stale = new ArrayList<>();
        blocks.forEach((name, code) -> {
            if (IN_README.contains(name) && !code.equals(regions.get(name))) {
                stale.add(name);
            }
        });
        assertThat(stale).as("README blocks that differ from TourSnippets.java").isEmpty();
    }

    /** SQ-01, SQ-10, SQ-17: the queue tour prints the Python repr and the unfinished count. */
    @Test
    void queueRegionRuns() throws Exception {
        assertThat(printed(TourSnippets::queue))
                .containsExactly("<Queue maxsize=2 _queue=[1, 2] tasks=2>", "1 taken, unfinished: 1");
    }

    /** SQ-04, SQ-05, SQ-07: after a graceful shutdown puts fail and the consumer drains, then stops. */
    @Test
    void gracefulRegionRuns() throws Exception {
        assertThat(printed(TourSnippets::graceful))
                .containsExactly("put after shutdown: queue is shut down", "got a", "got b", "drained");
    }

    /** SQ-08, SQ-11: after an immediate shutdown, join() returns once the taken item is done, although the dropped items never ran. */
    @Test
    void immediateRegionRuns() throws Exception {
        assertThat(printed(TourSnippets::immediate)).containsExactly("join returned true after a, yet [b, c] never ran");
    }

    /** SQ-05, SQ-07, SQ-10, SQ-11: the deployment recipe handles every item once and ends every consumer. */
    @Test
    void recipeRegionRuns() throws Exception {
        assertThat(printed(TourSnippets::recipe)).containsExactly("work done: 10 items");
    }

    /** WP-2, WP-10: the pool tour gets every result and leaves no thread. */
    @Test
    void poolRegionRuns() throws Exception {
        List<String> lines = printed(TourSnippets::pool);
        assertThat(lines.subList(0, 5)).containsExactlyInAnyOrder("item 1 squared is 1", "item 2 squared is 4",
                "item 3 squared is 9", "item 4 squared is 16", "item 5 squared is 25");
        assertThat(lines.subList(5, lines.size())).containsExactly("threads left after close: 0");
    }

    /** WP-7, WP-12: requestStop ends an endless run normally; abort ends one in PoolAborted. */
    @Test
    void stopRegionRuns() throws Exception {
        List<String> lines = printed(TourSnippets::stop);
        assertThat(lines).hasSize(2);
        assertThat(lines.get(0)).startsWith("stopped normally after ");
        assertThat(lines.get(1)).isEqualTo("aborted; nothing left running: true");
    }

    /** WP-17, WP-9: a ScopedValue the caller binds around the run reaches the handler. */
    @Test
    void contextRegionRuns() throws Exception {
        assertThat(printed(TourSnippets::context)).containsExactly("request-7 handled item 1");
    }

    /** WP-17: the thread dump shows the run's scopes as a tree under the calling thread. */
    @Test
    void treeRegionRuns() throws Exception {
        String caller = Thread.currentThread().getName();
        List<String> lines = printed(TourSnippets::tree);
        assertThat(lines).hasSize(3);
        assertThat(lines.get(0)).isEqualTo("tree (owned by " + caller + "): tree-watchdog-1, tree-driver-2");
        assertThat(lines.get(1)).startsWith("  tree-workers (owned by tree-driver-2): ").contains("tree-worker-4");
        assertThat(lines.get(2)).isEqualTo("    tree-attempt (owned by tree-worker-4): tree-attempt-5");
    }

    /** The JShell the README's snippets are pasted into, one after the other; null until the first; guarded by the class. */
    private static DrainJShell jshell;

    private static synchronized DrainJShell jshell() throws IOException {
        if (jshell == null) {
            jshell = DrainJShell.start();
        }
        return jshell;
    }

    @AfterAll
    static synchronized void closeJShell() {
        if (jshell != null) {
            jshell.close();
            jshell = null;
        }
    }

    static Stream<String> snippetNames() {
        return IN_README.stream();
    }

    /**
     * README.md: the snippet, pasted alone into JShell as {@code ./jshell/drain-jshell} starts it, has no
     * snippet rejected or throwing, and prints what its compiled region prints.
     */
    @ParameterizedTest
    @MethodSource("snippetNames")
    void readmeSnippetPastesIntoJShell(String name) throws Exception {
        String code = readmeBlocks().get(name);
        assertThat(code).as("the README's %s snippet", name).isNotNull();
        DrainJShell shell = jshell();
        shell.reset(); // what the snippets before it declared is gone: it must stand alone
        shell.evaluate("the README's " + name + " snippet", code, Bounds.WAIT);

        assertThat(shell.problems()).as("what went wrong pasting %s; it printed:%n%s", name, shell.output()).isEmpty();
        assertThat(comparable(name, shell.output().lines().toList()))
                .as("what %s prints in JShell, against its compiled region", name)
                .isEqualTo(comparable(name, printed(COMPILED.get(name))));
    }

    /**
     * What a region prints, without what changes from one run to the next: the pool's completion order,
     * how far an endless source got before the stop, the name of the calling thread, and whether the
     * producer of a one-item source is still alive when the tree is dumped.
     */
    private static List<String> comparable(String name, List<String> lines) {
        return switch (name) {
            case "pool" -> Stream.concat(lines.stream().filter(line -> line.startsWith("item ")).sorted(),
                    lines.stream().filter(line -> !line.startsWith("item "))).toList();
            case "stop" -> lines.stream().map(line -> line.replaceAll("after \\d+ items", "after N items")).toList();
            case "tree" -> lines.stream()
                    .map(line -> line.replaceFirst("^tree \\(owned by [^)]+\\)", "tree (owned by the caller)")
                            .replaceAll("tree-producer-\\d+, ", ""))
                    .toList();
            default -> lines;
        };
    }
}
