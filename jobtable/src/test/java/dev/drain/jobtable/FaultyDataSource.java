package dev.drain.jobtable;

import java.io.PrintWriter;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.logging.Logger;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;

/**
 * A data source whose connections can be made to fail on demand, as a database that went away
 * does: while {@link #failing} is set, opening a connection, preparing or running a statement and
 * committing throw an {@link SQLException}.
 */
final class FaultyDataSource implements DataSource {
    private static final Set<String> FAILING_CALLS = Set.of("prepareStatement", "createStatement", "commit");

    private final DataSource real;
    /** Set by the test; read by every connection. */
    final AtomicBoolean failing = new AtomicBoolean();

    FaultyDataSource(DataSource real) {
        this.real = real;
    }

    @Override
    public Connection getConnection() throws SQLException {
        fail("getConnection");
        return wrap(real.getConnection());
    }

    @Override
    public Connection getConnection(String user, String password) throws SQLException {
        fail("getConnection");
        return wrap(real.getConnection(user, password));
    }

    private void fail(String call) throws SQLException {
        if (failing.get()) {
            throw new SQLException("injected: the database is gone (" + call + ")", "08006");
        }
    }

    private Connection wrap(Connection connection) {
        return (Connection) Proxy.newProxyInstance(Connection.class.getClassLoader(), new Class<?>[] {Connection.class},
                (proxy, method, args) -> {
                    if (FAILING_CALLS.contains(method.getName())) {
                        fail(method.getName());
                    }
                    return invoke(method, connection, args);
                });
    }

    private static @Nullable Object invoke(Method method, Object target, @Nullable Object @Nullable [] args) throws Throwable {
        try {
            return method.invoke(target, args);
        } catch (InvocationTargetException e) {
            throw Objects.requireNonNull(e.getCause(), "a call failed without a cause");
        }
    }

    @Override
    public PrintWriter getLogWriter() throws SQLException {
        return real.getLogWriter();
    }

    @Override
    public void setLogWriter(PrintWriter out) throws SQLException {
        real.setLogWriter(out);
    }

    @Override
    public void setLoginTimeout(int seconds) throws SQLException {
        real.setLoginTimeout(seconds);
    }

    @Override
    public int getLoginTimeout() throws SQLException {
        return real.getLoginTimeout();
    }

    @Override
    public Logger getParentLogger() throws SQLFeatureNotSupportedException {
        return real.getParentLogger();
    }

    @Override
    public <T> T unwrap(Class<T> type) throws SQLException {
        return real.unwrap(type);
    }

    @Override
    public boolean isWrapperFor(Class<?> type) throws SQLException {
        return real.isWrapperFor(type);
    }
}
