package dev.drain.support;

import dev.drain.report.Json;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.extension.AfterTestExecutionCallback;
import org.junit.jupiter.api.extension.BeforeTestExecutionCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * Collects {@link Evidence} from the property, trace and stress suites and, when the test run
 * ends, writes {@code target/property-report.md} and {@code target/property-report.json}: the
 * file people cite. Use with {@code @ExtendWith(PropertyReport.class)} and an {@code Evidence}
 * parameter.
 */
public final class PropertyReport implements ParameterResolver, BeforeTestExecutionCallback,
        AfterTestExecutionCallback {

    /** Where the report goes; the build's output folder. */
    static final Path OUTPUT = Path.of("target");

    /** One row of the report: a test method, with every invocation's evidence merged. */
    private static final class Row {
        final String suite;
        final String test;
        final Evidence evidence = new Evidence();
        int invocations;
        int failed;
        long nanos;

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
            row.failed += context.getExecutionException().isPresent() ? 1 : 0;
            row.nanos += start == null ? 0 : System.nanoTime() - start;
        }
    }

    private static void write(List<Row> rows) {
        List<Map<String, @Nullable Object>> json = new ArrayList<>();
        StringBuilder md = new StringBuilder();
        md.append("# Property-test report\n\n")
          .append("Written by `./mvnw verify` from the property, trace and stress suites of this run. ")
          .append("Each row is one test method: the property it checks, the clauses of `specs/` it ")
          .append("cites, how many tries or scenarios it ran (over all its invocations), the seed ")
          .append("that reproduces it, the result, and the statistics it collected.\n\n")
          .append("JDK ").append(Runtime.version()).append(", ")
          .append(Runtime.getRuntime().availableProcessors()).append(" cores, stress factor ")
          .append(Integer.getInteger("stress.factor", 1)).append(".\n\n")
          .append("| suite | property | clauses | tries | seed | result | time |\n")
          .append("| --- | --- | --- | ---: | --- | --- | ---: |\n");
        for (Row row : rows) {
            Evidence e = row.evidence;
            String result = row.failed == 0 ? "passed" : "FAILED " + row.failed + " of " + row.invocations;
            String property = e.propertyText() == null ? row.test : e.propertyText();
            md.append("| ").append(row.suite).append(" | ").append(cell(property)).append(" | ")
              .append(String.join(", ", e.clauseIds())).append(" | ").append(e.triesRun()).append(" | ")
              .append(e.seedText() == null ? "" : "`" + e.seedText() + "`").append(" | ")
              .append(result).append(" | ").append(seconds(row.nanos)).append(" |\n");
            Map<String, @Nullable Object> entry = new LinkedHashMap<>();
            entry.put("suite", row.suite);
            entry.put("test", row.test);
            entry.put("property", property);
            entry.put("clauses", e.clauseIds());
            entry.put("tries", e.triesRun());
            entry.put("seed", e.seedText());
            entry.put("invocations", row.invocations);
            entry.put("failed", row.failed);
            entry.put("result", row.failed == 0 ? "passed" : "failed");
            entry.put("seconds", row.nanos / 1e9);
            entry.put("statistics", e.statisticsCollected());
            json.add(entry);
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
        document.put("jdk", Runtime.version().toString());
        document.put("cores", Runtime.getRuntime().availableProcessors());
        document.put("stressFactor", Integer.getInteger("stress.factor", 1));
        document.put("rows", json);
        try {
            Files.createDirectories(OUTPUT);
            Files.writeString(OUTPUT.resolve("property-report.md"), md);
            Files.writeString(OUTPUT.resolve("property-report.json"), Json.write(document));
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
