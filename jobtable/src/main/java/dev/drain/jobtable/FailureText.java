package dev.drain.jobtable;

import dev.drain.pool.ItemFailure;

/**
 * The module's one form of a failure's text for a dead letter (JT-5): safe whatever the cause's
 * {@code toString} does, holding no NUL, and at most {@link JobTable#MAX_ERROR} characters, never
 * half a character. The Kafka source has a copy of its own (without the NUL rule); a later change
 * gives the policy one home in the core, and this class goes.
 */
final class FailureText {
    private FailureText() {}

    /** A failure's text for a dead letter: never throws, at most {@link JobTable#MAX_ERROR} characters. */
    static String describe(ItemFailure<?> failure) {
        String text;
        try {
            text = failure.cause().toString();
        } catch (Throwable e) { // a cause's toString or getMessage is the user's code, and may throw anything
            text = failure.cause().getClass().getName() + " (whose toString() threw " + e.getClass().getName() + ")";
        }
        text = ("after " + failure.attempts() + " attempts: " + text).replace('\u0000', '\ufffd'); // Postgres text holds no NUL
        if (text.length() <= JobTable.MAX_ERROR) {
            return text;
        }
        int end = JobTable.MAX_ERROR - 1;
        if (Character.isHighSurrogate(text.charAt(end - 1))) {
            end--; // never half a character
        }
        return text.substring(0, end) + "…";
    }
}
