package dev.drain.support;

import dev.drain.report.Json;
import dev.drain.report.Provenance;
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
 * or partial, and for each test: the property, its clauses, the tries asked for and run and why
 * they differ, the seed, the command that reruns it alone, the result with the shrunk
 * counterexample of a failure, and the statistics it collected.
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

        @Override
        public synchronized void close() {
            if (!rows.isEmpty()) {
                write(List.copyOf(rows.values()));
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

    /** {@return the command that reruns {@code row} alone, with what reproduces it} */
    private static String rerunCommand(Row row) {
        String properties = row.evidence.rerunProperties().entrySet().stream()
                .map(e -> " -D" + e.getKey() + "=" + e.getValue()).collect(Collectors.joining());
        return "./mvnw -q test -Dtest='" + row.suite + "#" + row.test + "'" + properties;
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

    private static void write(List<Row> rows) {
        Provenance origin = Provenance.now();
        int stressFactor = Integer.getInteger("stress.factor", 1);
        Set<String> expected = expectedTests();
        Set<String> ran = rows.stream().map(r -> r.suite + "#" + r.test).collect(Collectors.toCollection(TreeSet::new));
        Set<String> missing = new TreeSet<>(expected);
        missing.removeAll(ran);
        Set<String> suites = rows.stream().map(r -> r.suite).collect(Collectors.toCollection(TreeSet::new));
        boolean complete = missing.isEmpty();
        String completeness = complete
                ? "complete: every test of every reporting suite ran (" + String.join(", ", suites) + ")"
                : "PARTIAL: " + ran.size() + " of " + expected.size() + " tests ran (suites: " + String.join(", ", suites)
                        + "); not run: " + String.join(", ", missing);

        StringBuilder md = new StringBuilder();
        md.append("# Property-test report").append(complete ? "" : " (partial)").append("\n\n")
          .append("- commit: `").append(origin.commit()).append("`, ").append(origin.tree()).append('\n')
          .append("- date: ").append(origin.date()).append('\n')
          .append("- OS: ").append(origin.os()).append(", ").append(origin.cores()).append(" cores\n")
          .append("- JDK: ").append(origin.jdk()).append('\n')
          .append("- stress factor: ").append(stressFactor).append('\n')
          .append("- ").append(completeness).append("\n\n")
          .append("Each row is one test method: the property it checks, the clauses of `specs/` it cites, the ")
          .append("tries it asked for and ran (over all its invocations), the seed, the result, and its time. ")
          .append("The command after the table reruns each row alone, with what reproduces it.\n\n")
          .append("| suite | property | clauses | tries asked | tries run | seed | result | time |\n")
          .append("| --- | --- | --- | ---: | ---: | --- | --- | ---: |\n");
        List<Map<String, @Nullable Object>> json = new ArrayList<>();
        for (Row row : rows) {
            Evidence e = row.evidence;
            String result = row.failed == 0 ? "passed" : "FAILED " + row.failed + " of " + row.invocations;
            String property = e.propertyText() == null ? row.test : e.propertyText();
            long requested = e.triesRequested();
            md.append("| ").append(row.suite).append(" | ").append(cell(property)).append(" | ")
              .append(String.join(", ", e.clauseIds())).append(" | ").append(requested == 0 ? "—" : requested)
              .append(" | ").append(e.triesRun()).append(" | ")
              .append(e.seedText() == null ? "—" : "`" + e.seedText() + "`").append(" | ")
              .append(result).append(" | ").append(seconds(row.nanos)).append(" |\n");
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
            entry.put("statistics", e.statisticsCollected());
            json.add(entry);
        }
        md.append("\n## Reruns\n\n");
        for (Row row : rows) {
            md.append("- **").append(row.suite).append(" · ").append(row.test).append("**: `").append(rerunCommand(row))
              .append('`');
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
                md.append("\n**").append(row.suite).append(" · ").append(row.test).append("**\n\n");
                row.failures.forEach(f -> md.append("```\n").append(f).append("\n```\n"));
            }
        }
        md.append("\n## Statistics\n");
        for (Row row : rows) {
            Map<String, Long> stats = row.evidence.statisticsCollected();
            if (stats.isEmpty()) {
                continue;
            }
            md.append("\n**").append(row.suite).append(" · ").append(row.test).append("**\n\n");
            stats.forEach((name, n) -> md.append("- ").append(name).append(": ").append(n).append('\n'));
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
        document.put("rows", json);
        // A partial run (-Dtest=...) writes beside the complete report, never over it.
        String name = complete ? "property-report" : "property-report-partial";
        try {
            Files.createDirectories(OUTPUT);
            Files.writeString(OUTPUT.resolve(name + ".md"), md);
            Files.writeString(OUTPUT.resolve(name + ".json"), Json.write(document));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static String cell(String text) {
        return text.replace("|", "\\|").replace("\n", " ");
    }

    private static String seconds(long nanos) {
        return String.format("%.1f s", Duration.ofNanos(nanos).toMillis() / 1000.0);
    }
}
