package dev.drain.jobtable;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import dev.drain.pool.Settlement;
import dev.drain.pool.Settler;
import java.sql.Connection;
import java.sql.SQLException;
import java.util.List;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.BooleanSupplier;
import org.jspecify.annotations.Nullable;

/**
 * The settler a table gives the pool ({@link JobTable#settler()}): each batch is written in one
 * transaction on a connection of the settler's own, every write fenced by owner and claim (JT-5,
 * JT-7), and a closed table refuses a batch with {@link IllegalStateException} (JT-4). Settled or
 * not, a batch's rows are no longer renewed: a row whose settlement failed is left to its lease.
 */
final class TableSettler implements Settler<Job> {
    /*
     * The pool calls settle from its run's settler thread, one batch at a time; close comes from
     * whichever thread closes the table. The lock keeps the connection to one of them at a time.
     *
     * The settle path is the whole of it, and synchronous: settle returns once the batch is
     * committed, or throws, having kept nothing of the batch. The write itself is the
     * SettlementWriter's; this class owns only the connection. So when the pool's Settler may keep
     * more than one batch in flight (hand a batch over, get a stage completed when the store has
     * recorded it), a stage completed by this call's return is all it needs: the lock orders the
     * batches on the one connection as the calls do now.
     *
     * A connection that failed is closed and not used again: the next batch opens another (JT-7).
     */

    private final Store store;
    private final SettlementWriter writer;
    private final HeldClaims held;
    /** Whether the table is closed: its flag, set by whichever thread closes it. */
    private final BooleanSupplier tableClosed;
    private final String owner;
    /** Keeps the connection to one call at a time: settle, on the pool's settler thread, or close. */
    private final ReentrantLock lock = new ReentrantLock();
    /** Open after the first batch, null after a failure or close. */
    @GuardedBy("lock")
    private @Nullable Connection connection;

    TableSettler(Store store, SettlementWriter writer, HeldClaims held, BooleanSupplier tableClosed, String owner) {
        this.store = store;
        this.writer = writer;
        this.held = held;
        this.tableClosed = tableClosed;
        this.owner = owner;
    }

    /** {@return true: a deferred job is kept {@code ready} until its retry is due, with its attempts (JT-16)} */
    @Override
    public boolean keepsDeferred() {
        return true;
    }

    @Override
    public void settle(List<Settlement<Job>> batch) throws SQLException {
        if (tableClosed.getAsBoolean()) {
            held.forget(batch);
            throw new IllegalStateException("the job table " + store.table + " is closed: " + batch.size()
                    + " settlements not written (their rows' leases run out)");
        }
        lock.lock();
        try {
            if (connection == null) {
                connection = store.connect();
                connection.setAutoCommit(false);
            }
            writer.write(connection, batch);
        } catch (SQLException | RuntimeException e) {
            Store.closeQuietly(connection, e); // a broken connection is not used again
            connection = null;
            throw e;
        } finally {
            held.forget(batch); // settled or not, no longer renewed (JT-7)
            lock.unlock();
        }
    }

    /** Closes the connection, if there is one; a later batch is refused by the table's flag, not here. */
    void close() {
        lock.lock();
        try {
            Store.closeQuietly(connection, null);
            connection = null;
        } finally {
            lock.unlock();
        }
    }

    @Override
    public String toString() {
        return "the settler of " + store.table + " (owner " + owner + ")";
    }
}
