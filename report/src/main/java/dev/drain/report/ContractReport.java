package dev.drain.report;

import dev.drain.measure.ApiScan;
import dev.drain.measure.Json;
import dev.drain.measure.JvmThreads;
import dev.drain.measure.Provenance;
import dev.drain.pool.WorkerPool;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;
import java.util.stream.Collectors;

/**
 * The project's main job: runs the worker pool's contract cases on both intakes, prints what each
 * showed and which of the ten points (and the static eleventh) each case proves, writes the same
 * data to {@code target/contract-report.json}, and exits with status 1 if any point fails.
 *
 * <pre>
 * usage: ContractReport [--case NAME] [--intake queue|sentinel] [--wide | --width N] [--json] [--html]
 *   --case NAME     run one case (happy, retry, timeout-retry, stubborn, permanent-failures,
 *                   request-stop, metrics-failing, context-isolation, abandon, abort,
 *                   caller-interrupted, leaky-handler)
 *   --intake KIND   run on one intake only
 *   --width N       the terminal is N columns wide (the launcher passes it): the wide table if it
 *                   fits, else a block per case; without it, the blocks, at most 100 columns wide
 *   --wide          the wide table, a row per case and intake, whatever the width
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

    /**
     * The packages whose public signatures point 11 scans ({@link ApiScan}), each named by one of its
     * classes: the library's two and the report's own. The core's {@code ApiSignatureTest} scans the
     * library's two again, with the foils and the measure, which this module does not see whole (the
     * library's jar leaves the foils out).
     */
    static final List<Class<?>> SCANNED = List.of(dev.drain.queue.ShutdownQueue.class, WorkerPool.class,
            dev.drain.safe.SafeText.class, ContractReport.class);

    /** How wide the report may be when no {@code --width} says how wide the terminal is. */
    static final int DEFAULT_WIDTH = 100;
    /** The narrowest the blocks are laid out for: a narrower terminal wraps them. */
    private static final int NARROWEST = 60;

    /**
     * What the command line asked for.
     *
     * @param cases the cases to run
     * @param intakes the intakes to run them on
     * @param json print the JSON instead of the report
     * @param html also write the timelines' page
     * @param width the terminal's width ({@code --width}), or {@link #DEFAULT_WIDTH}
     * @param wide {@code --wide}: the wide table, whatever the width
     */
    record Options(List<Cases.Case> cases, List<WorkerPool.IntakeKind> intakes, boolean json, boolean html, int width,
                   boolean wide) {}

    /**
     * What one run of the report found.
     *
     * @param provenance where and when it ran
     * @param results each case on each intake, in the order they ran
     * @param apiProblems what the API scan found (WP-11); empty if it holds
     */
    record Report(Provenance provenance, List<CaseResult> results, List<String> apiProblems) {
        Report {
            results = List.copyOf(results);
            apiProblems = List.copyOf(apiProblems);
        }
    }

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
            err.println("usage: ContractReport [--case NAME] [--intake queue|sentinel] [--wide | --width N] [--json] [--html]");
            return 2;
        }
        return present(execute(options, err), options, out);
    }

    /**
     * Runs the cases {@code options} asks for, with progress on {@code err} if it is a terminal,
     * and with {@code --html} writes {@code target/contract-report.html}; {@return what they showed}
     */
    static Report execute(Options options, PrintStream err) {
        Provenance provenance = Provenance.now();
        JvmThreads.warmUp(); // so that task_delta moves only when a thread is started or left running
        List<TimelinePage.Entry> drawn = new ArrayList<>();
        List<CaseResult> results = runCases(options, Style.detect(), err, drawn);
        List<String> apiProblems = ApiScan.problems(SCANNED);
        if (options.html()) {
            Path page = Path.of("target", "contract-report.html");
            write(page, TimelinePage.render(provenance, drawn));
            err.println("ContractReport: wrote " + page + " (" + drawn.size() + " timelines)");
        }
        return new Report(provenance, results, apiProblems);
    }

    /**
     * Writes {@code report} to {@code target/contract-report.json} and prints it to {@code out} as
     * {@code options} asks; {@return the exit status: 0 if every case and every point holds, else 1}
     */
    static int present(Report report, Options options, PrintStream out) {
        Map<String, Object> json = json(report.provenance(), report.results(), report.apiProblems());
        write(Path.of("target", "contract-report.json"), Json.write(json));
        if (options.json()) {
            out.print(Json.write(json));
        } else {
            lines(report, options, Style.detect()).forEach(out::println);
        }
        boolean allHold = pointResults(report.results(), report.apiProblems()).values().stream()
                .allMatch(verdict -> verdict.equals("holds") || verdict.equals("not run"));
        return allHold && report.results().stream().allMatch(CaseResult::passed) ? 0 : 1;
    }

    static Options parse(String[] args) {
        List<Cases.Case> cases = Cases.ALL;
        List<WorkerPool.IntakeKind> intakes = List.of(WorkerPool.IntakeKind.values());
        boolean json = false;
        boolean html = false;
        boolean wide = false;
        int width = DEFAULT_WIDTH;
        for (int i = 0; i < args.length; i++) {
            String arg = args[i];
            switch (arg) {
                case "--json" -> json = true;
                case "--html" -> html = true;
                case "--wide" -> wide = true;
                case "--case", "--intake", "--width" -> {
                    if (i + 1 >= args.length) {
                        throw new IllegalArgumentException(arg + " needs a value");
                    }
                    String value = args[++i];
                    switch (arg) {
                        case "--case" -> {
                            cases = Cases.ALL.stream().filter(c -> c.name().equals(value)).toList();
                            if (cases.isEmpty()) {
                                throw new IllegalArgumentException("no case named '" + value + "'; the cases are "
                                        + String.join(", ", EVERY_CASE));
                            }
                        }
                        case "--intake" -> intakes = List.of(switch (value) {
                            case "queue" -> WorkerPool.IntakeKind.SHUTDOWN_QUEUE;
                            case "sentinel" -> WorkerPool.IntakeKind.SENTINEL;
                            default -> throw new IllegalArgumentException("--intake is queue or sentinel, not '" + value + "'");
                        });
                        default -> width = columns(value);
                    }
                }
                case "--help", "-h" -> throw new IllegalArgumentException("runs the worker pool's contract cases");
                default -> throw new IllegalArgumentException("unknown option '" + arg + "'");
            }
        }
        return new Options(cases, intakes, json, html, width, wide);
    }

    private static int columns(String value) {
        try {
            int columns = Integer.parseInt(value);
            if (columns > 0) {
                return columns;
            }
        } catch (NumberFormatException e) {
            // reported below
        }
        throw new IllegalArgumentException("--width is a number of columns, not '" + value + "'");
    }

    /** Runs the cases; with {@code --html}, each under a recording of the pool's events, drawn into {@code drawn}. */
    private static List<CaseResult> runCases(Options options, Style style, PrintStream err,
                                             List<TimelinePage.Entry> drawn) {
        List<CaseResult> results = new ArrayList<>();
        int total = options.cases().size() * options.intakes().size();
        for (Cases.Case c : options.cases()) {
            for (WorkerPool.IntakeKind intake : options.intakes()) {
                style.progress(err, "[" + (results.size() + 1) + "/" + total + "] " + c.name() + " on " + intake);
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
        style.progress(err, "");
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

    private static final String WP11_TITLE = "Static (signatures, build)";
    private static final String WP11_PROVED_BY =
            "ApiScan of every public signature; -Xlint:all -Werror, Error Prone, NullAway at build";

    /** What the report says below the points, in either layout. */
    private static final List<String> NOTES = List.of(
            "A failed or aborted outcome is what those cases expect; ✓ means every check of the case held.",
            "task_delta counts the live threads of the JVM after the case that were not alive before it (a JSON "
                    + "thread dump, virtual threads included); leaky-handler's 1 is the leak it makes on purpose, which "
                    + "the count must see.",
            "Data: target/contract-report.json. Clauses: specs/worker-pool.md; cases: specs/contract-report.md.");

    /**
     * {@return the report as lines: the wide table if {@code --wide}, or if it fits in the
     * terminal's width; else a block per case, at most as wide as the terminal and never wider than
     * {@link #DEFAULT_WIDTH}}
     */
    static List<String> lines(Report report, Options options, Style style) {
        List<String> table = caseTable(report.results(), style);
        int tableWidth = table.stream().mapToInt(Table::width).max().orElse(0);
        boolean wide = options.wide() || tableWidth <= options.width();
        int width = wide ? Integer.MAX_VALUE : Math.max(NARROWEST, Math.min(options.width(), DEFAULT_WIDTH));
        List<String> lines = new ArrayList<>();
        lines.add(style.bold("drain: the worker-pool contract, case by case"));
        lines.addAll(Table.wrap("commit " + report.provenance().source() + ", " + report.provenance().date() + ", JDK "
                + Runtime.version().feature() + ", " + report.provenance().cores() + " cores", width));
        lines.add("");
        if (wide) {
            wide(lines, report, table, style);
        } else {
            narrow(lines, report, tableWidth, style, width);
        }
        return lines;
    }

    /** The wide table: a row per case and intake, a column per measure. */
    private static List<String> caseTable(List<CaseResult> results, Style style) {
        List<List<String>> rows = new ArrayList<>();
        rows.add(List.of("case", "intake", "results", "attempts", "max_lead", "lead_ok", "outcome", "ctx_ok",
                "metrics_raised", "task_delta", ""));
        for (CaseResult r : results) {
            rows.add(List.of(r.name(), r.intake(), r.resultsWithOrder(), r.attemptsText(), r.maxLead() + "/" + r.leadBound(),
                    CaseResult.yesNo(r.leadOk()), r.outcome(), CaseResult.yesNo(r.contextOk()),
                    String.valueOf(r.metricsRaised()), r.taskDeltaText(), r.passed() ? style.pass("✓") : style.fail("✗ " + String.join("; ", r.failedChecks()))));
        }
        List<String> lines = new ArrayList<>(Table.render(rows));
        lines.set(0, style.bold(lines.getFirst()));
        return lines;
    }

    /** The wide layout: the table, each case's pool, the outcomes in full, the points. */
    private static void wide(List<String> lines, Report report, List<String> table, Style style) {
        List<CaseResult> results = report.results();
        lines.addAll(table);
        lines.add("");
        lines.add(style.bold("Each case's pool"));
        Map<String, String> settings = new LinkedHashMap<>();
        results.forEach(r -> settings.putIfAbsent(r.name(), poolSettings(r)));
        settings.forEach((name, pool) -> lines.add("  " + name + ": " + shows(name) + ". " + pool));
        List<String> details = new ArrayList<>();
        for (CaseResult r : results) {
            String line = r.name() + ": " + r.outcomeDetail();
            if (!r.outcomeDetail().isEmpty() && !details.contains(line)) { // once if the same on both intakes
                details.add(line);
            }
        }
        if (!details.isEmpty()) {
            lines.add("");
            lines.add(style.bold("Outcomes in full"));
            details.forEach(line -> lines.add("  " + line));
        }
        lines.add("");
        lines.add(style.bold("The contract"));
        Map<String, String> verdicts = pointResults(results, report.apiProblems());
        for (Point point : POINTS) {
            lines.add(String.format("  %-5s %-27s %s  %s", point.id(), point.title(),
                    mark(style, verdicts.getOrDefault(point.id(), "not run")), provedBy(point, results)));
        }
        lines.add(String.format("  %-5s %-27s %s  %s", "WP-11", WP11_TITLE,
                mark(style, verdicts.getOrDefault("WP-11", "not run")), WP11_PROVED_BY));
        lines.add("");
        NOTES.forEach(note -> lines.addAll(Table.wrap(note, DEFAULT_WIDTH)));
    }

    /**
     * The narrow layout, at most {@code width} columns: a block per case, its intakes side by
     * side and a row per measure, the pool and the outcome in full in the block; then the points,
     * each with the cases that prove it.
     */
    private static void narrow(List<String> lines, Report report, int tableWidth, Style style, int width) {
        List<CaseResult> results = report.results();
        lines.addAll(Table.wrap("A block per case, its intakes side by side. ./contract-report --wide prints one "
                + "table instead, a row per case and intake (" + tableWidth + " columns); a terminal that wide "
                + "gets it by itself.", width));
        Map<String, List<CaseResult>> byCase = new LinkedHashMap<>();
        results.forEach(r -> byCase.computeIfAbsent(r.name(), k -> new ArrayList<>()).add(r));
        byCase.forEach((name, intakes) -> {
            lines.add("");
            lines.addAll(CaseBlock.render(name, shows(name), intakes, poolSettings(intakes.getFirst()), style, width));
        });
        lines.add("");
        lines.add(style.bold("The contract"));
        Map<String, String> verdicts = pointResults(results, report.apiProblems());
        for (Point point : POINTS) {
            point(lines, style, width, point.id(), point.title(), verdicts.getOrDefault(point.id(), "not run"),
                    provedBy(point, results));
        }
        point(lines, style, width, "WP-11", WP11_TITLE, verdicts.getOrDefault("WP-11", "not run"), WP11_PROVED_BY);
        lines.add("");
        NOTES.forEach(note -> lines.addAll(Table.wrap(note, width)));
    }

    /** One point in the narrow layout: its id, title and mark, then what proves it and, if it fails, where, wrapped. */
    private static void point(List<String> lines, Style style, int width, String id, String title, String verdict,
                              String provedBy) {
        String head = String.format("  %-5s %-27s ", id, title);
        String mark = verdict.startsWith("holds") ? style.pass("✓") : verdict.equals("not run") ? "·" : style.fail("✗");
        int indent = Table.width(head) + 3;
        List<String> text = new ArrayList<>(Table.wrap(verdict.equals("not run") ? "not run" : provedBy, width - indent));
        if (!verdict.startsWith("holds") && !verdict.equals("not run")) {
            Table.wrap(verdict, width - indent).forEach(line -> text.add(style.fail(line)));
        }
        lines.add(head + mark + "  " + text.getFirst());
        text.subList(1, text.size()).forEach(line -> lines.add(" ".repeat(indent) + line));
    }

    private static String shows(String name) {
        return Cases.ALL.stream().filter(c -> c.name().equals(name)).map(Cases.Case::shows).findFirst().orElse("");
    }

    /** The pool's settings without its intake, which the report shows apart. */
    private static String poolSettings(CaseResult r) {
        return r.settings().replaceAll(", intake=[A-Z_]+", "");
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
}
