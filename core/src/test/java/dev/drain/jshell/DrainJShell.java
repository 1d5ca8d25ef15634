package dev.drain.jshell;

import static org.assertj.core.api.Assertions.assertThat;

import dev.drain.support.Bounds;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Collectors;
import jdk.jshell.EvalException;
import jdk.jshell.JShell;
import jdk.jshell.JShellException;
import jdk.jshell.PersistentSnippet;
import jdk.jshell.Snippet;
import jdk.jshell.SnippetEvent;
import jdk.jshell.SourceCodeAnalysis;

/**
 * A {@link JShell} as {@code jshell/drain-jshell} starts it, for the tests that run JShell code: its
 * remote VM runs with preview features on and the test's class path, after the tool's {@code DEFAULT}
 * startup and {@code jshell/startup.jsh}. Code is split into snippets as the JShell tool splits a file
 * or a paste (line by line, a snippet ending where {@link SourceCodeAnalysis#analyzeCompletion} says it
 * is complete; a line of comments alone is no snippet; lines that start with {@code /} are tool
 * commands and are skipped). Every rejected or throwing snippet is recorded as a problem; what the
 * snippets print is captured, never printed.
 *
 * <p>One thread evaluates; {@link #stop()} may be called from any other (a watchdog).
 */
public final class DrainJShell implements AutoCloseable {

    private static final Path SCRIPTS = Path.of("jshell");

    /** What {@code jshell --startup DEFAULT} evaluates on JDK 25; the API does not load the tool's startup. */
    private static final String DEFAULT_STARTUP = "import module java.base;";

    /** What the snippets and the remote VM printed; a ByteArrayOutputStream is synchronized. */
    private final ByteArrayOutputStream captured = new ByteArrayOutputStream();

    private final PrintStream out = new PrintStream(captured, true, StandardCharsets.UTF_8);

    private final JShell shell;

    /** What went wrong, one entry per rejected or throwing snippet; confined to the evaluating thread. */
    private final List<String> problems = new ArrayList<>();

    /** Set by {@link #stop()}: evaluation ends at the next snippet. */
    private final AtomicBoolean stopped = new AtomicBoolean();

    /** The snippets of the two startups, which {@link #reset()} keeps. */
    private final Set<Snippet> startup;

    private DrainJShell() throws IOException {
        // core/target/classes first, as the launcher has it: the core's jar leaves out dev.drain.foils,
        // which startup.jsh imports, and another module's tests see only the jar
        String classPath = Path.of("core", "target", "classes").toAbsolutePath() + java.io.File.pathSeparator
                + System.getProperty("java.class.path");
        shell = JShell.builder()
                .in(InputStream.nullInputStream())
                .out(out)
                .err(out)
                .compilerOptions("--enable-preview", "--source", Integer.toString(Runtime.version().feature()),
                        "--class-path", classPath)
                // the tests' logging (no handler: tests print nothing), so that what a snippet prints is its own
                .remoteVMOptions("--enable-preview", "--class-path", classPath, "-Djava.util.logging.config.file="
                        + System.getProperty("java.util.logging.config.file", "jshell/logging.properties"))
                .build();
        evaluate("the DEFAULT startup", DEFAULT_STARTUP);
        evaluate("startup.jsh", Files.readString(SCRIPTS.resolve("startup.jsh")));
        startup = shell.snippets().collect(Collectors.toUnmodifiableSet());
    }

    /**
     * Starts a JShell as the launcher does.
     *
     * @throws IllegalStateException if a snippet of the startup is rejected or throws
     */
    public static DrainJShell start() throws IOException {
        DrainJShell started = new DrainJShell();
        if (!started.problems.isEmpty()) {
            started.close();
            throw new IllegalStateException("the startup went wrong: " + String.join("\n", started.problems));
        }
        return started;
    }

    /**
     * Splits {@code source} as the JShell tool splits a file, and evaluates each snippet, stopping (and
     * recording a problem) if they run longer than {@code bound}; {@code name} says where problems are.
     */
    public void evaluate(String name, String source, Duration bound) throws InterruptedException {
        CountDownLatch finished = new CountDownLatch(1);
        AtomicBoolean timedOut = new AtomicBoolean();
        Thread watchdog = Thread.ofVirtual().name("jshell-watchdog").start(() -> {
            try {
                if (!finished.await(bound.toNanos(), TimeUnit.NANOSECONDS)) {
                    timedOut.set(true);
                    stop();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
        try {
            evaluate(name, source);
        } finally {
            finished.countDown();
            if (!watchdog.join(Bounds.WAIT)) {
                problems.add("the watchdog did not finish");
            }
        }
        if (timedOut.get()) {
            problems.add(name + " stopped after " + bound + ": a wait in it is not bounded");
        }
    }

    private void evaluate(String name, String source) {
        SourceCodeAnalysis analysis = shell.sourceCodeAnalysis();
        String pending = "";
        int lineNumber = 0;
        for (String line : source.split("\n", -1)) {
            lineNumber++;
            if (stopped.get()) {
                return;
            }
            if (pending.isBlank() && isCommand(line)) {
                continue; // /exit and the like: the tool's, not Java
            }
            pending = pending + line + "\n";
            while (!pending.isBlank()) {
                SourceCodeAnalysis.CompletionInfo info = analysis.analyzeCompletion(pending);
                if (info.completeness() == SourceCodeAnalysis.Completeness.EMPTY) {
                    pending = ""; // comments alone: the tool reads on, as after a blank line
                    break;
                }
                if (!info.completeness().isComplete()) {
                    break; // read the next line
                }
                check(name + " near line " + lineNumber, shell.eval(info.source()));
                pending = info.remaining();
            }
        }
        if (!pending.isBlank()) {
            problems.add(name + " ends with an incomplete snippet: " + pending.strip());
        }
    }

    /**
     * Drops every snippet evaluated since the startup, and forgets what was printed and what went wrong:
     * what comes next sees the imports and helpers of startup.jsh, and nothing else, as in a new session.
     */
    public void reset() {
        List<PersistentSnippet> later = shell.snippets()
                .filter(snippet -> !startup.contains(snippet) && snippet instanceof PersistentSnippet)
                .map(PersistentSnippet.class::cast)
                .filter(snippet -> shell.status(snippet).isActive())
                .toList();
        later.forEach(shell::drop);
        captured.reset();
        problems.clear();
    }

    /** Every rejected or throwing snippet so far, one entry each, with where it was and its source. */
    public List<String> problems() {
        return List.copyOf(problems);
    }

    /** Everything printed so far. */
    public String output() {
        return captured.toString(StandardCharsets.UTF_8);
    }

    /** From any thread: ends the running snippet, and evaluation stops at the next one. */
    public void stop() {
        stopped.set(true);
        shell.stop();
    }

    /** Whether {@link #stop()} was called. */
    public boolean stopped() {
        return stopped.get();
    }

    @Override
    public void close() {
        shell.close();
        out.close();
    }

    /** The line that opens the block every script ends with; its code lines follow, each after {@link #PROMPT}. */
    public static final String TRY_IT = "== Try it ==";

    /** What a line of the Try it block starts with. */
    public static final String PROMPT = "  jshell> ";

    /**
     * One script evaluated in a fresh JShell, as {@code jshell/drain-jshell NN} runs it.
     *
     * @param output what it printed, the Try it lines' output included
     * @param problems every rejected or throwing snippet
     * @param exercise the code lines of its Try it block
     */
    public record ScriptRun(String output, List<String> problems, List<String> exercise) {
        /** Copies the lists. */
        public ScriptRun {
            problems = List.copyOf(problems);
            exercise = List.copyOf(exercise);
        }
    }

    /**
     * Evaluates {@code script} in a fresh JShell, each part bounded by {@code bound}; after the script, the lines
     * of its "Try it" block in the same JShell, as a learner runs them after {@code jshell/drain-jshell -i NN}.
     *
     * @return what it printed and what went wrong
     */
    public static ScriptRun runScript(Path script, Duration bound) throws IOException, InterruptedException {
        try (DrainJShell shell = DrainJShell.start()) {
            String name = script.getFileName().toString();
            shell.evaluate(name, Files.readString(script), bound);
            List<String> exercise = exerciseOf(shell.output());
            if (shell.problems().isEmpty() && !shell.stopped()) {
                shell.evaluate(name + ", its Try it lines,", String.join("\n", exercise), bound);
            }
            return new ScriptRun(shell.output(), shell.problems(), exercise);
        }
    }

    /** The code lines of the Try it block at the end of {@code output}. */
    private static List<String> exerciseOf(String output) {
        List<String> lines = output.lines().toList();
        int block = lines.lastIndexOf(TRY_IT);
        return block < 0 ? List.of() : lines.subList(block + 1, lines.size()).stream()
                .filter(line -> line.startsWith(PROMPT))
                .map(line -> line.substring(PROMPT.length()))
                .toList();
    }

    /** {@return whether {@code script} imports {@code dev.drain.jobtable}: the launcher then adds that module} */
    public static boolean needsTheJobTable(Path script) {
        return imports(script, "dev.drain.jobtable");
    }

    /** {@return whether {@code script} imports {@code dev.drain.kafka}: the launcher then adds that module} */
    public static boolean needsKafka(Path script) {
        return imports(script, "dev.drain.kafka");
    }

    /** {@return whether {@code script} needs a module beside the core: its test is in that module} */
    public static boolean needsAnAdapter(Path script) {
        return needsTheJobTable(script) || needsKafka(script);
    }

    private static boolean imports(Path script, String pkg) {
        try {
            return Files.readAllLines(script).stream().anyMatch(line -> line.startsWith("import " + pkg));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * jshell/README.md: a script starts with its lesson: a header comment of 2 to 4 lines naming the clauses, then
     * code within its first ten lines; and it never reaches into drain's internals by reflection (a test seam such
     * as ShutdownQueue.runLocked): what a script shows, a learner can do with the public API.
     */
    public static void assertStartsWithItsLesson(Path script) throws IOException {
        List<String> source = Files.readAllLines(script);
        int header = 0;
        while (header < source.size() && source.get(header).startsWith("//")) {
            header++;
        }
        assertThat(header).as("the header comment of %s, in lines", script).isBetween(2, 4);
        int firstCode = header;
        while (firstCode < source.size() && (source.get(firstCode).isBlank() || source.get(firstCode).strip().startsWith("//"))) {
            firstCode++;
        }
        assertThat(firstCode + 1).as("the line of %s where the code starts", script).isLessThanOrEqualTo(10);
        assertThat(String.join("\n", source)).as("%s uses no reflection", script)
                .doesNotContain("setAccessible", "getDeclaredMethod", "runLocked");
    }

    private static boolean isCommand(String line) {
        String trimmed = line.strip();
        return trimmed.startsWith("/") && !trimmed.startsWith("//") && !trimmed.startsWith("/*");
    }

    private void check(String where, List<SnippetEvent> events) {
        for (SnippetEvent event : events) {
            if (event.status() == Snippet.Status.REJECTED) {
                String why = shell.diagnostics(event.snippet())
                        .map(d -> d.getMessage(Locale.ROOT))
                        .collect(Collectors.joining("; "));
                problems.add(where + ": rejected: " + why + "\n" + event.snippet().source());
            }
            JShellException thrown = event.exception();
            if (thrown != null) {
                String what = thrown instanceof EvalException e ? e.getExceptionClassName() + ": " + e.getMessage()
                        : thrown.toString();
                problems.add(where + ": threw " + what + "\n" + event.snippet().source());
            }
        }
    }
}
