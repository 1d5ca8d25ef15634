package dev.drain.report;

import java.util.ArrayList;
import java.util.List;

/** A plain-text table whose columns are as wide as their widest cell, so nothing overflows. */
final class Table {
    private Table() {}

    /** {@return the rows as lines, each cell padded to its column's width; the last column is not padded} */
    static List<String> render(List<List<String>> rows) {
        int columns = rows.stream().mapToInt(List::size).max().orElse(0);
        int[] widths = new int[columns];
        for (List<String> row : rows) {
            for (int c = 0; c < row.size(); c++) {
                widths[c] = Math.max(widths[c], visibleLength(row.get(c)));
            }
        }
        List<String> lines = new ArrayList<>();
        for (List<String> row : rows) {
            StringBuilder line = new StringBuilder();
            for (int c = 0; c < row.size(); c++) {
                String cell = row.get(c);
                line.append(cell);
                if (c < row.size() - 1) {
                    line.append(" ".repeat(widths[c] - visibleLength(cell) + 2));
                }
            }
            lines.add(line.toString().stripTrailing());
        }
        return lines;
    }

    /** The cell's width on a terminal: without its colour codes. */
    private static int visibleLength(String cell) {
        return cell.replaceAll("\\u001b\\[[0-9;]*m", "").length();
    }
}
