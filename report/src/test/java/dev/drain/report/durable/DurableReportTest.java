package dev.drain.report.durable;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The contract report's durable cases (specs/contract-report.md, "The durable cases"), run once as
 * {@code ./contract-report} runs them, on the embedded PostgreSQL: JT-8 after an abort and after a
 * failure, JT-9 after a kill -9 of a child JVM, JT-10 after SIGTERM to a child JVM serving the
 * table with a deadline, each checked against the witnesses.
 */
class DurableReportTest {
    private static int status;
    private static String out = "";
    private static String err = "";

    @BeforeAll
    static void runTheDurableCases() {
        ByteArrayOutputStream outBytes = new ByteArrayOutputStream();
        ByteArrayOutputStream errBytes = new ByteArrayOutputStream();
        String classPath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path", ""));
        try (PrintStream o = new PrintStream(outBytes, true, StandardCharsets.UTF_8);
                PrintStream e = new PrintStream(errBytes, true, StandardCharsets.UTF_8)) {
            status = DurableReport.run(new String[0], o, e, classPath);
        }
        out = outBytes.toString(StandardCharsets.UTF_8);
        err = errBytes.toString(StandardCharsets.UTF_8);
    }

    /** JT-8, JT-9: every durable case holds, every check of it marked ✓, and the status says so. */
    @Test
    void everyDurableCaseHolds() {
        assertThat(out).as("the report (its errors: %s)", err).doesNotContain("✗")
                .contains("✓ " + DurableReport.caseNames().size() + " of " + DurableReport.caseNames().size());
        for (String name : DurableReport.caseNames()) {
            assertThat(out).contains("✓ " + name + "  (");
        }
        assertThat(status).isZero();
    }

    /** The durable cases' output fits in 100 columns, as the pool's report does by default. */
    @Test
    void theOutputFitsInAHundredColumns() {
        assertThat(out.lines().toList()).isNotEmpty()
                .allSatisfy(line -> assertThat(line.codePointCount(0, line.length())).as(line).isLessThanOrEqualTo(100));
    }

    /** The JSON names every case with every check, and whether it held. */
    @Test
    void theJsonHoldsEveryCaseAndCheck() throws IOException {
        String json = Files.readString(Path.of("target", "contract-report-durable.json"));
        for (String name : DurableReport.caseNames()) {
            assertThat(json).contains("{\"case\": \"" + name + "\"");
        }
        assertThat(json).contains("\"passed\": true").doesNotContain("\"passed\": false").doesNotContain("\"holds\": false");
    }

    /** The launcher knows the durable cases by the names the report gives them. */
    @Test
    void theLauncherNamesTheSameCases() throws IOException {
        String launcher = Files.readString(Path.of("contract-report"));
        Matcher names = Pattern.compile("durable_cases=\" ([a-z -]+) \"").matcher(launcher);
        assertThat(names.find()).as("durable_cases= in contract-report").isTrue();
        List<String> inTheLauncher = Arrays.asList(names.group(1).split(" "));
        assertThat(inTheLauncher).isEqualTo(DurableReport.caseNames());
    }

    /** A bad option is refused with status 2, before any database is started. */
    @Test
    void aBadOptionIsRefused() {
        ByteArrayOutputStream errBytes = new ByteArrayOutputStream();
        try (PrintStream o = new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8);
                PrintStream e = new PrintStream(errBytes, true, StandardCharsets.UTF_8)) {
            assertThat(DurableReport.run(new String[] {"--case", "nonesuch"}, o, e, "")).isEqualTo(2);
        }
        assertThat(errBytes.toString(StandardCharsets.UTF_8)).contains("no durable case 'nonesuch'").contains("usage:");
    }
}
