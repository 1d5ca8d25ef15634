package dev.drain.jobtable;

import dev.drain.pool.Settler;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.Spliterator;
import java.util.Spliterators;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import java.util.stream.StreamSupport;
import javax.sql.DataSource;

/**
 * A table of jobs that a worker pool drains durably (spec {@code specs/job-table.md}): the pool
 * pulls {@link #claims()}, and settles what it did with each job through {@link #settler()}
 * (WP-22), so that what the table records is what the run's books recorded.
 *
 * <p>A row is {@code ready}, {@code running} (claimed, with an owner, a claim number and a lease),
 * {@code done} or {@code dead} (failed for good, its failure kept). The lifecycle of a row:
 * <ul>
 *   <li>JT-2: a claim takes up to {@code claimBatch} claimable rows in id order, skipping rows that
 *       another claimant has locked ({@code FOR UPDATE SKIP LOCKED}), and makes them
 *       {@code running}, owned by this table's {@link #owner()}, with the row's claim counter
 *       incremented and a lease until now + {@code lease} on the database's clock;</li>
 *   <li>JT-3: a row is claimable when it is {@code ready}, or {@code running} with its lease
 *       expired (its claimant died, or lost the database): a claim of an expired row counts a
 *       lost lease, and a row that has lost {@code maxLostLeases} leases is dead-lettered
 *       instead of claimed again, so that a job that kills its process cannot kill every process
 *       that takes it;</li>
 *   <li>JT-4: while this table is open it renews, every third of a lease, the lease of every row
 *       it holds, so that a handler may run longer than a lease;</li>
 *   <li>JT-5: a settlement writes the row only if the row is still {@code running} under this
 *       owner and this claim: {@code Succeeded} makes it {@code done}, {@code Failed} makes it
 *       {@code dead} with the failure's text, {@code Released} makes it {@code ready} again. A
 *       write that matches no row (the lease expired and the row was claimed again, or settled by
 *       its new claimant) changes nothing and is counted in {@link #staleWrites()};</li>
 *   <li>JT-6: the rows a claim took that the pool never pulled are released when the pool closes
 *       the claims' stream;</li>
 *   <li>JT-7: a batch of settlements is one transaction: either every write of it is made, or the
 *       settler throws and none is (the pool then names the batch unsettled, and the rows stay
 *       {@code running} until their lease expires).</li>
 * </ul>
 *
 * <p>Thread safety: every method may be called from any thread. Each stream of claims and the
 * settler use a connection of their own, taken from the data source when first needed and kept.
 */
public final class JobTable implements AutoCloseable {
    /*
     * Implementation notes.
     *
     * The table is split by the thread that owns each piece of state; each class says the rest.
     *   Store             immutable, every thread: the data source, the dialect, the statements,
     *                     and opening the table (JT-1).
     *   Terms             immutable, every thread: the owner, the lease, the claim's size, the
     *                     leases a row may lose.
     *   Claims            one per stream: its rows in hand under its lock (the pool's producer, or
     *                     the thread that closes it); its connection on the stream's statements
     *                     thread (JT-2, JT-3, JT-6).
     *   TableSettler      the pool's settler thread: its connection, under its lock (JT-5, JT-7).
     *   SettlementWriter  the fenced transaction that the settler and a stream's releases write
     *                     with, on their own connections, and the count of stale writes (atomic).
     *   Renewal           the renewer thread (JT-4): started and stopped under its lock; its
     *                     connection is its own.
     *   HeldClaims        the claims held (a concurrent set): a claim adds, a write removes, the
     *                     renewer reads.
     *   JobTable          this class: closed (volatile) and the open streams (a concurrent set),
     *                     for any thread; enqueue and counts run on the caller's own connection.
     * The policies shared with the core come from dev.drain.safe (decision 0055): a dead letter's
     * text is ItemFailure.describe, and every wait that must run to its end is Uninterruptibly's.
     *
     * Lock order. The locks are a stream's Claims.lock, Renewal.lock, TableSettler.lock and the
     * database's row locks; the concurrent sets and atomics take none that a caller waits for.
     *   1. Claims.lock (one per stream). Its holder waits for the stream's statements thread, so
     *      what that thread takes comes after it: the row locks of a claim or a release, and, after
     *      a claim that took rows,
     *   2. Renewal.lock, last: nothing is taken or waited for while it is held (the renewer waits
     *      on its condition, which releases it; stop joins the renewer after releasing it).
     *   TableSettler.lock is taken alone: its holder takes no other lock of the table, and waits
     *   only for the database (a connection, row locks). close() takes each stream's lock, then
     *   the renewal's, then the settler's, one at a time and never two at once.
     *   Row locks: every transaction locks rows in id order (a claim, SKIP LOCKED; a batch of
     *   settlements or releases, sorted by id), and the renewal holds no Java lock and skips the
     *   rows another transaction has locked, so it never waits for a writer (JT-4, JT-7).
     */

    /** A table's name: a plain SQL identifier, so that it can be written into statements as is. */
    private static final Pattern NAME = Pattern.compile("[a-z_][a-z0-9_]{0,40}");
    /** The longest failure text a dead letter keeps. */
    static final int MAX_ERROR = 2_000;

    private final Store store;
    private final Terms terms;
    private final HeldClaims held = new HeldClaims();
    private final SettlementWriter writer;
    private final TableSettler settler;
    private final Renewal renewal;
    /** The streams of claims not yet closed: added to by claims(), removed by a stream's close, closed by close(). */
    private final Set<Claims> streams = ConcurrentHashMap.newKeySet();
    /** Set once, by close() on any thread; read by claims() and by the settler on the pool's settler thread. */
    private volatile boolean closed;

    private JobTable(Store store, Terms terms) {
        this.store = store;
        this.terms = terms;
        this.writer = new SettlementWriter(store, terms.owner(), held);
        this.settler = new TableSettler(store, writer, held, () -> closed, terms.owner());
        this.renewal = new Renewal(store, terms, held);
    }

    /**
     * Starts describing a job table on a database.
     *
     * @param dataSource where connections come from; its dialect is found when the table is opened
     * @return a builder with the defaults: table {@code drain_job}, lease 30 s, claims of 64 rows,
     *     3 lost leases before a dead letter, statements that time out after 30 s
     */
    public static Builder on(DataSource dataSource) {
        return new Builder(Objects.requireNonNull(dataSource, "dataSource"));
    }

    /** {@return this table's owner: a name of its own, written into the rows it claims} */
    public String owner() {
        return terms.owner();
    }

    /** {@return the dialect of the table's database} */
    public Dialect dialect() {
        return store.dialect;
    }

    /**
     * Adds jobs, {@code ready}, in one transaction.
     *
     * @param payloads what each job carries
     * @throws SQLException if the database did not take them (then it took none)
     */
    public void enqueue(List<String> payloads) throws SQLException {
        try (Connection c = store.connect()) {
            c.setAutoCommit(false);
            try (PreparedStatement insert = store.prepare(c, store.sql.insert)) {
                for (String payload : payloads) {
                    insert.setString(1, Objects.requireNonNull(payload, "payload"));
                    insert.addBatch();
                }
                insert.executeBatch();
                c.commit();
            } catch (SQLException | RuntimeException e) {
                Store.rollback(c, e);
                throw e;
            }
        }
    }

    /**
     * The jobs to run, claimed from the table as the pool pulls them (JT-2, JT-3), for
     * {@link dev.drain.pool.WorkerPool#run(Stream)}: the stream ends when a claim finds no
     * claimable row, and closing it releases what was claimed but not pulled (JT-6). A failed
     * claim throws {@link JobTableException} from the stream, which ends the run. Give it to the
     * pool as it is: a row that an intermediate operation ({@code filter}, {@code skip}) drops is
     * neither settled nor released, and waits for its lease.
     *
     * @return a stream of claims, to be consumed by one thread at a time (the pool's producer)
     * @throws IllegalStateException if this table is closed
     */
    public Stream<Job> claims() {
        if (closed) {
            throw new IllegalStateException("the job table " + store.table + " is closed");
        }
        Claims claims = new Claims(store, terms, held, renewal, writer, streams::remove);
        streams.add(claims);
        return StreamSupport.stream(Spliterators.spliteratorUnknownSize(claims, Spliterator.ORDERED | Spliterator.NONNULL), false)
                .onClose(claims::close);
    }

    /**
     * The settler to give the pool ({@code WorkerPool.Builder.settler}): it writes each batch of
     * settlements in one transaction, every write fenced by owner and claim (JT-5, JT-7).
     *
     * @return this table's settler (always the same one)
     */
    public Settler<Job> settler() {
        return settler;
    }

    /** {@return how many settlements matched no row, because the row had been claimed again or settled (JT-5)} */
    public long staleWrites() {
        return writer.staleWrites();
    }

    /**
     * Counts the rows in each state.
     *
     * @return the count of every state, zero for a state no row is in
     * @throws SQLException if the database did not answer
     */
    public Map<JobState, Long> counts() throws SQLException {
        Map<JobState, Long> counts = new EnumMap<>(JobState.class);
        for (JobState state : JobState.values()) {
            counts.put(state, 0L);
        }
        try (Connection c = store.connect(); PreparedStatement p = store.prepare(c, store.sql.counts); ResultSet rows = p.executeQuery()) {
            while (rows.next()) {
                counts.put(JobState.valueOf(rows.getString(1).toUpperCase(Locale.ROOT)), rows.getLong(2));
            }
        }
        return counts;
    }

    /**
     * Closes the open streams of claims (releasing what they claimed and did not hand out, JT-6),
     * stops renewing leases and closes the settler's connection; afterwards {@link #claims()} and
     * the settler throw {@link IllegalStateException}. Rows still held stay {@code running} until
     * their lease expires (JT-3): closing does not know whether their handlers are done. Idempotent.
     */
    @Override
    public void close() {
        closed = true;
        for (Claims stream : List.copyOf(streams)) {
            stream.close(); // releases what it claimed and was not pulled (JT-6)
        }
        renewal.stop();
        settler.close();
    }

    /** Stops renewing leases, as a process that stalls does, and nothing else: a test seam. */
    void stopRenewing() {
        renewal.stop();
    }

    /** {@return how many lease renewals have failed (the database was unreachable), for tests} */
    long renewalFailures() {
        return renewal.failures();
    }

    /** {@return how many renewals have been committed, for tests} */
    long renewals() {
        return renewal.renewals();
    }

    /**
     * How to open a job table. Every setting has a default; {@link #open()} checks the database.
     */
    public static final class Builder {
        private final DataSource dataSource;
        // The settings below: owned by the thread that builds (a builder is not for sharing), and
        // copied into the table's immutable Store and Terms by open().
        private String table = "drain_job";
        private String ownerPrefix = "drain";
        private Duration lease = Duration.ofSeconds(30);
        private int claimBatch = 64;
        private int maxLostLeases = 3;
        private Duration queryTimeout = Duration.ofSeconds(30);

        private Builder(DataSource dataSource) {
            this.dataSource = dataSource;
        }

        /**
         * The table's name.
         *
         * @param name a lower-case SQL identifier of at most 41 characters
         * @return this builder
         */
        public Builder table(String name) {
            if (!NAME.matcher(Objects.requireNonNull(name, "name")).matches()) {
                throw new IllegalArgumentException("a table name is a lower-case SQL identifier ([a-z_][a-z0-9_]*, at most 41), not "
                        + name);
            }
            this.table = name;
            return this;
        }

        /**
         * The first part of the owner's name, which a UUID follows (to tell processes apart in the rows).
         *
         * @param prefix letters, digits, dots and dashes, at most 40
         * @return this builder
         */
        public Builder ownerPrefix(String prefix) {
            if (!Objects.requireNonNull(prefix, "prefix").matches("[A-Za-z0-9.-]{1,40}")) {
                throw new IllegalArgumentException("an owner prefix is 1 to 40 letters, digits, dots or dashes, not " + prefix);
            }
            this.ownerPrefix = prefix;
            return this;
        }

        /**
         * How long a claim holds a row without a renewal (JT-3, JT-4): the longest a dead claimant's
         * rows wait before another claim takes them (decision 0041).
         *
         * @param lease at least 100 ms
         * @return this builder
         */
        public Builder lease(Duration lease) {
            if (Objects.requireNonNull(lease, "lease").compareTo(Duration.ofMillis(100)) < 0) {
                throw new IllegalArgumentException("a lease is at least 100 ms, not " + lease);
            }
            this.lease = lease;
            return this;
        }

        /**
         * How many rows a claim takes at most (JT-2): more rows per transaction, and more held in
         * memory that a killed process leaves to their leases (decision 0041).
         *
         * @param rows 1 to 10,000 (64 by default)
         * @return this builder
         */
        public Builder claimBatch(int rows) {
            if (rows < 1 || rows > 10_000) {
                throw new IllegalArgumentException("a claim takes 1 to 10,000 rows, not " + rows);
            }
            this.claimBatch = rows;
            return this;
        }

        /**
         * How many leases a row may lose before it is dead-lettered instead of claimed again (JT-3).
         *
         * @param leases at least 1
         * @return this builder
         */
        public Builder maxLostLeases(int leases) {
            if (leases < 1) {
                throw new IllegalArgumentException("maxLostLeases is at least 1, not " + leases);
            }
            this.maxLostLeases = leases;
            return this;
        }

        /**
         * How long one statement may take before the driver gives up on it (a claim then fails, a
         * settlement batch is unsettled).
         *
         * @param timeout at least a second
         * @return this builder
         */
        public Builder queryTimeout(Duration timeout) {
            if (Objects.requireNonNull(timeout, "timeout").compareTo(Duration.ofSeconds(1)) < 0) {
                throw new IllegalArgumentException("a query timeout is at least a second, not " + timeout);
            }
            this.queryTimeout = timeout;
            return this;
        }

        /**
         * Connects, finds the dialect, and creates the table and its index if they are missing
         * (JT-1). Nothing is started: the lease renewer starts with the first claim.
         *
         * @return the open table
         * @throws SQLException if the database cannot be reached, is not of a known dialect, or
         *     refuses the table; its message names the table and the cause
         */
        public JobTable open() throws SQLException {
            Store store = Store.open(dataSource, table, queryTimeout);
            return new JobTable(store, new Terms(ownerPrefix + "-" + UUID.randomUUID(), lease, claimBatch, maxLostLeases));
        }
    }
}
