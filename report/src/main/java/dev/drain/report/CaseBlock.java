package dev.drain.report;

import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import java.util.function.UnaryOperator;

/**
 * One case in the contract report's narrow layout: its name and what it shows, then its intakes
 * side by side under their verdicts, a row per measure (the wide table's columns), and the pool
 * and the outcome in full across both; every cell wrapped to its column, so that no line is wider
 * than the width asked for.
 */
final class CaseBlock {
    private CaseBlock() {}

    /** The label column: two spaces and the longest label, {@code metrics_raised}. */
    private static final int LABEL = 16;
    private static final int GAP = 2;

    /** {@return the block of case {@code name}: {@code intakes} are its rows, one per intake it ran on} */
    static List<String> render(String name, String shows, List<CaseResult> intakes, String pool, Style style,
                               int width) {
        List<String> lines = new ArrayList<>();
        List<String> title = Table.wrap(name + ": " + shows, width);
        lines.add(style.bold(title.getFirst()));
        Table.wrap(String.join(" ", title.subList(1, title.size())), width - 2).stream()
                .filter(line -> !line.isEmpty()).forEach(line -> lines.add("  " + style.bold(line)));
        int span = width - LABEL - GAP;
        int cell = (span - GAP * (intakes.size() - 1)) / intakes.size();
        StringBuilder header = new StringBuilder(" ".repeat(LABEL + GAP));
        for (int i = 0; i < intakes.size(); i++) {
            CaseResult r = intakes.get(i);
            String verdict = style.bold(r.intake()) + " " + (r.passed() ? style.pass("✓") : style.fail("✗"));
            header.append(i < intakes.size() - 1 ? Table.pad(verdict, cell + GAP) : verdict);
        }
        lines.add(header.toString());
        row(lines, "results", intakes, CaseResult::resultsWithOrder, cell, UnaryOperator.identity());
        row(lines, "attempts", intakes, CaseResult::attemptsText, cell, UnaryOperator.identity());
        row(lines, "max_lead", intakes, r -> r.maxLead() + "/" + r.leadBound() + ", lead_ok " + CaseResult.yesNo(r.leadOk()),
                cell, UnaryOperator.identity());
        row(lines, "outcome", intakes, CaseResult::outcome, cell, UnaryOperator.identity());
        row(lines, "ctx_ok", intakes, r -> CaseResult.yesNo(r.contextOk()), cell, UnaryOperator.identity());
        row(lines, "metrics_raised", intakes, r -> String.valueOf(r.metricsRaised()), cell, UnaryOperator.identity());
        row(lines, "task_delta", intakes, CaseResult::taskDeltaText, cell, UnaryOperator.identity());
        if (!intakes.stream().allMatch(CaseResult::passed)) {
            row(lines, "failed", intakes, r -> r.passed() ? "none" : String.join("; ", r.failedChecks()), cell,
                    style::fail);
        }
        List<String> details = intakes.stream().map(CaseResult::outcomeDetail).distinct().toList();
        if (details.size() == 1 && !details.getFirst().isEmpty()) {
            row(lines, "in full", List.of(details.getFirst()), Function.identity(), span, UnaryOperator.identity());
        } else if (details.size() > 1) {
            row(lines, "in full", intakes, r -> r.outcomeDetail().isEmpty() ? "-" : r.outcomeDetail(), cell,
                    UnaryOperator.identity());
        }
        if (!pool.isEmpty()) {
            row(lines, "pool", List.of(pool), Function.identity(), span, UnaryOperator.identity());
        }
        return lines;
    }

    /** One row: its label, then each column's cell wrapped to {@code width}, the columns side by side. */
    private static <C> void row(List<String> lines, String label, List<C> columns, Function<C, String> cell, int width,
                                UnaryOperator<String> colour) {
        List<List<String>> wrapped = columns.stream().map(c -> Table.wrap(cell.apply(c), width)).toList();
        int height = wrapped.stream().mapToInt(List::size).max().orElse(1);
        for (int i = 0; i < height; i++) {
            StringBuilder line = new StringBuilder(Table.pad(i == 0 ? "  " + label : "", LABEL + GAP));
            for (int c = 0; c < wrapped.size(); c++) {
                String part = i < wrapped.get(c).size() ? wrapped.get(c).get(i) : "";
                String shown = part.isEmpty() ? part : colour.apply(part);
                line.append(c < wrapped.size() - 1 ? Table.pad(shown, width + GAP) : shown);
            }
            lines.add(line.toString().stripTrailing());
        }
    }
}
