package dev.drain.jobtable;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.concurrent.locks.ReentrantLock;
import org.jspecify.annotations.Nullable;

/**
 * That this table's owner is alive, as PostgreSQL sees it (JT-3, decision 0067): before its first
 * claim, the table takes a session-level advisory lock (shared) keyed by its owner's name on a connection
 * of its own, and keeps it until it is closed. PostgreSQL drops the lock when the session ends: a
 * process killed, or cut from the database, loses it within moments, and a claim then takes that
 * owner's running rows without waiting for their lease ({@link Store.Statements}: a running row
 * whose owner holds no such lock is claimable). Nothing on H2, whose rows wait for their lease.
 *
 * <p>The key is two 32-bit numbers: {@link #KEY_SPACE}, then PostgreSQL's {@code hashtext} of the
 * owner. The lock is taken shared, so that two owners whose names hash alike both hold it and
 * neither waits: each looks alive while either is (the other's rows then wait for their lease,
 * as they did before); a hash never makes a live owner look dead, nor blocks a claim.
 *
 * <p>{@link #ensure} comes from a stream's statements thread (before a claim) and from the renewer
 * (every tick, so that a session that was cut is taken again while no claim runs), {@link #close}
 * from whichever thread closes the table; the lock guards the session field and the closed flag
 * only, and nothing is done under it but reading and swapping them.
 */
final class Presence {
    /** The first half of every owner's advisory-lock key: "drai" in ASCII, so that drain's keys keep to themselves. */
    static final int KEY_SPACE = 0x64726169;

    private final Store store;
    private final String owner;
    private final ReentrantLock lock = new ReentrantLock();
    /** The session that holds the owner's lock: opened by the first claim, replaced by ensure, closed by close. */
    @GuardedBy("lock")
    private @Nullable Connection session;
    /** Set once, by close: no lock is taken after it. */
    @GuardedBy("lock")
    private boolean closed;

    /**
     * {@return the condition on a row {@code l} of {@code pg_locks} that it is the granted lock of
     * the owner {@code owner} names (an SQL expression: a column, or {@code ?}), in this database}
     * The one home of that match: the claim's "owner gone" (JT-3) and the tests that watch a
     * presence use it. The lock's second key is PostgreSQL's {@code hashtext} of the owner, as
     * {@code pg_locks} shows it (an unsigned 32 bits).
     */
    static String lockOf(String owner) {
        return "l.locktype = 'advisory' AND l.granted AND l.objsubid = 2 AND l.classid = " + KEY_SPACE
                + " AND l.objid = (hashtext(" + owner + ")::bigint & 4294967295)::oid"
                + " AND l.database = (SELECT d.oid FROM pg_database d WHERE d.datname = current_database())";
    }

    Presence(Store store, String owner) {
        this.store = store;
        this.owner = owner;
    }

    /**
     * Takes the owner's lock if this table does not hold it yet (on PostgreSQL), before a claim and
     * at every renewer's tick: once a claim's rows are {@code running} under this owner, they must
     * not look abandoned. A session that does not answer within a second is replaced: the lock is
     * taken on a new session first and the old one closed after, so that a session that was only
     * slow to answer never leaves the owner without its lock (two sessions of one owner both hold
     * it: it is shared). A session that broke is replaced the same way (meanwhile the rows may
     * have been taken: their late settlements are fenced, JT-5). Nothing is done under this
     * object's lock but reading and swapping the session: connecting, asking and closing are done
     * outside it, so a claim never waits here for the renewer's connect, nor the other way round.
     *
     * @throws SQLException if the lock cannot be had: the claim then fails, and takes nothing
     */
    @SuppressWarnings("ReferenceEquality") // the same session, not an equal one: was it replaced meanwhile?
    void ensure() throws SQLException {
        if (store.dialect != Dialect.POSTGRES) {
            return;
        }
        Connection held;
        lock.lock();
        try {
            if (closed) {
                throw new SQLException("the job table " + store.table + " is closed");
            }
            held = session;
        } finally {
            lock.unlock();
        }
        if (held != null && held.isValid(1)) {
            return;
        }
        Connection fresh = takeOnNewSession();
        Connection toClose;
        boolean tableClosed;
        lock.lock();
        try {
            tableClosed = closed;
            if (!closed && session == held) {
                session = fresh;
                toClose = held; // replaced: closed below, after the new session holds the lock
            } else {
                toClose = fresh; // the table closed meanwhile, or another thread replaced it first
            }
        } finally {
            lock.unlock();
        }
        Store.closeQuietly(toClose, null);
        if (tableClosed) {
            throw new SQLException("the job table " + store.table + " is closed");
        }
    }

    /** {@return a new session that holds the owner's lock} */
    private Connection takeOnNewSession() throws SQLException {
        Connection c = store.connect();
        try {
            c.setAutoCommit(true);
            // shared: two owners whose names hash alike both hold it, and neither waits for the other
            try (PreparedStatement take = store.prepare(c, "SELECT pg_advisory_lock_shared(?, hashtext(?))")) {
                take.setInt(1, KEY_SPACE);
                take.setString(2, owner);
                take.executeQuery().close();
            }
            return c;
        } catch (SQLException | RuntimeException e) {
            Store.closeQuietly(c, e);
            throw e;
        }
    }

    /** Ends the session, and with it the owner's lock: the rows this table still holds become claimable at once. Idempotent. */
    void close() {
        Connection held;
        lock.lock();
        try {
            closed = true;
            held = session;
            session = null;
        } finally {
            lock.unlock();
        }
        Store.closeQuietly(held, null);
    }
}
