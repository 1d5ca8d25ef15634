package dev.drain.pool;

import java.util.function.Supplier;
import org.jspecify.annotations.Nullable;

/**
 * The one place where the pool builds text from values it does not control: an item, a cause, an
 * event's detail. Their {@code toString} (and a throwable's {@code getMessage}) is user code and
 * may throw anything, a {@link StackOverflowError} from a cycle in a cause chain included; what it
 * throws is replaced by a description of the failure, and never propagates. Text is for people:
 * nothing the pool decides (an item's fate, the run's outcome) may depend on whether it could be
 * built, or on who built it, so that attaching a metrics sink changes nothing but what is reported
 * (decision 0027).
 *
 * <p>A {@code toString} that never returns is not survivable here: the thread that asked waits
 * with it. So the pool asks only on threads where that is the documented limit of WP-18 (the
 * metrics reporter, a worker for a timeout's message, the consumer for an exception's message),
 * never on the watchdog, and never on the caller of {@code requestStop()} or {@code abort()}.
 */
final class Text {
    private Text() {}

    /** {@return {@code String.valueOf(value)}, or a note of what its {@code toString} threw} */
    static String of(@Nullable Object value) {
        try {
            return String.valueOf(value);
        } catch (Throwable e) { // anything, a StackOverflowError or an OutOfMemoryError too: this is only text
            String type = value == null ? "null" : value.getClass().getName();
            return "<a " + type + " whose toString() threw " + e.getClass().getName() + ">";
        }
    }

    /** {@return what {@code detail} builds, or a note of what building it threw} */
    static String built(Supplier<String> detail) {
        try {
            return detail.get();
        } catch (Throwable e) { // a detail is built from Text.of pieces; this is the net under them
            return "<the detail could not be built: " + e.getClass().getName() + ">";
        }
    }
}
