package dev.drain.report;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.drain.measure.JsonReader;
import dev.drain.measure.Provenance;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.IntStream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The contract report, the project's main job (specs/contract-report.md): every case on both
 * intakes holds, every point of the contract is marked, the report says what it ran and where it
 * came from, and it fits in 100 columns unless asked for its wide table. Runs every case once, as
 * {@code ./contract-report} does, and lays the same results out in each layout.
 */
class ContractReportTest {
    private static int status;
    private static ContractReport.Report report = new ContractReport.Report(Provenance.now(), List.of(), List.of());
    private static List<String> lines = List.of();
    private static List<String> wideLines = List.of();
    private static Map<?, ?> json = Map.of();

    @BeforeAll
    static void runTheReport() throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ContractReport.Options options = ContractReport.parse(new String[0]);
        report = ContractReport.execute(options, new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8));
        status = ContractReport.present(report, options, new PrintStream(out, true, StandardCharsets.UTF_8));
        lines = out.toString(StandardCharsets.UTF_8).lines().toList();
        wideLines = layout(report, "--wide");
        json = JsonReader.parseObject(Files.readString(Path.of("target", "contract-report.json")));
    }

    /** The report's lines for {@code found}, laid out as the command line {@code args} asks. */
    private static List<String> layout(ContractReport.Report found, String... args) {
        return ContractReport.lines(found, ContractReport.parse(args), Style.PLAIN);
    }

    /** The objects of one of the report's JSON arrays. */
    private static List<Map<?, ?>> rows(String key) {
        return ((List<?>) java.util.Objects.requireNonNull(json.get(key), key)).stream().<Map<?, ?>>map(r -> (Map<?, ?>) r).toList();
    }

    /** WP-1 … WP-11: every case holds on both intakes, and the report exits 0 with every point marked as holding. */
    @Test
    void everyCaseAndEveryPointHolds() {
        assertThat(status).as("exit status; the report:%n%s", String.join("\n", lines)).isZero();
        assertThat(rows("points")).hasSize(11).allSatisfy(point -> assertThat(point.get("verdict")).isEqualTo("holds"));
        assertThat(rows("cases")).hasSize(Cases.ALL.size() * 2)
                .allSatisfy(c -> assertThat(c.get("passed")).isEqualTo(true));
    }

    /** WP-10: the report's task_delta counts every thread of the JVM; the leaky-handler case shows its leak as 1, expected. */
    @Test
    void taskDeltaSeesTheLeakOfTheLeakyCase() {
        for (Map<?, ?> row : rows("cases")) {
            long expected = "leaky-handler".equals(row.get("case")) ? 1 : 0;
            assertThat(row.get("task_delta")).as("task_delta of %s", row.get("case")).isEqualTo(expected);
            assertThat(row.get("expected_task_delta")).isEqualTo(expected);
        }
        assertThat(wideLines).anySatisfy(line -> assertThat(line).startsWith("leaky-handler").contains("1 (expected)"));
        assertThat(block("leaky-handler")).anySatisfy(line -> assertThat(line)
                .matches(" +task_delta +1 \\(expected\\) +1 \\(expected\\)"));
    }

    /** The report names its commit, and each case its pool's settings, its result values, its attempts per item and lead_ok. */
    @Test
    void theReportSaysWhatItRanAndWhereItCameFrom() {
        assertThat(json.get("commit")).asString().matches("[0-9a-f]{40}|unknown.*");
        assertThat(lines.get(1)).startsWith("commit ");
        for (Map<?, ?> row : rows("cases")) {
            assertThat(row.get("settings")).asString().contains("workers=", "queueSize=", "itemTimeout=", "retries=");
            assertThat(row.keySet().stream().map(String::valueOf).toList()).contains("results", "attempts", "lead_ok");
        }
        Map<?, ?> happy = rows("cases").getFirst();
        assertThat(happy.get("results")).isEqualTo(List.of(5L, 4L, 3L, 2L, 1L, 0L));
    }

    /** WP-4: escalation is proved only by the case whose handlers swallow interrupts, which reaches round 3 and "stuck". */
    @Test
    void escalationIsProvedByTheStubbornCaseAlone() {
        Map<?, ?> wp4 = rows("points").stream().filter(p -> "WP-4".equals(p.get("point"))).findFirst().orElseThrow();
        assertThat(wp4.get("proved_by")).isEqualTo("stubborn");
        assertThat(wideLines).anySatisfy(line -> assertThat(line).contains("stubborn:", "round 2", "round 3",
                "stuck after round 3"));
        assertThat(String.join(" ", block("stubborn")).replaceAll(" +", " ")).contains("round 2", "round 3",
                "stuck after round 3");
    }

    /** The wide table's columns line up: every row puts each column where the header puts it. */
    @Test
    void theColumnsLineUp() {
        int header = wideLines.indexOf(wideLines.stream().filter(l -> l.startsWith("case ")).findFirst().orElseThrow());
        List<String> table = wideLines.subList(header, header + 1 + Cases.ALL.size() * 2);
        String top = table.getFirst();
        for (String column : List.of("intake", "results", "attempts", "max_lead", "lead_ok", "outcome", "ctx_ok",
                "metrics_raised", "task_delta")) {
            int at = top.indexOf(column);
            assertThat(table).as("column %s", column).allSatisfy(row -> {
                assertThat(row.length()).isGreaterThan(at);
                assertThat(row.charAt(at - 1)).isEqualTo(' ');
                assertThat(row.charAt(at)).isNotEqualTo(' ');
            });
        }
    }

    /**
     * By default no line of the report is wider than 100 columns (counted in code points), for
     * every case on both intakes and on each alone, and for a case that fails with long texts.
     */
    @Test
    void theDefaultLayoutFitsInAHundredColumns() {
        List<ContractReport.Report> layouts = new ArrayList<>(List.of(report, withAFailure()));
        for (Cases.Case c : Cases.ALL) {
            for (String intake : List.of("queue", "sentinel", "")) {
                layouts.add(new ContractReport.Report(report.provenance(), report.results().stream()
                        .filter(r -> r.name().equals(c.name()) && r.intake().startsWith(intake)).toList(), List.of()));
            }
        }
        for (ContractReport.Report found : layouts) {
            assertThat(layout(found)).as("the report of %s", found.results().stream().map(r -> r.name() + "/" + r.intake())
                    .toList()).allSatisfy(line -> assertThat(line.codePointCount(0, line.length()))
                    .as("columns of: %s", line).isLessThanOrEqualTo(100));
        }
        assertThat(lines).isEqualTo(layout(report));
    }

    /** By default the report shows, for every case, its verdict on each intake, and every point with the cases that prove it. */
    @Test
    void theDefaultLayoutShowsEveryVerdictAndEveryPoint() {
        for (Cases.Case c : Cases.ALL) {
            assertThat(block(c.name())).as("the block of %s", c.name()).element(1).asString()
                    .matches(" +queue ✓ +sentinel ✓");
        }
        assertThat(lines).filteredOn(line -> line.matches("  WP-\\d+ .*")).hasSize(11)
                .allSatisfy(line -> assertThat(line).matches("  WP-\\d+ +\\S.*  ✓  \\S.*"));
        assertThat(lines).anySatisfy(line -> assertThat(line).startsWith("  WP-4 ").endsWith("✓  stubborn"));
        List<String> failing = layout(withAFailure());
        assertThat(failing).anySatisfy(line -> assertThat(line).matches(" +queue ✗ +sentinel ✓"))
                .anySatisfy(line -> assertThat(line).startsWith("  WP-2 ").contains("✗"))
                .anySatisfy(line -> assertThat(line.strip()).startsWith("FAILS in abort/queue"));
    }

    /** {@code --wide} keeps the wide table, a row per case and intake, and a terminal wide enough for it gets it by itself. */
    @Test
    void theWideTableIsThereWhenAskedForOrWhenItFits() {
        assertThat(wideLines).anySatisfy(line -> assertThat(line.split(" {2,}")).containsExactly("case", "intake", "results",
                "attempts", "max_lead", "lead_ok", "outcome", "ctx_ok", "metrics_raised", "task_delta"));
        for (CaseResult r : report.results()) {
            assertThat(wideLines).as("the row of %s on %s", r.name(), r.intake()).anySatisfy(line ->
                    assertThat(line).matches(r.name() + " +" + r.intake() + " .*  ✓"));
        }
        int tableWidth = wideLines.stream().filter(l -> l.startsWith("case ") || l.startsWith("leaky-handler "))
                .mapToInt(l -> l.codePointCount(0, l.length())).max().orElseThrow();
        assertThat(tableWidth).isGreaterThan(100);
        assertThat(layout(report, "--width", String.valueOf(tableWidth))).isEqualTo(wideLines);
        assertThat(layout(report, "--width", String.valueOf(tableWidth - 1))).isEqualTo(lines);
        assertThatThrownBy(() -> ContractReport.parse(new String[] {"--width", "wide"}))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("--width");
    }

    /** The default layout's block of case {@code name}: from its title line to the blank line after it. */
    private static List<String> block(String name) {
        int start = lines.indexOf(lines.stream().filter(l -> l.startsWith(name + ": ")).findFirst().orElseThrow());
        int end = start;
        while (end < lines.size() && !lines.get(end).isEmpty()) {
            end++;
        }
        return lines.subList(start, end);
    }

    /** The report with abort on the queue failing, every text of it long, and the API scan failing too. */
    private static ContractReport.Report withAFailure() {
        String longText = "a very long explanation of what went wrong ".repeat(8) + "https-like-token-without-spaces-"
                .repeat(6);
        List<CaseResult> results = report.results().stream().map(r -> !(r.name().equals("abort") && r.intake().equals("queue")) ? r
                : new CaseResult(r.name(), r.intake(), r.settings() + ", " + longText, IntStream.range(0, 80).map(i -> i * 2)
                        .boxed().toList(), "WRONG", Map.of(1, 3, 2, 3), 9, 6, "the case failed", longText, false, 2, 3, 0,
                        List.of(longText, "the lead stays within queueSize + workers + 1"), 1)).toList();
        return new ContractReport.Report(report.provenance(), results, List.of(longText, longText));
    }
}
