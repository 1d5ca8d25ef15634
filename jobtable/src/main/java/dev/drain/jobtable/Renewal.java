package dev.drain.jobtable;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The thread that renews this owner's leases (JT-4), {@code drain-jobtable-lease-<table>}: started
 * by the first claim that took a row, it extends the lease of every row the table still holds to
 * now + lease, every third of a lease, until {@link #stop}. A renewal that fails is tried again at
 * the next tick; the rows' leases run out if the database stays away. Each tick also makes sure,
 * on PostgreSQL, that the owner's presence is held ({@link Presence#ensure}): a presence session
 * that was cut (a proxy's idle timeout, an administrator's {@code pg_terminate_backend}) would make
 * the rows look abandoned (JT-3), and a stream whose producer is blocked, or a handler that runs
 * long, runs no claim that would take it again. A daemon: a table that is never closed does not
 * keep the JVM alive.
 */
final class Renewal {
    /*
     * start comes from a stream's statements thread (after a claim that took rows), stop from
     * whichever thread closes the table (or a test that makes the table stall); the TableThread
     * orders them. Everything else is the renewer's own: its connection is a local of
     * renewUntilStopped, opened at the first tick and replaced after a failure.
     */

    private final Store store;
    private final Terms terms;
    private final HeldClaims held;
    private final Presence presence;
    private final TableThread thread;
    /** Renewals that failed (the database unreachable): counted by the renewer, read by tests. */
    private final AtomicLong failures = new AtomicLong();
    /** Renewals committed: counted by the renewer, read by tests. */
    private final AtomicLong renewals = new AtomicLong();

    Renewal(Store store, Terms terms, HeldClaims held, Presence presence) {
        this.store = store;
        this.terms = terms;
        this.held = held;
        this.presence = presence;
        this.thread = new TableThread("drain-jobtable-lease-" + store.table, this::renewUntilStopped);
    }

    /** Starts the renewer, unless it is running or has been stopped. */
    void start() {
        thread.start();
    }

    /** Stops the renewer and waits for it to end, whatever interrupts the caller (whose interrupt is kept). Idempotent. */
    void stop() {
        thread.stop();
    }

    /** {@return how many renewals have failed} */
    long failures() {
        return failures.get();
    }

    /** {@return how many renewals have been committed} */
    long renewals() {
        return renewals.get();
    }

    /** The renewer's loop; on the renewer. */
    private void renewUntilStopped() {
        Connection c = null;
        long interval = Math.max(1, terms.lease().toNanos() / 3);
        try {
            while (thread.awaitTick(interval)) {
                try {
                    presence.ensure(); // before the renewal: a lost presence makes the rows look abandoned now
                } catch (SQLException | RuntimeException e) {
                    // tried again at the next tick, and before the next claim; the leases are renewed all the same
                }
                if (thread.isStopped()) {
                    return; // stopped during the presence's check: close() waits for one step, not two
                }
                try {
                    if (c == null) {
                        c = store.connect();
                        c.setAutoCommit(false);
                    }
                    renew(c);
                } catch (SQLException | RuntimeException e) {
                    failures.incrementAndGet();
                    if (c != null) {
                        Store.rollback(c, e);
                    }
                    Store.closeQuietly(c, null);
                    c = null;
                }
            }
        } finally {
            Store.closeQuietly(c, null);
        }
    }

    /**
     * Extends the lease of every row this owner holds, in one transaction: it locks them in id
     * order and skips those another transaction has locked (a batch of settlements writing
     * them, which needs no renewal), so that it never waits for, or deadlocks with, the
     * settler (JT-4). On the renewer.
     */
    private void renew(Connection c) throws SQLException {
        Map<Long, Integer> holding = held.claimsById();
        try (PreparedStatement owned = store.prepare(c, store.sql.held); PreparedStatement renew = store.prepare(c, store.sql.renew)) {
            owned.setString(1, terms.owner());
            boolean any = false;
            try (ResultSet rows = owned.executeQuery()) {
                while (rows.next()) {
                    Integer claim = holding.get(rows.getLong(1));
                    if (claim != null) { // a row this table still tracks, not one whose settlement failed
                        renew.setLong(1, terms.lease().toMillis());
                        renew.setLong(2, rows.getLong(1));
                        renew.setInt(3, claim);
                        renew.addBatch();
                        any = true;
                    }
                }
            }
            if (any) {
                renew.executeBatch();
            }
            c.commit();
            renewals.incrementAndGet();
        }
    }
}
