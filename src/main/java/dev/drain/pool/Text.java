package dev.drain.pool;

import org.jspecify.annotations.Nullable;

/**
 * Text for messages and events from values the pool does not control: an item, a cause. Their
 * {@code toString} is user code and may throw; what it throws must not break the pool, so it is
 * replaced by a description of the failure. A {@link VirtualMachineError} is not replaced: it
 * propagates, and the pool thread that hit it ends the run ({@code Lifecycle.crashed}).
 */
final class Text {
    private Text() {}

    /** {@return {@code String.valueOf(value)}, or a note of what its {@code toString} threw} */
    static String of(@Nullable Object value) {
        try {
            return String.valueOf(value);
        } catch (VirtualMachineError e) {
            throw e;
        } catch (Throwable e) {
            String type = value == null ? "null" : value.getClass().getName();
            return "<a " + type + " whose toString() threw " + e.getClass().getName() + ">";
        }
    }
}
