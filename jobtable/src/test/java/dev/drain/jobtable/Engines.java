package dev.drain.jobtable;

import dev.drain.lab.LocalPostgres;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.Comparator;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import javax.sql.DataSource;
import org.h2.jdbcx.JdbcDataSource;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * The databases the tests run on, started at most once per test run and stopped at its end: a
 * {@link LocalPostgres}, and an H2 file database in a temporary folder (with {@code AUTO_SERVER},
 * so that a child JVM can open it while this one holds it). A test asks for it as a parameter and
 * gets a table of its own ({@link #freshTable}).
 */
final class Engines implements AutoCloseable {
    private static final AtomicInteger TABLES = new AtomicInteger();

    /** Started when first asked for; guarded by this. */
    private @Nullable LocalPostgres postgres;
    /** Created when first asked for; guarded by this. */
    private @Nullable Path h2Folder;
    /** Opened with the H2 database, closed last; guarded by this. */
    private @Nullable Connection h2Keeper;

    /** {@return connections to the dialect's database, starting it if this is the first ask} */
    synchronized DataSource dataSource(Dialect dialect) {
        return switch (dialect) {
            case POSTGRES -> postgres().dataSource();
            case H2 -> {
                JdbcDataSource h2 = new JdbcDataSource();
                h2.setURL(jdbcUrl(dialect));
                keepOpen(h2);
                yield h2;
            }
        };
    }

    /**
     * Holds one connection to the H2 database for the whole run, so that this JVM opened it first
     * and stays its server: a child JVM then connects to it over TCP, and a child killed with
     * SIGKILL leaves no lock on its file.
     */
    private void keepOpen(JdbcDataSource h2) {
        if (h2Keeper == null) {
            try {
                h2Keeper = h2.getConnection();
            } catch (SQLException e) {
                throw new IllegalStateException("the H2 database did not open", e);
            }
        }
    }

    /** {@return the JDBC URL of the dialect's database, for a child JVM} */
    synchronized String jdbcUrl(Dialect dialect) {
        return switch (dialect) {
            case POSTGRES -> postgres().jdbcUrl();
            case H2 -> "jdbc:h2:file:" + h2Folder().resolve("jobs") + ";AUTO_SERVER=TRUE";
        };
    }

    /** {@return a table name no other test of this run uses} */
    static String freshTable(String what) {
        return "t" + TABLES.incrementAndGet() + "_" + what.replaceAll("[^a-z0-9]", "_").toLowerCase(java.util.Locale.ROOT);
    }

    /** {@return whether a connection can be had (the engine started)} */
    static boolean reachable(DataSource dataSource) {
        try (Connection c = dataSource.getConnection()) {
            return c.isValid(5);
        } catch (SQLException e) {
            return false;
        }
    }

    private LocalPostgres postgres() {
        if (postgres == null) {
            try {
                postgres = LocalPostgres.start();
            } catch (IOException e) {
                throw new UncheckedIOException("the embedded Postgres did not start", e);
            }
        }
        return postgres;
    }

    private Path h2Folder() {
        if (h2Folder == null) {
            try {
                h2Folder = Files.createTempDirectory("drain-h2");
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        return h2Folder;
    }

    @Override
    public synchronized void close() throws IOException {
        if (postgres != null) {
            postgres.close();
            postgres = null;
        }
        if (h2Folder != null) {
            JdbcDataSource h2 = new JdbcDataSource();
            h2.setURL(jdbcUrl(Dialect.H2));
            try (Connection c = h2.getConnection(); var s = c.createStatement()) {
                s.execute("SHUTDOWN");
            } catch (SQLException e) {
                // already shut down, or never opened: the folder is deleted either way
            }
            if (h2Keeper != null) {
                try {
                    h2Keeper.close();
                } catch (SQLException e) {
                    // the database was shut down just above
                }
                h2Keeper = null;
            }
            try (Stream<Path> files = Files.walk(h2Folder)) {
                for (Path file : files.sorted(Comparator.reverseOrder()).toList()) {
                    Files.deleteIfExists(file);
                }
            }
            h2Folder = null;
        }
    }

    /** Resolves an {@link Engines} parameter: one per test run, closed when the run ends. */
    static final class Extension implements ParameterResolver {
        @Override
        public boolean supportsParameter(ParameterContext parameter, ExtensionContext context) {
            return parameter.getParameter().getType() == Engines.class;
        }

        @Override
        public Engines resolveParameter(ParameterContext parameter, ExtensionContext context) {
            return context.getRoot().getStore(ExtensionContext.Namespace.create(Engines.class))
                    .computeIfAbsent(Engines.class, k -> new Engines(), Engines.class);
        }
    }
}
