package dev.drain.jobtable;

import dev.drain.pool.Settlement;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Types;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Writes a batch of settlements in one transaction, every write fenced by owner and claim (JT-5,
 * JT-7): {@code Succeeded} makes a row {@code done}, {@code Failed} {@code dead} with the
 * failure's text, {@code Released} {@code ready} again, {@code Deferred} {@code ready} once its
 * retry is due, with its attempts (JT-16); a write that matches no row is counted as stale. The rows of the batch leave {@link HeldClaims} whether the write succeeds or fails.
 *
 * <p>It keeps no connection: each caller brings its own, and nothing else of the caller's. It is
 * called by the settler's thread ({@link TableSettler}) and by a stream's statements thread, for
 * the releases of its close ({@link Claims}); the only state it writes is the count of stale
 * writes (atomic, read by any thread) and the held claims (a concurrent set).
 */
final class SettlementWriter {
    private final Store store;
    private final String owner;
    private final HeldClaims held;
    /** Tells this table's waiting streams that rows are ready again (JT-13): its {@link WorkSignal}. */
    private final Runnable signal;
    /** Settlements that matched no row (JT-5): added to by the writing threads, read by any thread. */
    private final AtomicLong staleWrites = new AtomicLong();

    SettlementWriter(Store store, String owner, HeldClaims held, Runnable signal) {
        this.store = store;
        this.signal = signal;
        this.owner = owner;
        this.held = held;
    }

    /** {@return how many settlements matched no row, because the row had been claimed again or settled} */
    long staleWrites() {
        return staleWrites.get();
    }

    /**
     * Writes settlements in one transaction on {@code c} (JT-5, JT-7), counting those that matched
     * no row; rolls back and throws if any write fails. Settled or not, their rows are no longer
     * held.
     */
    void write(Connection c, List<Settlement<Job>> unordered) throws SQLException {
        // One statement for every kind, its rows in id order: the order in which the claims lock
        // rows, so that two writers of the same rows (a late claimant's and the new one's) wait
        // for each other instead of deadlocking. The renewal never waits: it skips locked rows.
        List<Settlement<Job>> batch = new ArrayList<>(unordered);
        batch.sort(Comparator.comparingLong(settlement -> settlement.item().id()));
        try (PreparedStatement settle = store.prepare(c, store.sql.settle)) {
            for (Settlement<Job> settlement : batch) {
                Job job = settlement.item();
                switch (settlement) {
                    case Settlement.Succeeded<Job> _ -> {
                        settle.setString(1, "done");
                        settle.setNull(2, Types.VARCHAR);
                        settle.setBoolean(3, true);
                        settle.setNull(4, Types.BIGINT);
                        settle.setNull(5, Types.INTEGER);
                    }
                    case Settlement.Failed<Job> failed -> {
                        settle.setString(1, "dead");
                        settle.setString(2, failed.failure().describe(JobTable.MAX_ERROR)
                                .replace('\u0000', '\ufffd')); // Postgres text holds no NUL
                        settle.setBoolean(3, true);
                        settle.setNull(4, Types.BIGINT);
                        settle.setInt(5, failed.failure().attempts()); // all of them, the earlier runs' too (JT-16)
                    }
                    case Settlement.Released<Job> released -> {
                        settle.setString(1, "ready");
                        settle.setNull(2, Types.VARCHAR);
                        settle.setBoolean(3, false);
                        Instant retryAt = released.retryAt();
                        if (retryAt == null) {
                            settle.setNull(4, Types.BIGINT); // claimable at once
                        } else {
                            settle.setLong(4, retryAt.toEpochMilli()); // not claimable before its retry is due (JT-12)
                        }
                        settle.setNull(5, Types.INTEGER); // its attempts as they were: a cancelled one is not counted
                    }
                    case Settlement.Deferred<Job> deferred -> {
                        settle.setString(1, "ready");
                        settle.setNull(2, Types.VARCHAR);
                        settle.setBoolean(3, false);
                        settle.setLong(4, deferred.retryAt().toEpochMilli()); // the store keeps the retry until then (JT-16)
                        settle.setInt(5, deferred.attempts());
                    }
                }
                settle.setLong(6, job.id());
                settle.setString(7, owner);
                settle.setInt(8, job.claim());
                settle.addBatch();
            }
            long matched = batch.isEmpty() ? 0 : rowsChanged(settle.executeBatch());
            boolean released = batch.stream().anyMatch(settlement -> settlement instanceof Settlement.Released<Job>);
            if (released) {
                store.notifyWork(c); // rows ready again: other processes' waiting streams hear it at the commit (JT-13)
            }
            c.commit();
            if (released) {
                signal.run();
            }
            staleWrites.addAndGet(batch.size() - matched);
        } catch (SQLException | RuntimeException e) {
            Store.rollback(c, e);
            throw e;
        } finally {
            held.forget(batch);
        }
    }

    /** The rows a batch of single-row updates changed: 1 or 0 each (a driver that cannot tell counts as 1). */
    private static long rowsChanged(int[] counts) {
        long changed = 0;
        for (int count : counts) {
            changed += count == Statement.SUCCESS_NO_INFO ? 1 : count;
        }
        return changed;
    }
}
