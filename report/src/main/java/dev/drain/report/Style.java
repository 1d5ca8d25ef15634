package dev.drain.report;

import java.io.Console;
import java.io.PrintStream;
import java.util.Optional;

/**
 * Colour and progress for the contract report, only on a terminal (and never with
 * {@code NO_COLOR} set); {@link #PLAIN} everywhere else.
 *
 * @param terminal whether the report prints to a terminal that takes colour codes
 */
record Style(boolean terminal) {
    /** No colour, no progress: for a file, a pipe, a test. */
    static final Style PLAIN = new Style(false);

    /** {@return the style of this process's output} */
    static Style detect() {
        // JDK 22+: System.console() is there even without a terminal; isTerminal() tells.
        boolean terminal = Optional.ofNullable(System.console()).map(Console::isTerminal).orElse(false);
        return new Style(terminal && System.getenv("NO_COLOR") == null);
    }

    String bold(String s) {
        return terminal ? "\u001b[1m" + s + "\u001b[0m" : s;
    }

    String pass(String s) {
        return terminal ? "\u001b[32m" + s + "\u001b[0m" : s;
    }

    String fail(String s) {
        return terminal ? "\u001b[31m" + s + "\u001b[0m" : s;
    }

    /** Replaces the progress line on {@code err} with {@code line}; nothing off a terminal. */
    void progress(PrintStream err, String line) {
        if (terminal) {
            err.print("\r\u001b[2K" + line);
            err.flush();
        }
    }
}
