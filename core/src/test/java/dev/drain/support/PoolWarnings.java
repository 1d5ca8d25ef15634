package dev.drain.support;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * The warnings the pool logs ({@code System.getLogger("dev.drain.pool")}, which the JDK routes to
 * {@code java.util.logging} here), kept for the test to read instead of printed: tests print
 * nothing. Register it as a field, {@code @RegisterExtension final PoolWarnings warnings = new
 * PoolWarnings();}, or use {@link #capture()} around a block.
 */
public final class PoolWarnings implements BeforeEachCallback, AfterEachCallback, AutoCloseable {
    /** Held strongly: {@code java.util.logging} keeps its loggers only weakly. */
    private static final Logger POOL = Logger.getLogger("dev.drain.pool");

    private final List<String> messages = new CopyOnWriteArrayList<>();
    private final List<LogRecord> records = new CopyOnWriteArrayList<>();
    private final Handler handler = new Handler() {
        @Override
        public void publish(LogRecord logged) {
            records.add(logged);
            String text = logged.getMessage();
            Object[] parameters = logged.getParameters();
            messages.add(parameters == null ? text : java.text.MessageFormat.format(text, parameters));
        }

        @Override
        public void flush() { }

        @Override
        public void close() { }
    };
    private boolean useParentHandlers;

    /** {@return warnings captured from now until {@link #close()}} */
    public static PoolWarnings capture() {
        PoolWarnings warnings = new PoolWarnings();
        warnings.install();
        return warnings;
    }

    /** {@return every record the pool logged while this was installed, at the logger's level or above} */
    public List<LogRecord> records() {
        return List.copyOf(records);
    }

    /** {@return the warnings that a run's owner closed its scope under it (WP-20), formatted} */
    public List<String> abandonments() {
        return messages.stream().filter(m -> m.contains(" abandoned: its owner")).toList();
    }

    /** {@return every line the pool logged while this was installed, at the logger's level or above, formatted} */
    public List<String> messages() {
        return List.copyOf(messages);
    }

    private synchronized void install() {
        useParentHandlers = POOL.getUseParentHandlers();
        POOL.setUseParentHandlers(false);
        POOL.addHandler(handler);
    }

    @Override
    public synchronized void close() {
        POOL.removeHandler(handler);
        POOL.setUseParentHandlers(useParentHandlers);
    }

    @Override
    public void beforeEach(ExtensionContext context) {
        messages.clear();
        records.clear();
        install();
    }

    @Override
    public void afterEach(ExtensionContext context) {
        close();
    }
}
