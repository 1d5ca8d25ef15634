package dev.drain.jobtable;

import dev.drain.pool.Settler;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Types;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
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
import org.jspecify.annotations.Nullable;

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
 *       expired (its claimant died, or lost the database), or, on PostgreSQL, {@code running}
 *       under an owner whose session ended (a killed process's rows come back at once): a claim
 *       of such a row counts a lost lease, and a row that has lost {@code maxLostLeases} leases is dead-lettered
 *       instead of claimed again, so that a job that kills its process cannot kill every process
 *       that takes it; a row whose next lost lease would bury it is a suspect, and a table holds
 *       one suspect at a time, so that the jobs claimed beside a job that crashes its process are
 *       not buried with it;</li>
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
 *       {@code running} until their lease expires);</li>
 *   <li>JT-11: {@link #enqueue(Connection, List)} enqueues in the caller's transaction, and a
 *       payload comes back exactly as it was enqueued, or is refused;</li>
 *   <li>JT-12: a job enqueued with a run-at time, or released with a due time for its retry, is
 *       not claimed before it;</li>
 *   <li>JT-13: {@link #claimsUntilStopped()} waits for work (PostgreSQL's {@code LISTEN/NOTIFY},
 *       polling on H2) until the pool stops pulling.</li>
 * </ul>
 *
 * <p>JT-1: opening a table that is there only reads it: it never waits behind a transaction that
 * holds its rows.
 *
 * <p>Thread safety: every method may be called from any thread. Each stream of claims and the
 * settler use a connection of their own, taken from the data source when first needed and kept.
 */
public final class JobTable implements AutoCloseable {
    // The rooms of the table, their threads and their lock order: package-info.java.

    /** The longest failure text a dead letter keeps. */
    static final int MAX_ERROR = 2_000;

    private final Store store;
    private final Terms terms;
    /** Wakes the streams that wait for work (JT-13): signalled by enqueue, releases, the listener and a suspect's leaving. */
    private final WorkSignal signal = new WorkSignal();
    private final HeldClaims held = new HeldClaims(signal::signal);
    /** How many claims the streams have run: added to by each stream's statements thread, read by tests. */
    private final java.util.concurrent.atomic.LongAdder claimsRun = new java.util.concurrent.atomic.LongAdder();
    private final SettlementWriter writer;
    private final TableSettler settler;
    private final Renewal renewal;
    /** The owner's advisory lock on PostgreSQL (JT-3): taken before the first claim, ended by close. */
    private final Presence presence;
    private final Enqueuer enqueuer;
    private final QueueOperations operations;
    /** Hears other processes' new work on PostgreSQL (JT-13): started by the first waiting stream, stopped by close. */
    private final Listener listener;
    /** The streams of claims not yet closed: added to by claims(), removed by a stream's close, closed by close(). */
    private final Set<Claims> streams = ConcurrentHashMap.newKeySet();
    /** Set once, by close() on any thread; read by claims() and by the settler on the pool's settler thread. */
    private volatile boolean closed;

    JobTable(Store store, Terms terms) {
        this.store = store;
        this.terms = terms;
        this.writer = new SettlementWriter(store, terms.owner(), held, signal::signal);
        this.listener = new Listener(store, terms, signal);
        this.enqueuer = new Enqueuer(store, signal::signal);
        this.presence = new Presence(store, terms.owner());
        this.operations = new QueueOperations(store, signal::signal);
        this.settler = new TableSettler(store, writer, held, () -> closed, terms.owner());
        this.renewal = new Renewal(store, terms, held, presence);
    }

    /**
     * Starts describing a job table on a database.
     *
     * @param dataSource where connections come from; its dialect is found when the table is opened
     * @return a builder with the defaults: table {@code drain_job}, lease 30 s, claims of 64 rows,
     *     3 lost leases before a dead letter, statements that time out after 30 s
     */
    public static JobTableBuilder on(DataSource dataSource) {
        return new JobTableBuilder(Objects.requireNonNull(dataSource, "dataSource"));
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
     * Adds jobs, {@code ready} at once, in one transaction of a connection of the table's own
     * (JT-11).
     *
     * @param payloads what each job carries: a well-formed string without NUL, kept exactly
     * @return the new rows' ids, in the order of {@code payloads}
     * @throws IllegalArgumentException if a payload is one the table cannot keep exactly (then
     *     nothing was written)
     * @throws SQLException if the database did not take them (then it took none)
     */
    public List<Long> enqueue(List<String> payloads) throws SQLException {
        return enqueuer.inOwnTransaction(payloads, null);
    }

    /**
     * Adds jobs that no claim takes before {@code runAt} (JT-12), in one transaction of a
     * connection of the table's own (JT-11). The database's clock decides when that is, as it
     * does for leases.
     *
     * @param payloads what each job carries: a well-formed string without NUL, kept exactly
     * @param runAt the earliest time a claim may take them
     * @return the new rows' ids, in the order of {@code payloads}
     * @throws IllegalArgumentException if a payload is one the table cannot keep exactly (then
     *     nothing was written)
     * @throws SQLException if the database did not take them (then it took none)
     */
    public List<Long> enqueue(List<String> payloads, Instant runAt) throws SQLException {
        return enqueuer.inOwnTransaction(payloads, Objects.requireNonNull(runAt, "runAt"));
    }

    /**
     * Adds jobs, {@code ready} at once, on the caller's connection, in the caller's transaction
     * (JT-11): the jobs exist if and only if that transaction commits, so a job is enqueued with
     * the data it is about, or not at all. Nothing is committed, rolled back or closed here, and
     * the connection's settings are left as they are; a claim sees the jobs once the caller
     * commits. The connection must be to this table's database.
     *
     * @param connection the caller's connection, in the transaction the jobs belong to
     * @param payloads what each job carries: a well-formed string without NUL, kept exactly
     * @return the new rows' ids, in the order of {@code payloads}
     * @throws IllegalArgumentException if a payload is one the table cannot keep exactly (then
     *     nothing was written)
     * @throws SQLException if the database did not take them: the caller's transaction then holds
     *     none of them, or is failed (on PostgreSQL), and the caller rolls it back
     */
    public List<Long> enqueue(Connection connection, List<String> payloads) throws SQLException {
        return enqueuer.inCallersTransaction(Objects.requireNonNull(connection, "connection"), payloads, null);
    }

    /**
     * Adds jobs that no claim takes before {@code runAt} (JT-12) on the caller's connection, in the
     * caller's transaction, as {@link #enqueue(Connection, List)} does (JT-11).
     *
     * @param connection the caller's connection, in the transaction the jobs belong to
     * @param payloads what each job carries: a well-formed string without NUL, kept exactly
     * @param runAt the earliest time a claim may take them, on the database's clock
     * @return the new rows' ids, in the order of {@code payloads}
     * @throws IllegalArgumentException if a payload is one the table cannot keep exactly (then
     *     nothing was written)
     * @throws SQLException if the database did not take them, as {@link #enqueue(Connection, List)} says
     */
    public List<Long> enqueue(Connection connection, List<String> payloads, Instant runAt) throws SQLException {
        return enqueuer.inCallersTransaction(Objects.requireNonNull(connection, "connection"), payloads,
                Objects.requireNonNull(runAt, "runAt"));
    }

    /**
     * The jobs to run, claimed from the table as the pool pulls them (JT-2, JT-3), for
     * {@link dev.drain.pool.WorkerPool#run(Stream)}: the stream ends when a claim finds nothing it
     * may take (a table holds one suspect at a time, JT-3: the others are left to the next stream),
     * and closing it releases what was claimed but not pulled (JT-6). A service's stream, which
     * waits for work instead, is {@link #claimsUntilStopped()}. A failed
     * claim throws {@link JobTableException} from the stream, which ends the run. Give it to the
     * pool as it is: a row that an intermediate operation ({@code filter}, {@code skip}) drops is
     * neither settled nor released: the table holds it, renewing its lease, until it is closed.
     *
     * @return a stream of claims, to be consumed by one thread at a time (the pool's producer)
     * @throws IllegalStateException if this table is closed
     */
    public Stream<Job> claims() {
        return stream(false);
    }

    /**
     * The jobs to run, as {@link #claims()} hands them out, but waiting for work instead of ending
     * when a claim finds nothing (JT-13): a service's stream, which ends only when the pool stops
     * pulling (a stop, a deadline, an abort: the pool interrupts its producer, and the wait ends
     * at once) or the stream or the table is closed. A job enqueued by this table is claimed at
     * once; one enqueued or released by another process is heard through PostgreSQL's
     * {@code LISTEN/NOTIFY}, and on H2, or while the notifications cannot be had, found by a claim
     * every {@code pollInterval} (1 s by default), which is also when a scheduled job that came due
     * (JT-12), or a dead claimant's row whose lease ran out (JT-3), is found.
     *
     * @return a stream of claims that waits for work, to be consumed by one thread at a time (the
     *     pool's producer)
     * @throws IllegalStateException if this table is closed
     */
    public Stream<Job> claimsUntilStopped() {
        if (store.dialect == Dialect.POSTGRES && !closed) {
            listener.start();
        }
        return stream(true);
    }

    private Stream<Job> stream(boolean waiting) {
        Claims claims = new Claims(store, terms, held, renewal, writer, presence, signal, waiting, claimsRun::increment,
                streams::remove);
        // Registered before the check: a close() that set the flag after this check finds the
        // stream among the open ones, and closes it; one that set it before, this check sees.
        streams.add(claims);
        if (closed) {
            claims.close();
            throw new IllegalStateException("the job table " + store.table + " is closed");
        }
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

    /**
     * {@return the operations on this table's queue (JT-14)}: a job and its failure, requeueing
     * dead jobs, purging done ones, and the backlog by state. Each runs on a connection of the
     * caller's thread; they work on a closed table too.
     */
    public QueueOperations operations() {
        return operations;
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
     * their lease expires (JT-3), on H2; on PostgreSQL, closing ends the owner's session, and they
     * are claimable at once: close the table after its run, never under it. Idempotent.
     */
    @Override
    public void close() {
        closed = true;
        for (Claims stream : List.copyOf(streams)) {
            stream.close(); // releases what it claimed and was not pulled (JT-6)
        }
        renewal.stop();
        listener.stop();
        settler.close();
        presence.close(); // last: on PostgreSQL, the rows still held are claimable at once from here
    }

    /** {@return "job table NAME (DIALECT, owner OWNER, lease L, claims of N[, closed])"} */
    @Override
    public String toString() {
        return "job table " + store.table + " (" + store.dialect + ", owner " + terms.owner() + ", lease " + terms.lease() + ", claims of "
                + terms.claimBatch() + (closed ? ", closed)" : ")");
    }

    /** Stops renewing leases, as a process that stalls does, and nothing else: a test seam. */
    void stopRenewing() {
        renewal.stop();
    }

    /** {@return how many lease renewals have failed (the database was unreachable), for tests} */
    long renewalFailures() {
        return renewal.failures();
    }

    /** {@return how many claims this table's streams have run, for tests} */
    long claimsRun() {
        return claimsRun.sum();
    }

    /** {@return how many streams of this table wait for work now, for tests} */
    int streamsWaiting() {
        return signal.waiting();
    }

    /** {@return how many times the listener lost its connection or could not have one, for tests} */
    long listenerOutages() {
        return listener.outages();
    }

    /** {@return how many renewals have been committed, for tests} */
    long renewals() {
        return renewal.renewals();
    }
}
