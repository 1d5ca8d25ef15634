package dev.drain.measure;

import java.util.Iterator;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * Writes a JSON document, indented by two spaces per level: the contract report's
 * {@code target/contract-report.json}, the property report's {@code target/property-report.json}
 * and the mutation report's {@code target/mutation-report.json}.
 * Values may be maps (keys written with {@code String.valueOf}), lists, strings, numbers,
 * booleans and {@code null}; anything else is written as its {@code toString()} in quotes.
 */
public final class Json {
    private Json() {}

    /**
     * Writes a document.
     *
     * @param document the top-level object
     * @return {@code document} as JSON, with a final newline
     */
    public static String write(Map<String, ?> document) {
        StringBuilder out = new StringBuilder();
        write(out, document, "");
        return out.append('\n').toString();
    }

    /**
     * Quotes a string as {@link #write} writes it: {@code "}, {@code \} and the control characters
     * escaped, everything else as it is.
     *
     * @param text the string
     * @return {@code text} as a JSON string, quotes included
     */
    public static String quote(String text) {
        StringBuilder out = new StringBuilder(text.length() + 2);
        quote(out, text);
        return out.toString();
    }

    private static void write(StringBuilder out, @Nullable Object value, String indent) {
        switch (value) {
            case null -> out.append("null");
            case String s -> quote(out, s);
            case Number n -> out.append(n);
            case Boolean b -> out.append(b);
            case Map<?, ?> map -> {
                if (map.isEmpty()) {
                    out.append("{}");
                    return;
                }
                out.append("{\n");
                Iterator<? extends Map.Entry<?, ?>> entries = map.entrySet().iterator();
                while (entries.hasNext()) {
                    Map.Entry<?, ?> e = entries.next();
                    out.append(indent).append("  ");
                    quote(out, String.valueOf(e.getKey()));
                    out.append(": ");
                    write(out, e.getValue(), indent + "  ");
                    out.append(entries.hasNext() ? ",\n" : "\n");
                }
                out.append(indent).append('}');
            }
            case List<?> list -> {
                if (list.isEmpty()) {
                    out.append("[]");
                    return;
                }
                out.append("[\n");
                for (int i = 0; i < list.size(); i++) {
                    out.append(indent).append("  ");
                    write(out, list.get(i), indent + "  ");
                    out.append(i + 1 < list.size() ? ",\n" : "\n");
                }
                out.append(indent).append(']');
            }
            default -> quote(out, value.toString());
        }
    }

    private static void quote(StringBuilder out, String s) {
        out.append('"');
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                case '\t' -> out.append("\\t");
                default -> {
                    if (c < 0x20) {
                        out.append(String.format("\\u%04x", (int) c));
                    } else {
                        out.append(c);
                    }
                }
            }
        }
        out.append('"');
    }
}
