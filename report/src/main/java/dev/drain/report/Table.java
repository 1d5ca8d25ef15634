package dev.drain.report;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

/**
 * Plain text for a terminal: a table whose columns are as wide as their widest cell, so nothing
 * overflows, and text wrapped to a width. Widths are counted as a terminal counts them: in code
 * points, without colour codes.
 */
final class Table {
    private Table() {}

    private static final Pattern COLOUR = Pattern.compile("\u001b\\[[0-9;]*m");
    private static final Pattern SPACES = Pattern.compile(" +");

    /** {@return the rows as lines, each cell padded to its column's width; the last column is not padded} */
    static List<String> render(List<List<String>> rows) {
        int columns = rows.stream().mapToInt(List::size).max().orElse(0);
        int[] widths = new int[columns];
        for (List<String> row : rows) {
            for (int c = 0; c < row.size(); c++) {
                widths[c] = Math.max(widths[c], width(row.get(c)));
            }
        }
        List<String> lines = new ArrayList<>();
        for (List<String> row : rows) {
            StringBuilder line = new StringBuilder();
            for (int c = 0; c < row.size(); c++) {
                String cell = row.get(c);
                line.append(c < row.size() - 1 ? pad(cell, widths[c] + 2) : cell);
            }
            lines.add(line.toString().stripTrailing());
        }
        return lines;
    }

    /** {@return the columns {@code text} takes on a terminal: its code points, without its colour codes} */
    static int width(String text) {
        String plain = COLOUR.matcher(text).replaceAll("");
        return plain.codePointCount(0, plain.length());
    }

    /** {@return {@code text} followed by spaces up to {@code width} columns} */
    static String pad(String text, int width) {
        return text + " ".repeat(Math.max(0, width - width(text)));
    }

    /**
     * {@return {@code text} (without colour codes) in lines of at most {@code width} columns,
     * broken at spaces; a word longer than a line is cut} Never empty: no text is one empty line.
     */
    static List<String> wrap(String text, int width) {
        List<String> lines = new ArrayList<>();
        StringBuilder line = new StringBuilder();
        for (String word : SPACES.split(text.strip(), -1)) {
            while (width(word) > width) {
                if (!line.isEmpty()) {
                    lines.add(line.toString());
                    line.setLength(0);
                }
                int cut = word.offsetByCodePoints(0, width);
                lines.add(word.substring(0, cut));
                word = word.substring(cut);
            }
            if (!line.isEmpty() && width(line.toString()) + 1 + width(word) > width) {
                lines.add(line.toString());
                line.setLength(0);
            }
            if (!line.isEmpty() && !word.isEmpty()) {
                line.append(' ');
            }
            line.append(word);
        }
        if (!line.isEmpty() || lines.isEmpty()) {
            lines.add(line.toString());
        }
        return lines;
    }
}
