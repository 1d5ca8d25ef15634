package dev.drain.jshell;

import static org.assertj.core.api.Assertions.assertThat;

import dev.drain.support.Bounds;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import jdk.jshell.EvalException;
import jdk.jshell.JShell;
import jdk.jshell.JShellException;
import jdk.jshell.Snippet;
import jdk.jshell.SnippetEvent;
import jdk.jshell.SourceCodeAnalysis;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * P14: every JShell script in {@code jshell/} runs, as {@code jshell/drain-jshell NN} runs it, and
 * prints its key result. Each script is split into snippets the way the JShell tool splits a file
 * (line by line, a snippet ending where {@link SourceCodeAnalysis#analyzeCompletion} says it is
 * complete; lines that start with {@code /} are tool commands and are skipped), and evaluated in a
 * fresh {@link JShell} whose remote VM runs with preview features on and this test's class path,
 * after the tool's {@code DEFAULT} startup and {@code jshell/startup.jsh}. A script fails if a
 * snippet is rejected, a snippet throws, it prints nothing, or its key lines are missing. The
 * remote VM's output is captured, never printed.
 *
 * <p>The scripts run three at a time, each in its own JShell, once the first of them is needed: a
 * script spends much of its time waiting for JShell's remote VM, so this halves the wall time.
 */
class JShellScriptsTest {

    private static final Path SCRIPTS = Path.of("jshell");

    /** What {@code jshell --startup DEFAULT} evaluates on JDK 25; the API does not load the tool's startup. */
    private static final String DEFAULT_STARTUP = "import module java.base;";

    /** How long one script may run before it is stopped and fails: generous, a bound against a hang. */
    private static final Duration SCRIPT_BOUND = Bounds.WAIT.multipliedBy(3);

    /** How many scripts run at once. */
    private static final int PARALLEL = 3;

    private static final ExecutorService RUNNER =
            Executors.newFixedThreadPool(PARALLEL, Thread.ofPlatform().name("jshell-script-", 1).factory());

    /** Every script's run, started when the first is needed; guarded by the class. */
    private static final Map<Script, Future<Run>> RUNS = new EnumMap<>(Script.class);

    /** The scripts, each with the lines (whitespace runs collapsed) that show its key result. */
    enum Script {
        /** The setup check: JDK 25, preview features on, drain on the class path (P15's pinned JDK). */
        VERSION_CHECK("00-version-check.jsh",
                "OK: JDK 25, preview features on, drain's classes loaded: the other scripts will run."),
        /** SQ-01, SQ-02, SQ-03, SQ-10, SQ-11, SQ-15, SQ-17: the operations of an open queue, the orders, and str(queue). */
        QUEUE_BASICS("01-queue-basics.jsh",
                "q.putNowait(3) -> throws QueueFull (queue is full)",
                "prio (stored as Python's heapq stores it) -> returns <PriorityQueue maxsize=0 _queue=[1, 3, 2] tasks=3>"),
        /** SQ-04, SQ-05, SQ-07: after a graceful shutdown items drain, puts fail, and every blocked getter and putter is woken. */
        GRACEFUL_SHUTDOWN("02-graceful-shutdown.jsh",
                "getter-2 -> threw QueueShutDown",
                "putter (waits in put(\"y\")) -> threw QueueShutDown"),
        /** SQ-08, SQ-09, SQ-10, SQ-11: shutdown(true) returns the dropped items, and join() still waits for items taken before it. */
        IMMEDIATE_SHUTDOWN("03-immediate-shutdown.jsh",
                "q.shutdown(true) -> returns [b, c]",
                "q.join(Duration.ZERO) -> returns false"),
        /** SQ-06, SQ-12: a woken thread re-checks the queue when it runs (cases C3, C4 and C5). */
        IN_TRANSIT("04-in-transit.jsh",
                "C3 getter-1 (woken by the put) -> threw QueueShutDown",
                "C4 getter (woken by the put) -> returned 7",
                "C5 putter-1 (woken by the get) -> threw QueueShutDown"),
        /** SQ-08, SQ-10, SQ-11: taskDone, join's single check, the clamp (B2), and join after an immediate shutdown (B1). */
        JOIN_ACCOUNTING("05-join-accounting.jsh",
                "once (asyncio returns; queue.Queue would wait) -> returns <Queue maxsize=0 _queue=[2] tasks=1>",
                "clamp.unfinishedTasks() (0, not -2) -> returns 0",
                "joiner (waits in taken.join()) -> returned"),
        /** WP-1, WP-2, WP-10, WP-15: results arrive in completion order, the stats add up, and no thread outlives the run. */
        POOL_RUN("06-pool-run.jsh",
                "results in completion order: [item 3 done, item 2 done, item 1 done, item 0 done]",
                "pool.liveThreads() after close(): 0"),
        /** WP-3, WP-4, WP-6, WP-8, WP-15: a handler that swallows one interrupt is stopped by the escalation, which the stats and the sink show. */
        STUBBORN_HANDLER("07-stubborn-handler.jsh",
                "stats: timedOut=1 escalations=1 failed=1 liveThreads=0",
                "attempt.escalated item=0 attempt=1 worker=0 round=2"),
        /** WP-2, WP-7, WP-10, WP-12: requestStop() ends normally with every pulled item handled; abort() ends in PoolAborted naming the rest. */
        STOP_VS_ABORT("08-stop-vs-abort.jsh",
                "the iteration ends normally; outcome: Completed[stopRequested=true]",
                "discarded (never started, sorted): [2, 3, 4, 5]",
                "cancelled (interrupted in flight, sorted): [0, 1]"),
        /** WP-9, WP-10: two items in flight together each see only their own ItemContext, ScopedValue binding and ThreadLocal. */
        CONTEXT_ISOLATION("09-context-isolation.jsh",
                "item 0: ItemContext {item=0 attempt=1}, tag inner-0 then tag-0, local local-0",
                "item 1: ItemContext {item=1 attempt=1}, tag inner-1 then tag-1, local local-1");

        final String file;
        @SuppressWarnings("ImmutableEnumChecker") // List.of: unmodifiable, which the checker cannot see
        final List<String> keyLines;

        Script(String file, String... keyLines) {
            this.file = file;
            this.keyLines = List.of(keyLines);
        }
    }

    /** P14: every numbered script in jshell/ is listed here, so none goes untested. */
    @Test
    void everyScriptIsListed() throws IOException {
        Set<String> files;
        try (Stream<Path> listing = Files.list(SCRIPTS)) {
            files = listing.map(path -> path.getFileName().toString())
                    .filter(name -> name.endsWith(".jsh") && !name.equals("startup.jsh"))
                    .collect(Collectors.toCollection(TreeSet::new));
        }
        assertThat(files).isEqualTo(Stream.of(Script.values()).map(s -> s.file).collect(Collectors.toCollection(TreeSet::new)));
    }

    /** P14: the script runs without a rejected or throwing snippet and prints its key result (the clauses are on each {@link Script}). */
    @ParameterizedTest
    @EnumSource(Script.class)
    void runs(Script script) throws Exception {
        Run run = started(script).get(SCRIPT_BOUND.multipliedBy(Script.values().length).toNanos(), TimeUnit.NANOSECONDS);

        assertThat(run.problems).as("what went wrong in %s; its output:%n%s", script.file, run.output).isEmpty();
        assertThat(run.output).as("the output of %s", script.file).isNotBlank();
        List<String> lines = run.output.lines().map(line -> line.strip().replaceAll("\\s+", " ")).toList();
        assertThat(lines).as("the output of %s:%n%s", script.file, run.output).containsAll(script.keyLines);
    }

    /** Starts every script, if that has not been done, and returns {@code script}'s run. */
    private static synchronized Future<Run> started(Script script) {
        if (RUNS.isEmpty()) {
            for (Script each : Script.values()) {
                RUNS.put(each, RUNNER.submit(() -> Run.of(SCRIPTS.resolve(each.file))));
            }
        }
        return Objects.requireNonNull(RUNS.get(script));
    }

    /** Lets every started script finish (each is bounded by its watchdog) and ends the runner's threads. */
    @AfterAll
    static void stopRunner() throws InterruptedException {
        RUNNER.shutdown();
        assertThat(RUNNER.awaitTermination(SCRIPT_BOUND.multipliedBy(Script.values().length).toNanos(),
                TimeUnit.NANOSECONDS)).as("the script runner's threads finished").isTrue();
    }

    /** One script evaluated in a fresh JShell: what it printed, and every rejected or throwing snippet. */
    private static final class Run {
        final List<String> problems = new ArrayList<>();
        String output = "";

        static Run of(Path script) throws IOException, InterruptedException {
            Run run = new Run();
            ByteArrayOutputStream captured = new ByteArrayOutputStream();
            String classPath = System.getProperty("java.class.path");
            try (PrintStream out = new PrintStream(captured, true, StandardCharsets.UTF_8);
                 JShell shell = JShell.builder()
                         .in(InputStream.nullInputStream())
                         .out(out)
                         .err(out)
                         .compilerOptions("--enable-preview", "--source", Integer.toString(Runtime.version().feature()),
                                 "--class-path", classPath)
                         .remoteVMOptions("--enable-preview", "--class-path", classPath)
                         .build()) {
                run.evaluate(shell, "the DEFAULT startup", DEFAULT_STARTUP);
                run.evaluate(shell, "startup.jsh", Files.readString(SCRIPTS.resolve("startup.jsh")));
                if (run.problems.isEmpty()) {
                    run.evaluateBounded(shell, script);
                }
            }
            run.output = captured.toString(StandardCharsets.UTF_8);
            return run;
        }

        /** Evaluates the script, stopping it (and failing) if it runs longer than {@link #SCRIPT_BOUND}. */
        private void evaluateBounded(JShell shell, Path script) throws IOException, InterruptedException {
            String source = Files.readString(script);
            CountDownLatch finished = new CountDownLatch(1);
            AtomicBoolean stopped = new AtomicBoolean();
            Thread watchdog = Thread.ofVirtual().name("jshell-watchdog").start(() -> {
                try {
                    if (!finished.await(SCRIPT_BOUND.toNanos(), TimeUnit.NANOSECONDS)) {
                        stopped.set(true);
                        shell.stop(); // ends the running snippet; the loop below stops at the next one
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            try {
                evaluate(shell, script.getFileName().toString(), source, stopped);
            } finally {
                finished.countDown();
                if (!watchdog.join(Bounds.WAIT)) {
                    problems.add("the watchdog did not finish");
                }
            }
            if (stopped.get()) {
                problems.add("stopped after " + SCRIPT_BOUND + ": a wait in the script is not bounded");
            }
        }

        private void evaluate(JShell shell, String name, String source) {
            evaluate(shell, name, source, new AtomicBoolean());
        }

        /** Splits {@code source} as the JShell tool splits a file, and evaluates each snippet. */
        private void evaluate(JShell shell, String name, String source, AtomicBoolean stopped) {
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
                    if (!info.completeness().isComplete()) {
                        break; // read the next line
                    }
                    check(shell, name + " near line " + lineNumber, shell.eval(info.source()));
                    pending = info.remaining();
                }
            }
            if (!pending.isBlank()) {
                problems.add(name + " ends with an incomplete snippet: " + pending.strip());
            }
        }

        private static boolean isCommand(String line) {
            String trimmed = line.strip();
            return trimmed.startsWith("/") && !trimmed.startsWith("//") && !trimmed.startsWith("/*");
        }

        private void check(JShell shell, String where, List<SnippetEvent> events) {
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
}
