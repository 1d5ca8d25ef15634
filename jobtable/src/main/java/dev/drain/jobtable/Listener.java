package dev.drain.jobtable;

import java.lang.System.Logger.Level;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.atomic.AtomicLong;
import org.jspecify.annotations.Nullable;
import org.postgresql.PGConnection;
import org.postgresql.PGNotification;

/**
 * Hears, on PostgreSQL, that another process enqueued or released jobs of this table (JT-13): a
 * thread of the table's ({@code drain-jobtable-listen-<table>}) holds a connection of its own
 * that has run {@code LISTEN} on the table's channel, and signals the table's {@link WorkSignal}
 * on every notification, which {@link JobTable#enqueue} and a batch of releases send in their
 * transaction (delivered at its commit). Started by the first stream that waits for work,
 * stopped by the table's close.
 *
 * <p>If the connection drops, or the driver is not PostgreSQL's own, the streams fall back to
 * polling (every {@code pollInterval}, which they do anyway): nothing is missed, only later. A
 * lost connection is logged once, tried again every {@code pollInterval}, and its return logged;
 * on its return the streams are signalled, for what was enqueued meanwhile.
 *
 * <p>Its connection and {@link #down} are the listener thread's own; {@link #outages} is read by
 * any thread.
 */
final class Listener {
    private static final System.Logger LOG = System.getLogger("dev.drain.jobtable");

    private final Store store;
    private final Terms terms;
    private final WorkSignal signal;
    private final TableThread thread;
    /** How many times the listening connection was lost or could not be had: counted by the listener thread. */
    private final AtomicLong outages = new AtomicLong();
    /** Whether the last attempt to listen failed; the listener thread's own. */
    private boolean down;

    Listener(Store store, Terms terms, WorkSignal signal) {
        this.store = store;
        this.terms = terms;
        this.signal = signal;
        this.thread = new TableThread("drain-jobtable-listen-" + store.table, this::listenUntilStopped);
    }

    /** Starts listening, unless it is already, or has been stopped. */
    void start() {
        thread.start();
    }

    /** Stops listening and waits for the thread to end (whatever interrupts the caller). Idempotent. */
    void stop() {
        thread.stop();
    }

    /** {@return how many times the listening connection was lost or could not be had} */
    long outages() {
        return outages.get();
    }

    /** The listener's loop; on the listener thread. */
    private void listenUntilStopped() {
        Connection c = null;
        try {
            while (!thread.isStopped()) {
                try {
                    if (c == null) {
                        c = listen();
                    }
                    PGNotification[] heard = c.unwrap(PGConnection.class).getNotifications(250);
                    if (heard != null && heard.length > 0) {
                        signal.signal();
                    }
                } catch (SQLException | RuntimeException | LinkageError e) {
                    lost(e);
                    Store.closeQuietly(c, e);
                    c = null;
                    if (e instanceof LinkageError || !thread.awaitTick(WorkSignal.nanos(terms.pollInterval()))) {
                        return; // no PostgreSQL driver of its own: polling only
                    }
                }
            }
        } finally {
            Store.closeQuietly(c, null);
        }
    }

    /** Opens the listening connection; {@return it} On the listener thread. */
    private Connection listen() throws SQLException {
        Connection c = store.connect();
        try {
            c.setAutoCommit(true);
            try (Statement s = c.createStatement()) {
                s.execute("LISTEN " + store.channel());
            }
        } catch (SQLException | RuntimeException e) {
            Store.closeQuietly(c, e);
            throw e;
        }
        if (down) {
            down = false;
            LOG.log(Level.INFO, "drain: job table {0} listens for new jobs again", store.table);
        }
        signal.signal(); // what was enqueued while nobody listened is claimed now
        return c;
    }

    /** Records a lost or refused connection, and logs the first of an outage. On the listener thread. */
    private void lost(Throwable cause) {
        outages.incrementAndGet();
        if (!down) {
            down = true;
            LOG.log(Level.WARNING, "drain: job table {0} cannot listen for new jobs ({1}): its streams poll every {2}"
                    + " until it can again", store.table, describe(cause), terms.pollInterval());
        }
    }

    private static String describe(@Nullable Throwable cause) {
        return cause == null ? "no cause" : cause.getClass().getName() + ": " + cause.getMessage();
    }
}
