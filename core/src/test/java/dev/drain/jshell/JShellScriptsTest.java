package dev.drain.jshell;

import static org.assertj.core.api.Assertions.assertThat;

import dev.drain.support.Bounds;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * jshell/README.md: every JShell script in {@code jshell/} runs, as {@code jshell/drain-jshell NN} runs it, and
 * prints its key result. Each script is evaluated in a fresh {@link DrainJShell}, as the launcher
 * starts JShell, split into snippets the way the JShell tool splits a file. A script fails if a
 * snippet is rejected, a snippet throws, it prints nothing, or its key lines are missing. The
 * remote VM's output is captured, never printed.
 *
 * <p>The scripts run three at a time, each in its own JShell, once the first of them is needed: a
 * script spends much of its time waiting for JShell's remote VM, so this halves the wall time.
 */
class JShellScriptsTest {

    private static final Path SCRIPTS = Path.of("jshell");

    /** How long one script may run before it is stopped and fails: generous, a bound against a hang. */
    private static final Duration SCRIPT_BOUND = Bounds.WAIT.multipliedBy(3);

    /** How many scripts run at once. */
    private static final int PARALLEL = 3;

    private static final ExecutorService RUNNER =
            Executors.newFixedThreadPool(PARALLEL, Thread.ofPlatform().name("jshell-script-", 1).factory());

    /** Every script's run, started when the first is needed; guarded by the class. */
    private static final Map<Script, Future<DrainJShell.ScriptRun>> RUNS = new EnumMap<>(Script.class);

    /**
     * The scripts, in reading order, each with the lines (whitespace runs collapsed) that show its key
     * result; the last of them are the answer its "Try it" lines print, which the test runs too.
     */
    enum Script {
        /** The setup check: JDK 25, preview features on, drain on the class path (P15's pinned JDK). */
        VERSION_CHECK("00-version-check.jsh",
                "OK: JDK 25, preview features on, drain's classes loaded: the other scripts will run.",
                "WorkerPool[first, workers=4, queueSize=16, itemTimeout=PT30S, retries=none, intake=SHUTDOWN_QUEUE,"
                        + " metrics=no, settler=no, NEW], live threads: 0"),
        /** SQ-01, SQ-02, SQ-03, SQ-10, SQ-11, SQ-15, SQ-17: the operations of an open queue, the orders, and str(queue). */
        QUEUE_BASICS("01-queue-basics.jsh",
                "q.putNowait(3) -> throws QueueFull (queue is full)",
                "prio (stored as Python's heapq stores it) -> returns <PriorityQueue maxsize=0 _queue=[1, 3, 2] tasks=3>",
                "q after putNowait(5), putNowait(6) -> returns <Queue maxsize=2 _queue=[5, 6] tasks=2>",
                "q.putNowait(7) -> throws QueueFull (queue is full)"),
        /** SQ-04, SQ-05, SQ-07: after a graceful shutdown items drain, puts fail, and every blocked getter and putter is woken. */
        GRACEFUL_SHUTDOWN("02-graceful-shutdown.jsh",
                "getter-2 -> threw QueueShutDown",
                "putter (waits in put(\"y\")) -> threw QueueShutDown",
                "q.taskDone(), twice -> returns <Queue maxsize=3 shutdown>",
                "q.join(Duration.ZERO) -> returns true"),
        /** SQ-08, SQ-09, SQ-11: shutdown(true) returns the dropped items; a join() that then returns is not success. */
        IMMEDIATE_SHUTDOWN("03-immediate-shutdown.jsh",
                "q.shutdown(true) -> returns [b, c]",
                "joiner (waits in q.join()) -> returned",
                "join() returned, yet [b, c] never ran: after shutdown(true), a join() that returns is NOT success.",
                "e.shutdown(true) -> returns [x, y]",
                "e.join(Duration.ZERO) -> returns true"),
        /** SQ-06, SQ-12, SQ-21: a woken thread re-checks the queue when it runs (cases C3, C4, C5, with atomically). */
        IN_TRANSIT("04-in-transit.jsh",
                "C3 getter-1 (woken by the put) -> threw QueueShutDown",
                "C4 getter (woken by the put) -> returned 7",
                "C5 putter-1 (woken by the get) -> threw QueueShutDown",
                "q.putNowait(8), then q.getNowait() -> returns 8",
                "b -> returns <Queue maxsize=0 _getters[1] tasks=1>"),
        /** SQ-08, SQ-10, SQ-11: taskDone, join's single check, the clamp (B2), join after shutdown(true) (B1), a forgotten taskDone. */
        JOIN_ACCOUNTING("05-join-accounting.jsh",
                "once (asyncio returns; queue.Queue would wait) -> returns <Queue maxsize=0 _queue=[2] tasks=1>",
                "clamp.unfinishedTasks() (0, not -2) -> returns 0",
                "joiner (waits in taken.join()) -> returned",
                "forgot.join(Duration.ofMillis(200)) -> returns false",
                "early -> returns <Queue maxsize=0 _queue=[a]>",
                "early.get(); early.taskDone() -> throws IllegalStateException (taskDone() called too many times)"),
        /** SQ-04 to SQ-11, SQ-13: the deployment recipe, then five mistakes, each the wrong way and the right way. */
        RECIPE_AND_MISTAKES("06-recipe-and-mistakes.jsh",
                "4. only now is the work done: 10 items",
                "stop.set(true); flagged.running(200 ms) -> returns true",
                "consumer with a stop flag -> threw QueueShutDown",
                "Right: record what shutdown(true) returned, as work left undone: dropped=[1, 2, 3]",
                "after the work: q.join(200 ms) -> returns false",
                "in a finally: q.join(200 ms) -> returns true",
                "interrupt at item 1 -> threw InterruptedException; done=[], q.join(200 ms) false,"
                        + " <Queue maxsize=0 _queue=[2, 3, 4] tasks=3>",
                "shutdown(), open the gate -> returned left on QueueShutDown; done=[1, 2, 3, 4], q.join(200 ms) true,"
                        + " <Queue maxsize=0 shutdown>",
                "interrupted, it waits in get() again, interrupt status false",
                "swallowing consumer -> returned gave up after catching QueueShutDown 999 times in a row: it spins",
                "recipe consumer, interrupted -> returned cancelled, interrupt kept: true",
                "idle consumer -> returned left on QueueShutDown"),
        /** FB-04, FB-07, FB-09 (specs/fallback-312.md): what ClosingQueue cannot do, beside ShutdownQueue. */
        PYTHON_312_FALLBACK("07-python-312-fallback.jsh",
                "producer (waits in put(2)) -> threw QueueShutDown (released by an interrupt: ArrayBlockingQueue has no other way)",
                "closer.running(200 ms) (close() blocks) -> returns true",
                "again.running(200 ms) (it waits forever) -> returns true",
                "sq.shutdown() (returns at once, on a full queue) -> ok",
                "twice.get() (a marker for a consumer that does not exist) -> throws QueueShutDown (queue is shut down)",
                "still closing after 200 ms: true",
                "close() with room for 2 of 3 markers -> returned"),
        /** WP-17, decisions 0006, 0007: StructuredTaskScope one idea at a time (JDK 25's API). */
        STRUCTURED_CONCURRENCY("08-structured-concurrency.jsh",
                "allSuccessfulOrThrow: join() -> returns [1, 4, 9]",
                "anySuccessfulResultOrThrow: join() -> returns fast",
                "scope.join() -> throws FailedException (java.io.IOException: subtask 2 fails)",
                "sibling.state() (interrupted, its result never counts) -> returns UNAVAILABLE",
                "close() returned; the cleaning subtask's thread is alive: false",
                "releaser -> returned the owner waited in close() while the cleanup ran",
                "s.join() -> returns ok"),
        /** WP-3, WP-4, decision 0007: a scope's timeout hangs in close() on a stubborn handler; the pool's escalation does not. */
        NAIVE_TIMEOUT("09-naive-timeout.jsh",
                "scope.running(300 ms) (3 x the timeout, in close()) -> returns true",
                "naive scope -> returned close() returned, once the handler was released by hand",
                "attempt(100 ms, swallowing(1)) -> returns FAILED after 2 interrupt(s): java.lang.InterruptedException",
                "attempt(100 ms, swallowing(2)) -> returns FAILED after 3 interrupt(s): java.lang.InterruptedException",
                "item 2 failed after 1 attempt: TimeoutException, stopped by interrupt 3",
                "escalations=3 (1 for item 1, 2 for item 2), liveThreads=0",
                "naive scope -> returned close() returned"),
        /** WP-9, WP-17: a ScopedValue is inherited by forked subtasks and never leaks; a ThreadLocal is not, and does. */
        WHY_SCOPED_VALUE("10-why-scoped-value.jsh",
                "the subtask saw: ThreadLocal null, InheritableThreadLocal request-1, ScopedValue request-1",
                "a ScopedValue has no set(); it is rebound for a nested call only: nested, then request-1 again",
                "task 2 reads the ThreadLocal: task 1's user (a leak: task 1 forgot local.remove())",
                "task 2 reads the ScopedValue: bound false (the binding ended with task 1's call)",
                "item 0 handler: request-7, item=0, attempt=1, ThreadLocal null; its subtask: request-7, item=0",
                "item 1 handler: request-7, item=1, attempt=1, ThreadLocal null; its subtask: request-7, item=1",
                "threw PoolFailure: 1 item failed: 1 after 1 attempt (java.util.NoSuchElementException: ScopedValue not bound)"),
        /** WP-1, WP-2, WP-10, WP-15, WP-17: results arrive in completion order, the stats add up, and no thread outlives the run. */
        POOL_RUN("11-pool-run.jsh",
                "results in completion order: [item 3 done, item 2 done, item 1 done, item 0 done]",
                "pool.liveThreads() after close(): 0",
                "[item 3, item 1, item 2]"),
        /** WP-5, WP-3, WP-6, WP-9: retryable failures are retried up to maxRetries, a timeout only if listed. */
        RETRIES("12-retries.jsh",
                "broken: ItemContext.attempt() was [1, 2, 3]",
                "flaky: ItemContext.attempt() was [1, 2]",
                "failed: broken after 3 attempt(s), IOException",
                "failed: bug after 1 attempt(s), IllegalStateException",
                "results: [item 7 on attempt 2]; stats: timedOut=1 retried=1; the run ended normally",
                "threw PoolFailure: 1 item failed: 7 after 1 attempt (java.util.concurrent.TimeoutException: item=7 attempt=1"
                        + " worker=0 outlived itemTimeout PT0.1S)"),
        /** WP-4, WP-3, WP-6, WP-8, WP-15: handlers that swallow 1, 2 or every interrupt; the escalations, and stuck. */
        STUBBORN_HANDLERS("13-stubborn-handlers.jsh",
                "item 3 is reported stuck while its handler still runs: pool.liveThreads() > 0 is true;"
                        + " the run cannot end until the handler returns",
                "item 3: StuckAttempt",
                "stats: timedOut=3 escalations=5 (1 + 2 + 2: round 2 and round 3 are escalations) failed=3 liveThreads=0",
                "attempt.escalated item=1 attempt=1 round=2",
                "attempt.stuck item=3 attempt=1: the handler was still running after 3 rounds of interrupts, PT0.1S apart",
                // the Try it's rounds 500 ms apart: at 100 ms, a machine loaded past 4 busy threads per core
                // ended an attempt after its round-3 time, and counted a third escalation (decision 0058)
                "threw PoolFailure: 1 item failed: 1 after 2 attempts (java.util.concurrent.TimeoutException: item=1 attempt=2"
                        + " worker=0 outlived itemTimeout PT0.5S); escalations=2"),
        /** WP-2, WP-7, WP-10, WP-12: requestStop() ends normally with every pulled item handled; abort() ends in PoolAborted naming the rest. */
        STOP_VS_ABORT("14-stop-vs-abort.jsh",
                "the iteration ends normally; outcome: Completed[stopRequested=true]",
                "discarded (never started, sorted): [2, 3, 4, 5]",
                "cancelled (interrupted in flight, sorted): [0, 1]",
                "pulled=0, Completed[stopRequested=true]"),
        /** WP-8, WP-18: a sink that throws anything but a VirtualMachineError is counted, on the run's metrics thread, and changes nothing. */
        FAILING_METRICS_SINK("15-failing-metrics-sink.jsh",
                "quiet sink: results (sorted) [1, 4, 9, 16, 25], ended normally, succeeded=5 failed=0 metricsRaised=0",
                "metricsRaised counts each call that threw: metricsRaised == calls is true",
                "it ran on [demo15-failing-metrics-<n>] only: never on a worker, an attempt, or the caller",
                "ended normally, succeeded=3, metricsRaised=0"),
        /** WP-13, WP-14, WP-17: abandon, an interrupted consumer, and results used from another thread. */
        ABANDON_AND_INTERRUPT("16-abandon-and-interrupt.jsh",
                "close() returned; pool.liveThreads() = 0 (every thread had finished)",
                "outcome Abandoned: discarded (sorted) [2, 3, 4], cancelled (sorted) [0, 1]",
                "results.hasNext() after close(): false",
                "consumer -> returned CancellationException caused by InterruptedException, interrupt status kept: true,"
                        + " liveThreads 0",
                "another thread's hasNext() -> threw WrongThreadException",
                "Abandoned, hasNext() false, liveThreads 0"),
        /** WP-17, WP-10: the caller's binding reaches every handler; the thread dump shows the run's tree under the caller. */
        RUN_TREE("17-run-tree.jsh",
                "tree17 (owned by main): tree17-watchdog-1, tree17-driver-2",
                "item 4: TENANT = tenant-42 on tree17-attempt-<n>",
                "After the run: pool.liveThreads() = 0, and the dump shows 0 threads named tree17-",
                "owned (owned by main): owned-watchdog-1, owned-driver-2; this thread: main"),
        /** WP-1, WP-2, WP-7, WP-12: the same runs on both intakes give the same results; the sentinel protocol by hand. */
        SENTINEL_INTAKE("18-sentinel-intake.jsh",
                "SHUTDOWN_QUEUE results (sorted) [1, 4, 9, 16, 25, 36, 49, 64, 81, 100], ended normally, pulled=10"
                        + " succeeded=10 liveThreads=0",
                "SENTINEL results (sorted) [1, 4, 9, 16, 25, 36, 49, 64, 81, 100], ended normally, pulled=10"
                        + " succeeded=10 liveThreads=0",
                "SHUTDOWN_QUEUE abort: discarded (sorted) [2, 3, 4, 5], cancelled (sorted) [0, 1], liveThreads=0",
                "SENTINEL abort: discarded (sorted) [2, 3, 4, 5], cancelled (sorted) [0, 1], liveThreads=0",
                "producer.running(200 ms) (no worker, no room) -> returns true",
                "the other worker: running(200 ms) -> returns true",
                "pulled=0, Completed[stopRequested=true]"),
        /** WP-22, WP-2, WP-12: acknowledging on take loses what an abort drops; a Settler releases it, and the next run gets it. */
        SETTLE_WITH_A_STORE("19-settle-with-a-store.jsh",
                "the run: discarded [4, 5, 6, 7], cancelled [2, 3]",
                "DONE in the store and never finished (lost): [2, 3, 4, 5, 6, 7]",
                "the store once the run ended: DONE [0, 1], READY [2, 3, 4, 5, 6, 7, 8, 9], CLAIMED [], DEAD []",
                "the next run handled (sorted) [2, 3, 4, 5, 6, 7, 8, 9], ended normally",
                "the store: DONE [0, 1, 2, 3, 4, 5, 6, 7, 8, 9], READY [], CLAIMED [], DEAD []"),
        /** WP-23, WP-24, WP-25, WP-28: a batch stops at its first bad item; a service goes on, stops at a deadline, retries later. */
        BATCH_OR_SERVICE("22-batch-or-service.jsh",
                "batch: Failed, failures [7], intake stopped at the first: true",
                "service: Completed, done 19, failures [7]",
                "deploy: Aborted, deadline passed: true, cancelled in flight: 2, liveThreads 0",
                "backoff none: failed 8 of 8",
                "backoff exponential from PT0.2S to PT0.8S: failed 0 of 8",
                "drain returned Failed");

        final String file;
        @SuppressWarnings("ImmutableEnumChecker") // List.of: unmodifiable, which the checker cannot see
        final List<String> keyLines;

        Script(String file, String... keyLines) {
            this.file = file;
            this.keyLines = List.of(keyLines);
        }
    }

    /**
     * jshell/README.md: every numbered script in jshell/ is listed here, so none goes untested; those that import
     * dev.drain.jobtable or dev.drain.kafka are their modules' ({@code DurableLessonTest}, {@code ExternalIoLessonTest},
     * {@code KafkaLessonTest}).
     */
    @Test
    void everyScriptIsListed() throws IOException {
        Set<String> files;
        try (Stream<Path> listing = Files.list(SCRIPTS)) {
            files = listing.map(path -> path.getFileName().toString())
                    .filter(name -> name.endsWith(".jsh") && !name.equals("startup.jsh"))
                    .filter(name -> !DrainJShell.needsAnAdapter(SCRIPTS.resolve(name)))
                    .collect(Collectors.toCollection(TreeSet::new));
        }
        assertThat(files).isEqualTo(Stream.of(Script.values()).map(s -> s.file).collect(Collectors.toCollection(TreeSet::new)));
    }

    /** jshell/README.md: the script runs without a rejected or throwing snippet and prints its key result (the clauses are on each {@link Script}). */
    @ParameterizedTest
    @EnumSource(Script.class)
    void runs(Script script) throws Exception {
        DrainJShell.ScriptRun run = started(script).get(SCRIPT_BOUND.multipliedBy(Script.values().length).toNanos(), TimeUnit.NANOSECONDS);

        assertThat(run.problems()).as("what went wrong in %s; its output:%n%s", script.file, run.output()).isEmpty();
        assertThat(run.output()).as("the output of %s", script.file).isNotBlank();
        List<String> lines = run.output().lines().map(line -> line.strip().replaceAll("\\s+", " ")).toList();
        assertThat(lines).as("the output of %s:%n%s", script.file, run.output()).containsAll(script.keyLines);
        assertThat(run.exercise()).as("the Try it lines %s ends with (\"  jshell> \" after \"%s\")", script.file, DrainJShell.TRY_IT)
                .isNotEmpty();
    }

    /**
     * jshell/README.md: a script starts with its lesson: a header comment of 2 to 4 lines naming the clauses, then code
     * within its first ten lines; and it never reaches into drain's internals by reflection (a test seam such
     * as ShutdownQueue.runLocked): what a script shows, a learner can do with the public API.
     */
    @ParameterizedTest
    @EnumSource(Script.class)
    void startsWithItsLesson(Script script) throws IOException {
        DrainJShell.assertStartsWithItsLesson(SCRIPTS.resolve(script.file));
    }

    /** Starts every script, if that has not been done, and returns {@code script}'s run. */
    private static synchronized Future<DrainJShell.ScriptRun> started(Script script) {
        if (RUNS.isEmpty()) {
            for (Script each : Script.values()) {
                RUNS.put(each, RUNNER.submit(() -> DrainJShell.runScript(SCRIPTS.resolve(each.file), SCRIPT_BOUND)));
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
}
