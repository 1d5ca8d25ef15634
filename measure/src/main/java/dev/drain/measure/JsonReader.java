package dev.drain.measure;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * A small, strict JSON reader (RFC 8259) for what drain's tests and reports read: the JDK's JSON
 * thread dumps ({@link JvmThreads}), the trace corpora and the reports' own JSON. Objects become
 * {@code Map<String, Object>} (in file order), arrays {@code List<Object>}, numbers {@code Long}
 * (or {@code Double} if they have a fraction or exponent), and {@code null} becomes {@code null};
 * every map and list is unmodifiable. The documents are ours and the JDK's, and small; decision
 * 0051 says why this is not a library.
 */
public final class JsonReader {
    /** A number as RFC 8259 writes it. */
    private static final Pattern NUMBER = Pattern.compile("-?(0|[1-9][0-9]*)(\\.[0-9]+)?([eE][+-]?[0-9]+)?");

    private final String text;
    private int pos;

    private JsonReader(String text) {
        this.text = text;
    }

    /**
     * Parses a JSON document whose top level is an object, as every document drain reads is.
     *
     * @param text the whole document
     * @return its object, with its members in the document's order: maps, lists, strings, numbers,
     *     booleans and nulls as the class comment says
     * @throws IllegalArgumentException if {@code text} is not JSON, or its top level is not an object
     */
    public static Map<String, ?> parseObject(String text) {
        JsonReader reader = new JsonReader(text);
        reader.skipSpace();
        if (!reader.peek('{')) {
            throw reader.error("the top level is not an object");
        }
        Map<String, @Nullable Object> object = reader.object();
        reader.end();
        return object;
    }

    /** Parses one JSON value that makes up all of {@code text}. */
    static @Nullable Object parse(String text) {
        JsonReader reader = new JsonReader(text);
        Object value = reader.value();
        reader.end();
        return value;
    }

    /** Fails unless only white space is left. */
    private void end() {
        skipSpace();
        if (pos != text.length()) {
            throw error("trailing text");
        }
    }

    private @Nullable Object value() {
        skipSpace();
        if (pos >= text.length()) {
            throw error("unexpected end");
        }
        char c = text.charAt(pos);
        return switch (c) {
            case '{' -> object();
            case '[' -> array();
            case '"' -> string();
            case 't' -> literal("true", true);
            case 'f' -> literal("false", false);
            case 'n' -> literal("null", null);
            default -> number();
        };
    }

    private Map<String, @Nullable Object> object() {
        Map<String, @Nullable Object> map = new LinkedHashMap<>();
        pos++;
        skipSpace();
        if (peek('}')) {
            pos++;
            return Collections.unmodifiableMap(map);
        }
        while (true) {
            skipSpace();
            String key = string();
            skipSpace();
            expect(':');
            map.put(key, value());
            skipSpace();
            if (peek(',')) {
                pos++;
            } else {
                expect('}');
                return Collections.unmodifiableMap(map);
            }
        }
    }

    private List<@Nullable Object> array() {
        List<@Nullable Object> list = new ArrayList<>();
        pos++;
        skipSpace();
        if (peek(']')) {
            pos++;
            return Collections.unmodifiableList(list);
        }
        while (true) {
            list.add(value());
            skipSpace();
            if (peek(',')) {
                pos++;
            } else {
                expect(']');
                return Collections.unmodifiableList(list);
            }
        }
    }

    private String string() {
        expect('"');
        StringBuilder s = new StringBuilder();
        while (pos < text.length()) {
            char c = text.charAt(pos++);
            if (c == '"') {
                return s.toString();
            }
            if (c != '\\') {
                s.append(c);
                continue;
            }
            if (pos >= text.length()) {
                break;
            }
            char e = text.charAt(pos++);
            switch (e) {
                case '"', '\\', '/' -> s.append(e);
                case 'b' -> s.append('\b');
                case 'f' -> s.append('\f');
                case 'n' -> s.append('\n');
                case 'r' -> s.append('\r');
                case 't' -> s.append('\t');
                case 'u' -> {
                    if (pos + 4 > text.length()) {
                        throw error("short \\u escape");
                    }
                    s.append((char) Integer.parseInt(text.substring(pos, pos + 4), 16));
                    pos += 4;
                }
                default -> throw error("bad escape \\" + e);
            }
        }
        throw error("unterminated string");
    }

    private Object number() {
        int start = pos;
        while (pos < text.length() && "+-0123456789.eE".indexOf(text.charAt(pos)) >= 0) {
            pos++;
        }
        String digits = text.substring(start, pos);
        if (digits.isEmpty()) {
            throw error("unexpected character '" + text.charAt(start) + "'");
        }
        if (!NUMBER.matcher(digits).matches()) {
            throw error("bad number " + digits); // RFC 8259's grammar: no "+1", "01", "1." or ".5"
        }
        try {
            if (digits.matches("-?\\d+")) {
                return Long.valueOf(digits);
            }
            return Double.valueOf(digits);
        } catch (NumberFormatException e) {
            throw error("bad number " + digits);
        }
    }

    private @Nullable Object literal(String word, @Nullable Object value) {
        if (!text.startsWith(word, pos)) {
            throw error("expected " + word);
        }
        pos += word.length();
        return value;
    }

    private void skipSpace() {
        while (pos < text.length() && " \t\r\n".indexOf(text.charAt(pos)) >= 0) {
            pos++;
        }
    }

    private boolean peek(char c) {
        return pos < text.length() && text.charAt(pos) == c;
    }

    private void expect(char c) {
        if (!peek(c)) {
            throw error("expected '" + c + "'");
        }
        pos++;
    }

    private IllegalArgumentException error(String what) {
        return new IllegalArgumentException("JSON: " + what + " at offset " + pos);
    }
}
