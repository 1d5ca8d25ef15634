package dev.drain.safe;

import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * Text built from values a library does not control: an item, a cause, an event's detail. Their
 * {@code toString} (and a throwable's {@code getMessage}) is user code and may throw anything, a
 * {@link StackOverflowError} from a cycle in a cause chain included; what it throws is replaced by
 * a description of the failure and never propagates. Text is for people: nothing a caller decides
 * (an item's fate, a run's outcome) should depend on whether it could be built (decision 0027).
 *
 * <p>A {@code toString} that never returns is not survivable here: the calling thread waits with
 * it. Build text only on a thread where that is an acceptable limit.
 */
public final class SafeText {
    private SafeText() {}

    /**
     * {@return {@code String.valueOf(value)}, or a note of what its {@code toString} threw, or that
     * it returned {@code null}}
     *
     * @param value any value, or {@code null}
     * @param <V> the value's type
     */
    public static <V> String of(@Nullable V value) {
        try {
            @Nullable String text = String.valueOf(value); // null if a toString breaks its contract
            return text != null ? text : "<a " + typeOf(value) + " whose toString() returned null>";
        } catch (Throwable e) { // anything, a StackOverflowError or an OutOfMemoryError too: this is only text
            return "<a " + typeOf(value) + " whose toString() threw " + e.getClass().getName() + ">";
        }
    }

    private static String typeOf(@Nullable Object value) {
        return value == null ? "null" : value.getClass().getName();
    }

    /**
     * {@return what {@code detail} builds, or a note of what building it threw, or that it built
     * {@code null}}
     *
     * @param detail builds the text; may throw anything
     */
    public static String built(Supplier<String> detail) {
        try {
            @Nullable String text = detail.get(); // null if the supplier breaks its contract
            return text != null ? text : "<the detail was built as null>";
        } catch (Throwable e) { // a detail is built from SafeText.of pieces; this is the net under them
            return "<the detail could not be built: " + e.getClass().getName() + ">";
        }
    }

    /**
     * {@return {@code text} if it has at most {@code max} characters; else its first {@code max - 1}
     * characters and an ellipsis, one fewer if the cut would split a surrogate pair}
     *
     * @param text the text
     * @param max the most characters to return, at least 2
     * @throws IllegalArgumentException if {@code max} is less than 2
     */
    public static String cut(String text, int max) {
        if (max < 2) {
            throw new IllegalArgumentException("max must be at least 2, was " + max);
        }
        if (text.length() <= max) {
            return text;
        }
        int end = max - 1;
        if (Character.isHighSurrogate(text.charAt(end - 1))) {
            end--; // never half a character
        }
        return text.substring(0, end) + "…";
    }
}
