package dev.drain.jobtable;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import dev.drain.pool.Settlement;
import dev.drain.safe.Uninterruptibly;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.NoSuchElementException;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import org.jspecify.annotations.Nullable;

/**
 * One stream of claims ({@link JobTable#claims()}): each time it has nothing in hand it claims up
 * to {@code claimBatch} claimable rows in one transaction (JT-2): at most one suspect (a row whose
 * next lost lease would bury it), if the table holds none (JT-3, {@link HeldClaims#reserveSuspect}),
 * then rows that are not suspects; it dead-letters the rows that have lost too many leases (JT-3),
 * and hands the rest out one at a time. When a claim finds nothing it may take, it ends
 * ({@link JobTable#claims()}), or waits for work ({@link JobTable#claimsUntilStopped()}, JT-13):
 * for the table's {@link WorkSignal} or the poll interval, ending when it is closed or its caller
 * interrupted. Closing it releases, fenced, what it claimed and did not hand out (JT-6). A failed
 * claim or release throws {@link JobTableException}.
 */
final class Claims implements Iterator<Job> {
    /*
     * hasNext and next are called by the pool's producer, close by whichever thread closes the
     * source (the pool's, or the table's close); the lock keeps them apart, and is held while a
     * statement runs.
     *
     * Every statement runs on a platform thread of the stream's own (drain-jobtable-claims-<table>,
     * see shielded), never on the caller's: the pool interrupts its producer to stop it, and an
     * interrupt closes a virtual thread's socket (and an H2 file) mid-statement, after which nobody
     * knows whether a claim was committed, and a release cannot be written at all. The lock's
     * holder hands a statement to that thread and waits for it whatever interrupts it (at most the
     * statement timeout), then keeps its interrupt. The connection is that thread's alone: only the
     * statements touch it, one at a time, and a claim hands what it took back as its result.
     */

    private final Store store;
    private final Terms terms;
    private final HeldClaims held;
    private final Renewal renewal;
    private final SettlementWriter writer;
    /** The owner's advisory lock, taken before the first claim (JT-3). */
    private final Presence presence;
    /** Counts a claim, for the table's tests: on the statements thread. */
    private final Runnable counted;
    /** Wakes this stream when it waits for work (JT-13). */
    private final WorkSignal signal;
    /** Whether a claim that finds nothing waits for work (JT-13) instead of ending the stream (JT-2). */
    private final boolean waiting;
    /** Takes this stream off the table's open streams: called by every close, under the lock. */
    private final Consumer<Claims> deregister;
    /** Held by the producer while it pulls, and by the thread that closes the stream, each for a whole statement. */
    private final ReentrantLock lock = new ReentrantLock();
    /** Runs this stream's statements on its one thread: created by the first, closed by close. */
    @GuardedBy("lock")
    private @Nullable ExecutorService statements;
    /** Claimed, not yet pulled. */
    @GuardedBy("lock")
    private final ArrayDeque<Job> unpulled = new ArrayDeque<>();
    /** Set by close before it takes the lock, so that a producer waiting for work gives up the wait. */
    private volatile boolean closing;
    /** A claim found nothing, or the stream was closed. */
    @GuardedBy("lock")
    private boolean exhausted;
    /**
     * Open once the first statement ran, null after close or a failed claim. Owned by the
     * statements' thread: only the tasks of {@link #statements} touch it, one at a time, while the
     * lock's holder waits for each (its submit and get order them).
     */
    private @Nullable Connection connection;

    /** What one claim did: the rows it took, and whether it only dead-lettered rows (then another claim is due). */
    private record Claimed(List<Job> taken, boolean buriedOnly) {}

    Claims(Store store, Terms terms, HeldClaims held, Renewal renewal, SettlementWriter writer, Presence presence, WorkSignal signal,
            boolean waiting, Runnable counted, Consumer<Claims> deregister) {
        this.store = store;
        this.presence = presence;
        this.counted = counted;
        this.signal = signal;
        this.waiting = waiting;
        this.terms = terms;
        this.held = held;
        this.renewal = renewal;
        this.writer = writer;
        this.deregister = deregister;
    }

    @Override
    public boolean hasNext() {
        lock.lock();
        try {
            // A claim that only dead-lettered rows (JT-3) found claimable rows: claim again.
            // A stream that waits for work (JT-13) waits when a claim found nothing, for a signal
            // or the poll interval, whichever comes first.
            while (unpulled.isEmpty() && !exhausted) {
                long seen = signal.generation();
                Claimed claimed = shielded(this::claim);
                unpulled.addAll(claimed.taken());
                if (unpulled.isEmpty() && !claimed.buriedOnly()) {
                    exhausted = !waiting || !signal.await(seen, WorkSignal.nanos(terms.pollInterval()), () -> closing);
                }
            }
            return !unpulled.isEmpty();
        } finally {
            lock.unlock();
        }
    }

    @Override
    public Job next() {
        lock.lock();
        try {
            if (!hasNext()) {
                throw new NoSuchElementException();
            }
            return unpulled.removeFirst();
        } finally {
            lock.unlock();
        }
    }

    /** Releases what was claimed and not pulled (JT-6), closes the connection and ends the stream's thread. Idempotent. */
    void close() {
        closing = true;
        signal.wakeToGiveUp(); // this stream's producer, if it waits for work, gives up the wait
        lock.lock();
        try {
            exhausted = true;
            deregister.accept(this);
            if (!unpulled.isEmpty()) {
                List<Settlement<Job>> releases = new ArrayList<>(unpulled.size());
                for (Job job : unpulled) {
                    releases.add(new Settlement.Released<>(job, Settlement.Why.DISCARDED));
                }
                unpulled.clear();
                shielded(() -> release(releases));
            }
        } finally {
            try {
                ExecutorService opened = statements;
                if (opened != null) {
                    Thread statementsThread = shielded(this::disconnect);
                    opened.close(); // waits for its task to end, not for its thread to die
                    statements = null;
                    Uninterruptibly.join(statementsThread); // so that no thread outlives close()
                }
            } finally {
                lock.unlock();
            }
        }
    }

    /**
     * Runs {@code work} on this stream's platform thread and waits for it to end, interrupted or
     * not; the caller's interrupt is kept. Returns what the work returned.
     */
    @GuardedBy("lock")
    private <T extends @Nullable Object> T shielded(Callable<T> work) {
        ExecutorService executor = statements;
        if (executor == null) {
            executor = Executors.newSingleThreadExecutor(
                    Thread.ofPlatform().daemon().name("drain-jobtable-claims-" + store.table).factory());
            statements = executor;
        }
        Future<T> done = executor.submit(work);
        if (!Uninterruptibly.awaitDone(done)) { // the statement is under way: its outcome must be known
            Throwable cause = done.exceptionNow(); // nothing cancels it
            if (cause instanceof RuntimeException r) {
                throw r;
            }
            if (cause instanceof Error error) {
                throw error;
            }
            throw new JobTableException("a statement of " + store.table + " failed: " + cause, cause);
        }
        return done.resultNow();
    }

    /**
     * Claims the next batch (JT-2, JT-3), in one transaction; on the statements' thread. First at
     * most one suspect, if the table holds none (burying on the way the rows that lost too many
     * leases), then rows that are not suspects, up to {@code claimBatch} in all.
     */
    private Claimed claim() {
        Connection c = null;
        counted.run();
        boolean reserved = held.reserveSuspect();
        try {
            presence.ensure(); // before a row is ours: a claim's rows never look abandoned
            if (connection == null) {
                connection = store.connect();
                connection.setAutoCommit(false);
            }
            c = connection;
            List<Job> claimed = new ArrayList<>();
            Job suspect = null;
            boolean buried = false;
            try (PreparedStatement take = store.prepare(c, store.sql.take);
                    PreparedStatement bury = store.prepare(c, store.sql.buryLost)) {
                if (reserved) {
                    buried |= takeRows(c, store.sql.suspects, terms.claimBatch(), 1, claimed, take, bury);
                    suspect = claimed.isEmpty() ? null : claimed.getFirst();
                }
                if (claimed.size() < terms.claimBatch()) {
                    // buried only when maxLostLeases is 1: there are no suspects then
                    int room = terms.claimBatch() - claimed.size();
                    buried |= takeRows(c, store.sql.unsuspected, room, room, claimed, take, bury);
                }
                if (!claimed.isEmpty()) {
                    take.executeBatch();
                }
                if (buried) {
                    bury.executeBatch();
                }
            }
            c.commit();
            held.took(claimed, suspect, reserved);
            reserved = false;
            if (!claimed.isEmpty()) {
                renewal.start();
            }
            return new Claimed(claimed, claimed.isEmpty() && buried);
        } catch (SQLException | RuntimeException e) {
            if (c != null) {
                Store.rollback(c, e);
            }
            Store.closeQuietly(connection, e); // a broken connection is not used again
            connection = null;
            throw new JobTableException("could not claim jobs from " + store.table + ": " + e.getMessage(), e);
        } finally {
            if (reserved) {
                held.giveBack();
            }
        }
    }

    /**
     * Runs {@code select} (the suspects' or the others', JT-3) for up to {@code limit} rows, and
     * adds to {@code take}'s batch, and to {@code claimed}, the first {@code most} it may take,
     * burying on the way the rows that lost too many leases. {@return whether it buried any}
     */
    private boolean takeRows(Connection c, String select, int limit, int most, List<Job> claimed, PreparedStatement take,
            PreparedStatement bury) throws SQLException {
        boolean buried = false;
        int taken = 0;
        try (PreparedStatement rows = store.prepare(c, select)) {
            rows.setInt(1, terms.suspectWhenReady());
            rows.setInt(2, terms.suspectWhenExpired());
            rows.setInt(3, limit);
            try (ResultSet found = rows.executeQuery()) {
                while (taken < most && found.next()) {
                    Job job = row(found, take, bury);
                    if (job == null) {
                        buried = true;
                    } else {
                        claimed.add(job);
                        taken++;
                    }
                }
            }
        }
        return buried;
    }

    /**
     * Adds the claim of the row {@code rows} is on to {@code take}'s batch and {@return its job},
     * or, if its lease ran out once too often (JT-3), adds its burial to {@code bury}'s and
     * returns null.
     */
    private @Nullable Job row(ResultSet rows, PreparedStatement take, PreparedStatement bury) throws SQLException {
        long id = rows.getLong(1);
        String payload = rows.getString(2);
        boolean expired = rows.getString(3).equals("running");
        int claim = rows.getInt(4) + 1;
        int lost = rows.getInt(5) + (expired ? 1 : 0);
        if (expired && lost >= terms.maxLostLeases()) {
            bury.setInt(1, lost);
            bury.setString(2, "lost " + lost + " leases: its claimants died or lost the database"
                    + " before settling it, " + lost + " times");
            bury.setLong(3, id);
            bury.addBatch();
            return null;
        }
        take.setString(1, terms.owner());
        take.setInt(2, claim);
        take.setInt(3, lost);
        take.setLong(4, terms.lease().toMillis());
        take.setLong(5, id);
        take.addBatch();
        return new Job(id, payload, claim, rows.getInt(6));
    }

    /** Writes the releases of {@link #close}; on the statements' thread. Returns null: the statement has no result. */
    private @Nullable Void release(List<Settlement<Job>> releases) {
        try {
            if (connection == null) {
                connection = store.connect();
                connection.setAutoCommit(false);
            }
            writer.write(connection, releases);
            return null;
        } catch (SQLException | RuntimeException e) {
            throw new JobTableException("could not release " + releases.size() + " claimed jobs of " + store.table
                    + " that the pool did not pull (their leases will expire): " + e.getMessage(), e);
        }
    }

    /** Closes the connection, if there is one; on the statements' thread. Returns that thread, which close joins. */
    private Thread disconnect() {
        Store.closeQuietly(connection, null);
        connection = null;
        return Thread.currentThread();
    }
}
