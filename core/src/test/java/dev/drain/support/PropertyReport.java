package dev.drain.support;

import dev.drain.measure.Json;
import dev.drain.measure.Provenance;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.reflect.Method;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.AfterTestExecutionCallback;
import org.junit.jupiter.api.extension.BeforeTestExecutionCallback;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;
import org.junit.jupiter.params.ParameterizedTest;

/**
 * Collects {@link Evidence} from the property, trace and stress suites and, when the test run
 * ends, writes {@code target/property-report.md} and {@code target/property-report.json}: the
 * file people cite. A partial run ({@code -Dtest=...}) writes {@code property-report-partial.md}
 * and {@code .json} instead, and leaves the complete report alone. Use with {@code @ExtendWith(PropertyReport.class)} and an {@code Evidence}
 * parameter.
 *
 * <p>The report says where it comes from (the commit, whether the tree was dirty, the date, the
 * OS, the JDK), whether it is complete (every test of every suite that uses this extension ran)
 * or partial, and which suites it covers, each complete, partial or not run; for each test: the
 * property, its clauses, the tries asked for and run and why they differ, the seed, the command
 * that reruns it alone and exactly, the result with the shrunk counterexample of a failure; then
 * the coverage floors, each met or missed, and the statistics, those of workloads several tests
 * share ({@link Evidence#sharedWorkloads}) once. When it has written the report it prints one
 * line naming the file, the build's last before Maven's summary of the tests.
 */
public final class PropertyReport implements ParameterResolver, BeforeTestExecutionCallback,
        AfterTestExecutionCallback {

    /** Where the report goes; the build's output folder. */
    static final Path OUTPUT = Path.of("target");
    /** How much of a failure's message (QuickTheories' shrunk counterexample) the report keeps. */
    private static final int COUNTEREXAMPLE_CHARS = 4_000;

    /** One row of the report: a test method, with every invocation's evidence merged. */
    private static final class Row {
        final String suite;
        final String test;
        final Evidence evidence = new Evidence();
        int invocations;
        int failed;
        long nanos;
        final List<String> failures = new ArrayList<>();

        Row(String suite, String test) {
            this.suite = suite;
            this.test = test;
        }
    }

    /** Every row of this run; written once, when JUnit closes the root store at the end. */
    private static final class Rows implements AutoCloseable {
        private final Map<String, Row> rows = new TreeMap<>();

        synchronized Row row(String suite, String test) {
            return rows.computeIfAbsent(suite + "#" + test, k -> new Row(suite, test));
        }

        /** Writes the report, and prints the one line of the build that names it. */
        @Override
        public synchronized void close() {
            if (!rows.isEmpty()) {
                System.out.println(write(List.copyOf(rows.values())).line());
            }
        }
    }

    private static Rows rows(ExtensionContext context) {
        return context.getRoot().getStore(ExtensionContext.Namespace.GLOBAL)
                .computeIfAbsent(Rows.class, k -> new Rows(), Rows.class);
    }

    private static Row row(ExtensionContext context) {
        return rows(context).row(context.getRequiredTestClass().getSimpleName(),
                context.getRequiredTestMethod().getName());
    }

    @Override
    public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
        return parameter.getParameter().getType() == Evidence.class;
    }

    @Override
    public Object resolveParameter(ParameterContext parameter, ExtensionContext context) {
        return row(context).evidence;
    }

    @Override
    public void beforeTestExecution(ExtensionContext context) {
        context.getStore(ExtensionContext.Namespace.create(PropertyReport.class)).put("start", System.nanoTime());
    }

    @Override
    public void afterTestExecution(ExtensionContext context) {
        Long start = context.getStore(ExtensionContext.Namespace.create(PropertyReport.class)).get("start", Long.class);
        Row row = row(context);
        synchronized (rows(context)) {
            row.invocations++;
            row.nanos += start == null ? 0 : System.nanoTime() - start;
            context.getExecutionException().ifPresent(e -> {
                row.failed++;
                String message = String.valueOf(e.getMessage()).strip();
                row.failures.add(context.getDisplayName() + ": " + e.getClass().getName() + ": "
                        + (message.length() > COUNTEREXAMPLE_CHARS ? message.substring(0, COUNTEREXAMPLE_CHARS) + " …" : message));
            });
        }
    }

    // ---- writing the report ------------------------------------------------------------------------

    /** Every test of every suite that reports here, found in the compiled test classes: what a complete run runs. */
    private static Set<String> expectedTests() {
        Set<String> expected = new TreeSet<>();
        Path root;
        try {
            root = Path.of(PropertyReport.class.getProtectionDomain().getCodeSource().getLocation().toURI());
        } catch (URISyntaxException e) {
            return expected;
        }
        try (Stream<Path> files = Files.walk(root)) {
            for (Path file : files.filter(f -> f.toString().endsWith(".class") && !f.toString().contains("$")).toList()) {
                String name = root.relativize(file).toString().replace(".class", "").replace('/', '.');
                Class<?> type = Class.forName(name, false, PropertyReport.class.getClassLoader());
                ExtendWith extendWith = type.getAnnotation(ExtendWith.class);
                if (extendWith == null || !List.of(extendWith.value()).contains(PropertyReport.class)) {
                    continue;
                }
                for (Method method : type.getDeclaredMethods()) {
                    if (method.isAnnotationPresent(Test.class) || method.isAnnotationPresent(ParameterizedTest.class)) {
                        expected.add(type.getSimpleName() + "#" + method.getName());
                    }
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (ClassNotFoundException e) {
            throw new IllegalStateException("a test class file without its class: " + e.getMessage(), e);
        }
        return expected;
    }

    /** JUnit's timeout for every test, which a heavy run raises: a rerun of a heavy row needs it too. */
    private static final String TIMEOUT = "junit.jupiter.execution.timeout.default";

    /**
     * {@return the command that reruns {@code row} alone, with what reproduces it: the test method,
     * and the system properties the test named (seed, tries, shrinking steps, factors), and the
     * test timeout if this run set one}
     */
    private static String rerunCommand(Row row) {
        Map<String, String> properties = row.evidence.rerunProperties();
        String timeout = System.getProperty(TIMEOUT);
        if (timeout != null && !timeout.isBlank()) {
            properties.put(TIMEOUT, timeout);
        }
        return "./mvnw -q test -Dtest='" + id(row) + "'" + properties.entrySet().stream()
                .map(e -> " -D" + e.getKey() + "=" + (e.getValue().contains(" ") ? "'" + e.getValue() + "'" : e.getValue()))
                .collect(Collectors.joining());
    }

    /** {@return why the tries run differ from the tries asked for, or an empty string if they do not} */
    private static String whyTriesDiffer(Row row) {
        long requested = row.evidence.triesRequested();
        long run = row.evidence.triesRun();
        if (requested == 0 || requested == run) {
            return "";
        }
        if (row.failed > 0) {
            return "stopped at the first failure, then shrank it (each shrinking step is a try)";
        }
        String reason = row.evidence.fewerReason();
        if (reason != null && run < requested) {
            return reason;
        }
        return run < requested ? "fewer than asked for, and not by a failure: a bug in the suite" : "more than asked for: a bug in the suite";
    }

    /**
     * Statistics and floors that several rows share: the same workloads, drawn by each of them.
     *
     * @param label how the report names them
     * @param rows the rows that drew them
     * @param statistics what they counted of what the generator drew
     * @param observed what they counted of what the runs showed (timing decides these too)
     * @param floors their coverage floors
     */
    private record Shared(String label, List<Row> rows, Map<String, Long> statistics, Map<String, Long> observed,
                          List<Evidence.Floor> floors) {}

    /**
     * The rows' shared workloads, each printed once: rows that name the same workloads and counted
     * the same share them; a row that counted otherwise (it stopped at a failure, say) gets its own.
     */
    private static List<Shared> shared(List<Row> rows) {
        Map<String, List<List<Row>>> byName = new LinkedHashMap<>();
        for (Row row : rows) {
            String name = row.evidence.workloadsName();
            if (name == null) {
                continue;
            }
            List<List<Row>> groups = byName.computeIfAbsent(name, k -> new ArrayList<>());
            groups.stream().filter(g -> sameCounts(g.getFirst(), row)).findFirst()
                    .ifPresentOrElse(g -> g.add(row), () -> groups.add(new ArrayList<>(List.of(row))));
        }
        List<Shared> shared = new ArrayList<>();
        byName.forEach((name, groups) -> {
            for (int i = 0; i < groups.size(); i++) {
                Evidence e = groups.get(i).getFirst().evidence;
                shared.add(new Shared(groups.size() == 1 ? name : name + ", variant " + (i + 1), List.copyOf(groups.get(i)),
                        e.statisticsCollected(), e.observedCollected(), e.floorsRecorded()));
            }
        });
        return shared;
    }

    private static boolean sameCounts(Row a, Row b) {
        return a.evidence.statisticsCollected().equals(b.evidence.statisticsCollected())
                && a.evidence.observedCollected().equals(b.evidence.observedCollected())
                && a.evidence.floorsRecorded().equals(b.evidence.floorsRecorded());
    }

    private static String id(Row row) {
        return row.suite + "#" + row.test;
    }

    /** Where the report went, for the one line the build prints. */
    private record Written(String file, int rows, boolean complete, int notRun, int expected) {
        String line() {
            return "property report: " + file + " (" + rows + (rows == 1 ? " row, " : " rows, ")
                    + (complete ? "complete)" : "partial: " + notRun + " of " + expected + " tests not run)");
        }
    }

    private static Written write(List<Row> rows) {
        Provenance origin = Provenance.now();
        int stressFactor = Integer.getInteger("stress.factor", 1);
        Set<String> expected = expectedTests();
        Set<String> ran = rows.stream().map(PropertyReport::id).collect(Collectors.toCollection(TreeSet::new));
        Set<String> missing = new TreeSet<>(expected);
        missing.removeAll(ran);
        Set<String> suites = rows.stream().map(r -> r.suite).collect(Collectors.toCollection(TreeSet::new));
        boolean complete = missing.isEmpty();
        String completeness = complete
                ? "complete: every test of every reporting suite ran (" + String.join(", ", suites) + ")"
                : "PARTIAL: " + ran.size() + " of " + expected.size() + " tests ran (suites: " + String.join(", ", suites)
                        + "); not run: " + String.join(", ", missing);
        List<Shared> shared = shared(rows);

        StringBuilder md = new StringBuilder();
        md.append("# Property-test report").append(complete ? "" : " (partial)").append("\n\n")
          .append("- commit: `").append(origin.commit()).append("`, ").append(origin.tree()).append('\n')
          .append("- date: ").append(origin.date()).append('\n')
          .append("- OS: ").append(origin.os()).append(", ").append(origin.cores()).append(" cores\n")
          .append("- JDK: ").append(origin.jdk()).append('\n')
          .append("- stress factor: ").append(stressFactor).append('\n')
          .append("- ").append(completeness).append("\n\n")
          .append("## Suites\n\nThe test classes that report here, and whether each ran whole.\n\n")
          .append("| suite | tests | ran | status |\n| --- | ---: | ---: | --- |\n");
        List<Map<String, Object>> suitesJson = new ArrayList<>();
        Map<String, Long> expectedBySuite = new TreeMap<>();
        expected.forEach(test -> expectedBySuite.merge(test.substring(0, test.indexOf('#')), 1L, Long::sum));
        suites.forEach(suite -> expectedBySuite.putIfAbsent(suite, 0L));
        expectedBySuite.forEach((suite, tests) -> {
            long of = rows.stream().filter(r -> r.suite.equals(suite)).count();
            String status = of == 0 ? "not run" : of >= tests ? "complete" : "partial";
            md.append("| ").append(suite).append(" | ").append(tests).append(" | ").append(of).append(" | ").append(status)
              .append(" |\n");
            suitesJson.add(Map.of("suite", suite, "tests", tests, "ran", of, "status", status));
        });
        md.append("\n## Results\n\nEach row is one test method: the property it checks, the clauses of `specs/` it cites, ")
          .append("the tries it asked for and ran (over all its invocations), the seed, the result, its time, and where ")
          .append("its statistics are (the pool's properties share theirs). The command after the table reruns each row ")
          .append("alone, with what reproduces it.\n\n")
          .append("| test | property | clauses | tries asked | tries run | seed | result | time | statistics |\n")
          .append("| --- | --- | --- | ---: | ---: | --- | --- | ---: | --- |\n");
        List<Map<String, @Nullable Object>> json = new ArrayList<>();
        for (Row row : rows) {
            Evidence e = row.evidence;
            String result = row.failed == 0 ? "passed" : "FAILED " + row.failed + " of " + row.invocations;
            String property = e.propertyText() == null ? row.test : e.propertyText();
            long requested = e.triesRequested();
            String sharedLabel = shared.stream().filter(s -> s.rows().contains(row)).map(Shared::label).findFirst()
                    .orElse(null);
            String statistics = sharedLabel != null ? "shared: " + sharedLabel
                    : e.statisticsCollected().isEmpty() && e.observedCollected().isEmpty() && e.floorsRecorded().isEmpty()
                    ? "—" : "its own, below";
            md.append("| ").append(id(row)).append(" | ").append(cell(property)).append(" | ")
              .append(String.join(", ", e.clauseIds())).append(" | ").append(requested == 0 ? "—" : requested)
              .append(" | ").append(e.triesRun()).append(" | ")
              .append(e.seedText() == null ? "—" : "`" + e.seedText() + "`").append(" | ")
              .append(result).append(" | ").append(seconds(row.nanos)).append(" | ").append(cell(statistics)).append(" |\n");
            Map<String, @Nullable Object> entry = new LinkedHashMap<>();
            entry.put("suite", row.suite);
            entry.put("test", row.test);
            entry.put("property", property);
            entry.put("clauses", e.clauseIds());
            entry.put("triesRequested", requested == 0 ? null : requested);
            entry.put("triesRun", e.triesRun());
            entry.put("whyTriesDiffer", whyTriesDiffer(row));
            entry.put("seed", e.seedText());
            entry.put("rerun", rerunCommand(row));
            entry.put("invocations", row.invocations);
            entry.put("failed", row.failed);
            entry.put("result", row.failed == 0 ? "passed" : "failed");
            entry.put("counterexamples", List.copyOf(row.failures));
            entry.put("seconds", row.nanos / 1e9);
            entry.put("workloads", sharedLabel);
            entry.put("statistics", sharedLabel == null ? e.statisticsCollected() : Map.of());
            entry.put("observed", sharedLabel == null ? e.observedCollected() : Map.of());
            entry.put("floors", sharedLabel == null ? floorsJson(e.floorsRecorded()) : List.of());
            json.add(entry);
        }
        md.append("\n## Reruns\n\nEach command reruns one row exactly: the same test method, seed and number of ")
          .append("tries (and shrinking steps, factors; a setting left out is the test's default), so a property ")
          .append("draws the same cases, with the same statistics of what it drew and the same floors; what the ")
          .append("threads' timing decides may differ. It writes `target/property-report-partial.md`.\n\n");
        for (Row row : rows) {
            md.append("- **").append(id(row)).append("**: `").append(rerunCommand(row)).append('`');
            String why = whyTriesDiffer(row);
            if (!why.isEmpty()) {
                md.append(" (tries: ").append(why).append(')');
            }
            md.append('\n');
        }
        List<Row> failedRows = rows.stream().filter(r -> r.failed > 0).toList();
        if (!failedRows.isEmpty()) {
            md.append("\n## Failures, with their shrunk counterexamples\n");
            for (Row row : failedRows) {
                md.append("\n**").append(id(row)).append("**\n\n");
                row.failures.forEach(f -> md.append("```\n").append(f).append("\n```\n"));
            }
        }
        List<Row> ownFloors = rows.stream().filter(r -> r.evidence.workloadsName() == null
                && !r.evidence.floorsRecorded().isEmpty()).toList();
        if (!ownFloors.isEmpty() || shared.stream().anyMatch(s -> !s.floors().isEmpty())) {
            md.append("\n## Coverage floors\n\nWhat a generator must produce for its properties to count: each cell ")
              .append("is how many runs had that combination, met or MISSED against its floor (a missed floor fails ")
              .append("the properties that check it).\n");
            shared.stream().filter(s -> !s.floors().isEmpty()).forEach(s -> floors(md, s.label(), s.floors()));
            ownFloors.forEach(r -> floors(md, id(r), r.evidence.floorsRecorded()));
        }
        md.append("\n## Statistics\n\nFirst what the generator drew, which a rerun with the same seed and tries draws ")
          .append("again; then, where a test tells them apart, what the runs showed, which the threads' timing decides ")
          .append("too, so a rerun may count it differently.\n");
        for (Shared s : shared) {
            md.append("\n### ").append(s.label()).append("\n\nShared by ").append(s.rows().size())
              .append(s.rows().size() == 1 ? " row" : " rows").append(", which drew the same workloads: ")
              .append(s.rows().stream().map(PropertyReport::id).collect(Collectors.joining(", "))).append(".\n");
            statistics(md, s.statistics(), s.observed());
        }
        for (Row row : rows) {
            Map<String, Long> stats = row.evidence.statisticsCollected();
            Map<String, Long> observed = row.evidence.observedCollected();
            if ((stats.isEmpty() && observed.isEmpty()) || row.evidence.workloadsName() != null) {
                continue;
            }
            md.append("\n### ").append(id(row)).append('\n');
            statistics(md, stats, observed);
        }
        Map<String, @Nullable Object> document = new LinkedHashMap<>();
        document.put("commit", origin.commit());
        document.put("tree", origin.tree());
        document.put("date", origin.date());
        document.put("os", origin.os());
        document.put("jdk", origin.jdk());
        document.put("cores", origin.cores());
        document.put("stressFactor", stressFactor);
        document.put("complete", complete);
        document.put("completeness", completeness);
        document.put("notRun", List.copyOf(missing));
        document.put("suites", suitesJson);
        document.put("rows", json);
        document.put("workloads", shared.stream().map(s -> Map.of("name", s.label(), "rows",
                s.rows().stream().map(PropertyReport::id).toList(), "statistics", s.statistics(), "observed", s.observed(),
                "floors", floorsJson(s.floors()))).toList());
        // A partial run (-Dtest=...) writes beside the complete report, never over it.
        String name = complete ? "property-report" : "property-report-partial";
        try {
            Files.createDirectories(OUTPUT);
            Files.writeString(OUTPUT.resolve(name + ".md"), md);
            Files.writeString(OUTPUT.resolve(name + ".json"), Json.write(document));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return new Written(OUTPUT.resolve(name + ".md").toString(), rows.size(), complete, missing.size(), expected.size());
    }

    /** One block of statistics: what was drawn, then, if any, what was observed. */
    private static void statistics(StringBuilder md, Map<String, Long> drawn, Map<String, Long> observed) {
        md.append('\n');
        drawn.forEach((name, n) -> md.append("- ").append(name).append(": ").append(n).append('\n'));
        if (!observed.isEmpty()) {
            md.append("\nObserved (timing decides these too):\n\n");
            observed.forEach((name, n) -> md.append("- ").append(name).append(": ").append(n).append('\n'));
        }
    }

    /** The floors of one set of workloads, a table per kind: rows and columns as the floors name them. */
    private static void floors(StringBuilder md, String owner, List<Evidence.Floor> floors) {
        long missed = floors.stream().filter(f -> !f.met()).count();
        md.append("\n### ").append(owner).append("\n\n").append(floors.size()).append(" floors: ")
          .append(floors.size() - missed).append(" met, ").append(missed).append(" missed.\n");
        Map<String, List<Evidence.Floor>> byTable = new LinkedHashMap<>();
        floors.forEach(f -> byTable.computeIfAbsent(f.table(), k -> new ArrayList<>()).add(f));
        byTable.forEach((table, cells) -> {
            List<String> columns = cells.stream().map(Evidence.Floor::column).distinct().toList();
            List<String> rowNames = cells.stream().map(Evidence.Floor::row).distinct().toList();
            Set<Long> needed = cells.stream().map(Evidence.Floor::needed).collect(Collectors.toSet());
            md.append("\n**").append(table).append("**")
              .append(needed.size() == 1 ? ": each at least " + runs(needed.iterator().next()) : "").append("\n\n")
              .append("| ").append(table).append(" | ").append(String.join(" | ", columns)).append(" |\n| ---")
              .append(" | ---:".repeat(columns.size())).append(" |\n");
            for (String rowName : rowNames) {
                md.append("| ").append(rowName);
                for (String column : columns) {
                    md.append(" | ").append(cells.stream().filter(f -> f.row().equals(rowName) && f.column().equals(column))
                            .findFirst().map(f -> f.ran() + (f.met() ? " met" : " MISSED")
                                    + (needed.size() == 1 && f.met() ? "" : " (needs " + f.needed() + ")")).orElse("—"));
                }
                md.append(" |\n");
            }
        });
    }

    private static String runs(long n) {
        return n + (n == 1 ? " run" : " runs");
    }

    private static List<Map<String, Object>> floorsJson(List<Evidence.Floor> floors) {
        return floors.stream().map(f -> Map.<String, Object>of("table", f.table(), "row", f.row(), "column", f.column(),
                "needed", f.needed(), "ran", f.ran(), "met", f.met())).toList();
    }

    private static String cell(String text) {
        return text.replace("|", "\\|").replace("\n", " ");
    }

    private static String seconds(long nanos) {
        return String.format("%.1f s", Duration.ofNanos(nanos).toMillis() / 1000.0);
    }
}
