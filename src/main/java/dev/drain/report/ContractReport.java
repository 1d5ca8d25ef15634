package dev.drain.report;

import dev.drain.pool.WorkerPool;
import java.io.Console;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Predicate;
import java.util.stream.Collectors;

/**
 * The project's main job: runs the worker pool's contract cases on both intakes, prints what each
 * showed and which of the ten points (and the static eleventh) each case proves, writes the same
 * data to {@code target/contract-report.json}, and exits with status 1 if any point fails.
 *
 * <pre>
 * usage: ContractReport [--case NAME] [--intake queue|sentinel] [--json] [--html]
 *   --case NAME     run one case (happy, retry, timeout-retry, stubborn, permanent-failures,
 *                   request-stop, metrics-failing, context-isolation, abandon, abort,
 *                   caller-interrupted, leaky-handler)
 *   --intake KIND   run on one intake only
 *   --json          print the JSON instead of the tables
 *   --html          also write target/contract-report.html: every case as a timeline, drawn from
 *                   the pool's JDK Flight Recorder events
 * </pre>
 * From the repository: {@code ./contract-report [options]}, which compiles first if needed; or
 * through Maven, {@code ./mvnw -q compile exec:exec -Dreport.args="--case stubborn"}.
 */
public final class ContractReport {
    private ContractReport() {}

    /** One point of the contract, and how the report decides it. */
    private record Point(String id, String title, String provedBy, List<String> cases,
                         Predicate<CaseResult> holds) {}

    private static final List<String> EVERY_CASE = Cases.ALL.stream().map(Cases.Case::name).toList();

    private static final List<Point> POINTS = List.of(
            new Point("WP-1", "Bounded intake", "every case: max_lead <= queueSize + workers + 1", EVERY_CASE,
                    CaseResult::leadOk),
            new Point("WP-2", "Exactly once", "", List.of("happy", "permanent-failures", "request-stop", "abort"),
                    CaseResult::passed),
            new Point("WP-3", "Per-item timeout", "", List.of("timeout-retry", "stubborn"), CaseResult::passed),
            new Point("WP-4", "Escalating cancellation", "", List.of("stubborn"), CaseResult::passed),
            new Point("WP-5", "Retry policy", "", List.of("retry", "timeout-retry"), CaseResult::passed),
            new Point("WP-6", "Permanent failures", "", List.of("permanent-failures"), CaseResult::passed),
            new Point("WP-7", "requestStop()", "", List.of("request-stop"), CaseResult::passed),
            new Point("WP-8", "The metrics sink may fail", "", List.of("metrics-failing"), CaseResult::passed),
            new Point("WP-9", "Context isolation", "context-isolation; ctx_ok in every case", EVERY_CASE,
                    r -> r.contextOk() && (!r.name().equals("context-isolation") || r.passed())),
            new Point("WP-10", "No leaks", "every case: task_delta as expected (0; 1 where a handler leaks on purpose)",
                    EVERY_CASE, CaseResult::taskDeltaOk));

    /** What the command line asked for. */
    private record Options(List<Cases.Case> cases, List<WorkerPool.IntakeKind> intakes, boolean json, boolean html) {}

    /**
     * Runs the report.
     *
     * @param args the options; see the class description
     */
    public static void main(String[] args) {
        System.exit(run(args, System.out, System.err));
    }

    /**
     * Runs the report with {@code args}, printing to {@code out} (and usage errors and progress to
     * {@code err}); {@return the exit status: 0 if every point holds, 1 if one fails, 2 for bad options}
     */
    static int run(String[] args, PrintStream out, PrintStream err) {
        Options options;
        try {
            options = parse(args);
        } catch (IllegalArgumentException e) {
            err.println("ContractReport: " + e.getMessage());
            err.println("usage: ContractReport [--case NAME] [--intake queue|sentinel] [--json] [--html]");
            return 2;
        }
        Style style = Style.detect(err);
        Provenance provenance = Provenance.now();
        JvmThreads.warmUp(); // so that task_delta moves only when a thread is started or left running
        List<TimelinePage.Entry> drawn = new ArrayList<>();
        List<CaseResult> results = runCases(options, style, drawn);
        List<String> apiProblems = ApiScan.problems(ApiScan.PACKAGES);
        if (options.html()) {
            Path page = Path.of("target", "contract-report.html");
            write(page, TimelinePage.render(provenance, drawn));
            err.println("ContractReport: wrote " + page + " (" + drawn.size() + " timelines)");
        }
        Map<String, Object> json = json(provenance, results, apiProblems);
        write(Path.of("target", "contract-report.json"), Json.write(json));
        if (options.json()) {
            out.print(Json.write(json));
        } else {
            print(out, style, provenance, results, apiProblems);
        }
        boolean allHold = pointResults(results, apiProblems).values().stream()
                .allMatch(verdict -> verdict.equals("holds") || verdict.equals("not run"));
        return allHold && results.stream().allMatch(CaseResult::passed) ? 0 : 1;
    }

    private static Options parse(String[] args) {
        List<Cases.Case> cases = Cases.ALL;
        List<WorkerPool.IntakeKind> intakes = List.of(WorkerPool.IntakeKind.values());
        boolean json = false;
        boolean html = false;
        for (int i = 0; i < args.length; i++) {
            String arg = args[i];
            switch (arg) {
                case "--json" -> json = true;
                case "--html" -> html = true;
                case "--case", "--intake" -> {
                    if (i + 1 >= args.length) {
                        throw new IllegalArgumentException(arg + " needs a value");
                    }
                    String value = args[++i];
                    if (arg.equals("--case")) {
                        cases = Cases.ALL.stream().filter(c -> c.name().equals(value)).toList();
                        if (cases.isEmpty()) {
                            throw new IllegalArgumentException("no case named '" + value + "'; the cases are "
                                    + String.join(", ", EVERY_CASE));
                        }
                    } else {
                        intakes = List.of(switch (value) {
                            case "queue" -> WorkerPool.IntakeKind.SHUTDOWN_QUEUE;
                            case "sentinel" -> WorkerPool.IntakeKind.SENTINEL;
                            default -> throw new IllegalArgumentException("--intake is queue or sentinel, not '" + value + "'");
                        });
                    }
                }
                case "--help", "-h" -> throw new IllegalArgumentException("runs the worker pool's contract cases");
                default -> throw new IllegalArgumentException("unknown option '" + arg + "'");
            }
        }
        return new Options(cases, intakes, json, html);
    }

    /** Runs the cases; with {@code --html}, each under a recording of the pool's events, drawn into {@code drawn}. */
    private static List<CaseResult> runCases(Options options, Style style, List<TimelinePage.Entry> drawn) {
        List<CaseResult> results = new ArrayList<>();
        int total = options.cases().size() * options.intakes().size();
        for (Cases.Case c : options.cases()) {
            for (WorkerPool.IntakeKind intake : options.intakes()) {
                style.progress("[" + (results.size() + 1) + "/" + total + "] " + c.name() + " on " + intake);
                if (options.html()) {
                    Timeline.Recorded<CaseResult> recorded = Timeline.record(() -> runOne(c, intake));
                    CaseResult result = recorded.value();
                    results.add(result);
                    drawn.add(new TimelinePage.Entry(result, c.shows(), Timeline.of(c.name() + " on " + result.intake(),
                            Trial.poolName(c.name(), intake), recorded.events())));
                } else {
                    results.add(runOne(c, intake));
                }
            }
        }
        style.progress("");
        return results;
    }

    /** Runs one case; a case that throws is reported as failed, not as a crash of the report. */
    private static CaseResult runOne(Cases.Case c, WorkerPool.IntakeKind intake) {
        long start = System.nanoTime();
        try {
            return c.program().apply(intake);
        } catch (RuntimeException e) {
            return new CaseResult(c.name(), intake == WorkerPool.IntakeKind.SHUTDOWN_QUEUE ? "queue" : "sentinel",
                    "", List.of(), "-", Map.of(), 0, 0, "the case failed", String.valueOf(e), false, 0, -1, 0,
                    List.of("the case ran to its end"), (System.nanoTime() - start) / 1_000_000);
        }
    }

    /** For each point: "holds", "FAILS: ...", or "not run". */
    private static Map<String, String> pointResults(List<CaseResult> results, List<String> apiProblems) {
        Map<String, String> verdicts = new LinkedHashMap<>();
        for (Point point : POINTS) {
            List<CaseResult> relevant = results.stream().filter(r -> point.cases().contains(r.name())).toList();
            List<String> failing = relevant.stream().filter(point.holds().negate())
                    .map(r -> r.name() + "/" + r.intake()).toList();
            verdicts.put(point.id(), relevant.isEmpty() ? "not run"
                    : failing.isEmpty() ? "holds" : "FAILS in " + String.join(", ", failing));
        }
        verdicts.put("WP-11", apiProblems.isEmpty() ? "holds" : "FAILS: " + String.join("; ", apiProblems));
        return verdicts;
    }

    private static String provedBy(Point point, List<CaseResult> results) {
        if (!point.provedBy().isEmpty()) {
            return point.provedBy();
        }
        return point.cases().stream().filter(name -> results.stream().anyMatch(r -> r.name().equals(name)))
                .collect(Collectors.joining(", "));
    }

    private static void print(PrintStream out, Style style, Provenance provenance, List<CaseResult> results,
                              List<String> apiProblems) {
        out.println(style.bold("drain: the worker-pool contract, case by case"));
        out.println("commit " + provenance.source() + ", " + provenance.date() + ", JDK " + Runtime.version().feature()
                + ", " + provenance.cores() + " cores");
        out.println();
        List<List<String>> rows = new ArrayList<>();
        rows.add(List.of("case", "intake", "results", "attempts", "max_lead", "lead_ok", "outcome", "ctx_ok",
                "metrics_raised", "task_delta", ""));
        for (CaseResult r : results) {
            rows.add(List.of(r.name(), r.intake(), r.resultsText() + (r.order().equals("-") ? "" : " (" + r.order() + ")"),
                    r.attemptsText(), r.maxLead() + "/" + r.leadBound(), r.leadOk() ? "yes" : "NO", r.outcome(),
                    r.contextOk() ? "yes" : "NO", String.valueOf(r.metricsRaised()),
                    r.taskDelta() + (r.expectedTaskDelta() == 0 ? "" : " (expected)"),
                    r.passed() ? style.pass("✓") : style.fail("✗ " + String.join("; ", r.failedChecks()))));
        }
        List<String> lines = Table.render(rows);
        out.println(style.bold(lines.getFirst()));
        lines.subList(1, lines.size()).forEach(out::println);
        out.println();
        out.println(style.bold("Each case's pool"));
        Map<String, String> settings = new LinkedHashMap<>();
        results.forEach(r -> settings.putIfAbsent(r.name(), r.settings().replaceAll(", intake=[A-Z_]+", "")));
        Map<String, String> shows = new LinkedHashMap<>();
        Cases.ALL.forEach(c -> shows.put(c.name(), c.shows()));
        settings.forEach((name, pool) -> out.println("  " + name + ": " + shows.getOrDefault(name, "") + ". " + pool));
        List<String> details = new ArrayList<>();
        for (CaseResult r : results) {
            if (!r.outcomeDetail().isEmpty()) {
                String line = r.name() + ": " + r.outcomeDetail();
                if (details.contains(line)) {
                    continue; // the same on both intakes
                }
                details.add(line);
            }
        }
        if (!details.isEmpty()) {
            out.println();
            out.println(style.bold("Outcomes in full"));
            details.forEach(line -> out.println("  " + line));
        }
        out.println();
        out.println(style.bold("The contract"));
        Map<String, String> verdicts = pointResults(results, apiProblems);
        for (Point point : POINTS) {
            out.printf("  %-5s %-27s %s  %s%n", point.id(), point.title(), mark(style, verdicts.getOrDefault(point.id(), "not run")),
                    provedBy(point, results));
        }
        out.printf("  %-5s %-27s %s  %s%n", "WP-11", "Static (signatures, build)", mark(style, verdicts.getOrDefault("WP-11", "not run")),
                "ApiScan of every public signature; -Xlint:all -Werror, Error Prone, NullAway at build");
        out.println();
        out.println("A failed or aborted outcome is what those cases expect; ✓ means every check of the case held.");
        out.println("task_delta counts every live thread of the JVM (a JSON thread dump, virtual threads included), after");
        out.println("the case minus before; leaky-handler's 1 is the leak it makes on purpose, which the count must see.");
        out.println("Data: target/contract-report.json. Clauses: specs/worker-pool.md; the cases: specs/contract-report.md.");
    }

    private static String mark(Style style, String verdict) {
        return verdict.startsWith("holds") ? style.pass("✓") : verdict.equals("not run") ? "·" : style.fail("✗ " + verdict);
    }

    private static Map<String, Object> json(Provenance provenance, List<CaseResult> results, List<String> apiProblems) {
        Map<String, Object> json = new LinkedHashMap<>(provenance.toJson());
        json.put("cases", results.stream().map(CaseResult::toJson).toList());
        List<Map<String, Object>> points = new ArrayList<>();
        Map<String, String> verdicts = pointResults(results, apiProblems);
        for (Point point : POINTS) {
            points.add(Map.of("point", point.id(), "title", point.title(), "proved_by", provedBy(point, results),
                    "verdict", verdicts.getOrDefault(point.id(), "not run")));
        }
        points.add(Map.of("point", "WP-11", "title", "Static", "proved_by", "ApiScan; build flags",
                "verdict", verdicts.getOrDefault("WP-11", "not run"), "problems", apiProblems));
        json.put("points", points);
        return json;
    }

    private static void write(Path file, String text) {
        try {
            Files.createDirectories(file.toAbsolutePath().getParent());
            Files.writeString(file, text);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Colour and progress, only on a terminal (and never with {@code NO_COLOR} set). */
    private record Style(boolean terminal, PrintStream err) {
        static Style detect(PrintStream err) {
            // JDK 22+: System.console() is there even without a terminal; isTerminal() tells.
            boolean terminal = Optional.ofNullable(System.console()).map(Console::isTerminal).orElse(false);
            return new Style(terminal && System.getenv("NO_COLOR") == null, err);
        }

        String bold(String s) {
            return terminal ? "\u001b[1m" + s + "\u001b[0m" : s;
        }

        String pass(String s) {
            return terminal ? "\u001b[32m" + s + "\u001b[0m" : s;
        }

        String fail(String s) {
            return terminal ? "\u001b[31m" + s + "\u001b[0m" : s;
        }

        void progress(String line) {
            if (terminal) {
                err.print("\r\u001b[2K" + line);
                err.flush();
            }
        }
    }
}
