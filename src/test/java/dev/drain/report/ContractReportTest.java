package dev.drain.report;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The contract report, the project's main job (specs/contract-report.md): every case on both
 * intakes holds, every point of the contract is marked, and the report says what it ran and where
 * it came from. Runs the whole report once, as {@code ./contract-report} does.
 */
class ContractReportTest {
    private static int status;
    private static List<String> lines = List.of();
    private static Map<?, ?> json = Map.of();

    @BeforeAll
    static void runTheReport() throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        status = ContractReport.run(new String[0], new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
        lines = out.toString(StandardCharsets.UTF_8).lines().toList();
        json = (Map<?, ?>) java.util.Objects.requireNonNull(
                JsonReader.parse(Files.readString(Path.of("target", "contract-report.json"))));
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
        assertThat(lines).anySatisfy(line -> assertThat(line).startsWith("leaky-handler").contains("1 (expected)"));
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
        assertThat(lines).anySatisfy(line -> assertThat(line).contains("stubborn:", "round 2", "round 3",
                "stuck after round 3"));
    }

    /** The case table's columns line up: every row puts each column where the header puts it. */
    @Test
    void theColumnsLineUp() {
        int header = lines.indexOf(lines.stream().filter(l -> l.startsWith("case ")).findFirst().orElseThrow());
        List<String> table = lines.subList(header, header + 1 + Cases.ALL.size() * 2);
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
}
