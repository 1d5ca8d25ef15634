package dev.drain.report;

import org.jspecify.annotations.Nullable;

/**
 * The report's JSON reader, for tests in other packages (the trace corpora): {@link JsonReader}
 * is package-private, because it returns bare {@code Object}s, which no public signature of the
 * library may (WP-11); test code is not the library.
 */
public final class TestJson {
    private TestJson() {}

    /** {@return the value {@code text} holds: maps, lists, strings, numbers, booleans, nulls} */
    public static @Nullable Object parse(String text) {
        return JsonReader.parse(text);
    }
}
