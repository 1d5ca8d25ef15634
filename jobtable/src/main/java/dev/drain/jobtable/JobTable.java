package dev.drain.jobtable;

import dev.drain.pool.ItemFailure;
import dev.drain.pool.Settlement;
import dev.drain.pool.Settler;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Objects;
import java.util.Spliterator;
import java.util.Spliterators;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
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
    /** A table's name: a plain SQL identifier, so that it can be written into statements as is. */
    private static final Pattern NAME = Pattern.compile("[a-z_][a-z0-9_]{0,40}");
    /** The longest failure text a dead letter keeps. */
    static final int MAX_ERROR = 2_000;

    private final DataSource dataSource;
    private final Dialect dialect;
    private final String table;
    private final String owner;
    private final Duration lease;
    private final int claimBatch;
    private final int maxLostLeases;
    private final int queryTimeoutSeconds;
    private final Sql sql;
    private final AtomicLong staleWrites = new AtomicLong();
    /**
     * The claims this table holds and has not settled or released: the only rows it renews (JT-4).
     * A claim whose settlement failed leaves it, so that its lease runs out.
     */
    private final Set<Job> held = ConcurrentHashMap.newKeySet();
    /** The streams of claims not yet closed; closed by {@link #close()}. */
    private final Set<Claims> streams = ConcurrentHashMap.newKeySet();
    /** Set by {@link #close()}. */
    private volatile boolean closed;
    private final TableSettler settler = new TableSettler();
    private final Renewal renewal;

    private JobTable(Builder builder, Dialect dialect) {
        this.dataSource = builder.dataSource;
        this.dialect = dialect;
        this.table = builder.table;
        this.owner = builder.ownerPrefix + "-" + UUID.randomUUID();
        this.lease = builder.lease;
        this.claimBatch = builder.claimBatch;
        this.maxLostLeases = builder.maxLostLeases;
        this.queryTimeoutSeconds = (int) Math.max(1, builder.queryTimeout.toSeconds());
        this.sql = new Sql(table, dialect.nowMillis, dialect.firstUnlocked);
        this.renewal = new Renewal();
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
        return owner;
    }

    /** {@return the dialect of the table's database} */
    public Dialect dialect() {
        return dialect;
    }

    /**
     * Adds jobs, {@code ready}, in one transaction.
     *
     * @param payloads what each job carries
     * @throws SQLException if the database did not take them (then it took none)
     */
    public void enqueue(List<String> payloads) throws SQLException {
        try (Connection c = connect()) {
            c.setAutoCommit(false);
            try (PreparedStatement insert = prepare(c, sql.insert)) {
                for (String payload : payloads) {
                    insert.setString(1, Objects.requireNonNull(payload, "payload"));
                    insert.addBatch();
                }
                insert.executeBatch();
                c.commit();
            } catch (SQLException | RuntimeException e) {
                rollback(c, e);
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
        Claims claims = new Claims();
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
        return staleWrites.get();
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
        try (Connection c = connect(); PreparedStatement p = prepare(c, sql.counts); ResultSet rows = p.executeQuery()) {
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

    private Connection connect() throws SQLException {
        Connection c = dataSource.getConnection();
        if (c == null) {
            throw new SQLException("the data source gave no connection");
        }
        return c;
    }

    private PreparedStatement prepare(Connection c, String statement) throws SQLException {
        PreparedStatement p = c.prepareStatement(statement);
        p.setQueryTimeout(queryTimeoutSeconds);
        return p;
    }

    private static void rollback(Connection c, Throwable cause) {
        try {
            c.rollback();
        } catch (SQLException | RuntimeException e) {
            cause.addSuppressed(e);
        }
    }

    private static void closeQuietly(@Nullable Connection c, @Nullable Throwable cause) {
        if (c == null) {
            return;
        }
        try {
            c.close();
        } catch (SQLException | RuntimeException e) {
            if (cause != null) {
                cause.addSuppressed(e);
            }
        }
    }

    /** Waits for {@code t} to end, if there is one, whatever interrupts the caller; keeps the caller's interrupt. */
    private static void joinUninterruptibly(@Nullable Thread t) {
        if (t == null || t == Thread.currentThread()) {
            return;
        }
        boolean interrupted = false;
        while (true) {
            try {
                t.join(); // its task has ended: it only has to leave the executor's loop
                break;
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    /** A failure's text for a dead letter: never throws, at most {@link #MAX_ERROR} characters. */
    static String describe(ItemFailure<?> failure) {
        String text;
        try {
            text = failure.cause().toString();
        } catch (Throwable e) { // a cause's toString or getMessage is the user's code, and may throw anything
            text = failure.cause().getClass().getName() + " (whose toString() threw " + e.getClass().getName() + ")";
        }
        text = ("after " + failure.attempts() + " attempts: " + text).replace('\u0000', '\ufffd'); // Postgres text holds no NUL
        if (text.length() <= MAX_ERROR) {
            return text;
        }
        int end = MAX_ERROR - 1;
        if (Character.isHighSurrogate(text.charAt(end - 1))) {
            end--; // never half a character
        }
        return text.substring(0, end) + "…";
    }

    /**
     * One stream of claims: the rows it has claimed and not yet handed out, and its connection.
     * Its methods are called by the pool's producer, and {@link #close} by whichever thread closes
     * the source; the lock keeps them apart.
     *
     * <p>Every statement runs on a platform thread of the stream's own ({@link #shielded}), never on
     * the caller's: the pool interrupts its producer to stop it, and an interrupt closes a virtual
     * thread's socket (and an H2 file) mid-statement, after which nobody knows whether a claim was
     * committed, and a release cannot be written at all. The caller waits for the statement
     * whatever interrupts it (at most the statement timeout), then keeps its interrupt.
     */
    private final class Claims implements Iterator<Job> {
        private final ReentrantLock lock = new ReentrantLock();
        /** Runs this stream's statements; created by the first, closed by close; guarded by lock. */
        private @Nullable ExecutorService statements;
        /** The one thread of {@link #statements}, which close joins; guarded by lock. */
        private @Nullable Thread statementsThread;
        /** Claimed, not yet pulled; guarded by lock. */
        private final ArrayDeque<Job> unpulled = new ArrayDeque<>();
        /**
         * Open once the first claim ran, null after close; guarded by lock, and used only on the
         * statements' thread while the lock's holder waits for it.
         */
        private @Nullable Connection connection;
        /** A claim found nothing, or the stream was closed; guarded by lock. */
        private boolean exhausted;
        /** The last claim dead-lettered rows and took none; guarded by lock (set on the statements' thread). */
        private boolean buriedOnly;

        Claims() {
            if (closed) {
                throw new IllegalStateException("the job table " + table + " is closed");
            }
            streams.add(this);
        }

        @Override
        public boolean hasNext() {
            lock.lock();
            try {
                // A claim that only dead-lettered rows (JT-3) found claimable rows: claim again.
                while (unpulled.isEmpty() && !exhausted) {
                    buriedOnly = false;
                    shielded(this::claim);
                    exhausted = unpulled.isEmpty() && !buriedOnly;
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

        /**
         * Runs {@code work} on this stream's platform thread and waits for it to end, interrupted
         * or not; the caller's interrupt is kept. Called with the lock held.
         */
        private void shielded(Runnable work) {
            if (statements == null) {
                ThreadFactory named = Thread.ofPlatform().daemon().name("drain-jobtable-claims-" + table).factory();
                statements = Executors.newSingleThreadExecutor(task -> {
                    Thread t = named.newThread(task);
                    statementsThread = t; // on the lock holder's thread: the executor starts it from submit
                    return t;
                });
            }
            Future<?> done = statements.submit(work);
            boolean interrupted = false;
            try {
                while (true) {
                    try {
                        done.get();
                        return;
                    } catch (InterruptedException e) {
                        interrupted = true; // the statement is under way: its outcome must be known
                    } catch (ExecutionException e) {
                        Throwable cause = Objects.requireNonNull(e.getCause(), "a statement failed without a cause");
                        if (cause instanceof RuntimeException r) {
                            throw r;
                        }
                        if (cause instanceof Error error) {
                            throw error;
                        }
                        throw new JobTableException("a statement of " + table + " failed: " + cause, cause);
                    }
                }
            } finally {
                if (interrupted) {
                    Thread.currentThread().interrupt();
                }
            }
        }

        /** Claims the next batch into unpulled (JT-2, JT-3), in one transaction; on the statements' thread. */
        private void claim() {
            Connection c = null;
            try {
                if (connection == null) {
                    connection = connect();
                    connection.setAutoCommit(false);
                }
                c = connection;
                List<Job> claimed = new ArrayList<>();
                boolean buried = false;
                try (PreparedStatement select = prepare(c, sql.claimable);
                        PreparedStatement take = prepare(c, sql.take);
                        PreparedStatement bury = prepare(c, sql.buryLost)) {
                    select.setInt(1, claimBatch);
                    try (ResultSet rows = select.executeQuery()) {
                        while (rows.next()) {
                            long id = rows.getLong(1);
                            String payload = rows.getString(2);
                            boolean expired = rows.getString(3).equals("running");
                            int claim = rows.getInt(4) + 1;
                            int lost = rows.getInt(5) + (expired ? 1 : 0);
                            if (expired && lost >= maxLostLeases) {
                                bury.setInt(1, lost);
                                bury.setString(2, "lost " + lost + " leases: its claimants died or lost the database"
                                        + " before settling it, " + lost + " times");
                                bury.setLong(3, id);
                                bury.addBatch();
                                buried = true;
                            } else {
                                take.setString(1, owner);
                                take.setInt(2, claim);
                                take.setInt(3, lost);
                                take.setLong(4, lease.toMillis());
                                take.setLong(5, id);
                                take.addBatch();
                                claimed.add(new Job(id, payload, claim));
                            }
                        }
                    }
                    if (!claimed.isEmpty()) {
                        take.executeBatch();
                    }
                    if (buried) {
                        bury.executeBatch();
                    }
                }
                c.commit();
                JobTable.this.held.addAll(claimed);
                if (!claimed.isEmpty()) {
                    renewal.start();
                }
                unpulled.addAll(claimed);
                buriedOnly = claimed.isEmpty() && buried;
            } catch (SQLException | RuntimeException e) {
                if (c != null) {
                    rollback(c, e);
                }
                closeQuietly(connection, e); // a broken connection is not used again
                connection = null;
                throw new JobTableException("could not claim jobs from " + table + ": " + e.getMessage(), e);
            }
        }

        /** Releases what was claimed and not pulled (JT-6), then closes the connection. Idempotent. */
        void close() {
            lock.lock();
            try {
                exhausted = true;
                streams.remove(this);
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
                    if (statements != null) {
                        shielded(() -> closeQuietly(connection, null));
                        statements.close(); // waits for its task to end, not for its thread to die
                        statements = null;
                        joinUninterruptibly(statementsThread); // so that no thread outlives close()
                        statementsThread = null;
                    }
                    connection = null;
                } finally {
                    lock.unlock();
                }
            }
        }

        /** Writes the releases of {@link #close}; on the statements' thread. */
        private void release(List<Settlement<Job>> releases) {
            try {
                if (connection == null) {
                    connection = connect();
                    connection.setAutoCommit(false);
                }
                write(connection, releases);
            } catch (SQLException | RuntimeException e) {
                throw new JobTableException("could not release " + releases.size() + " claimed jobs of " + table
                        + " that the pool did not pull (their leases will expire): " + e.getMessage(), e);
            }
        }
    }

    /**
     * Writes settlements in one transaction on {@code c} (JT-5, JT-7), counting those that matched
     * no row; rolls back and throws if any write fails.
     */
    private void write(Connection c, List<Settlement<Job>> unordered) throws SQLException {
        // One statement for every kind, its rows in id order: the order in which the claims lock
        // rows, so that two writers of the same rows (a late claimant's and the new one's) wait
        // for each other instead of deadlocking. The renewal never waits: it skips locked rows.
        List<Settlement<Job>> batch = new ArrayList<>(unordered);
        batch.sort(Comparator.comparingLong(settlement -> settlement.item().id()));
        try (PreparedStatement settle = prepare(c, sql.settle)) {
            for (Settlement<Job> settlement : batch) {
                Job job = settlement.item();
                switch (settlement) {
                    case Settlement.Succeeded<Job> _ -> {
                        settle.setString(1, "done");
                        settle.setNull(2, java.sql.Types.VARCHAR);
                        settle.setBoolean(3, true);
                    }
                    case Settlement.Failed<Job> failed -> {
                        settle.setString(1, "dead");
                        settle.setString(2, describe(failed.failure()));
                        settle.setBoolean(3, true);
                    }
                    case Settlement.Released<Job> _ -> {
                        settle.setString(1, "ready");
                        settle.setNull(2, java.sql.Types.VARCHAR);
                        settle.setBoolean(3, false);
                    }
                }
                settle.setLong(4, job.id());
                settle.setString(5, owner);
                settle.setInt(6, job.claim());
                settle.addBatch();
            }
            long matched = batch.isEmpty() ? 0 : rowsChanged(settle.executeBatch());
            c.commit();
            staleWrites.addAndGet(batch.size() - matched);
        } catch (SQLException | RuntimeException e) {
            rollback(c, e);
            throw e;
        } finally {
            forget(batch);
        }
    }

    /**
     * Stops renewing the rows of {@code batch}, settled or not: a row whose settlement failed keeps
     * its claim until the lease runs out, and then the next claim gets it (JT-7).
     */
    private void forget(List<Settlement<Job>> batch) {
        for (Settlement<Job> settlement : batch) {
            held.remove(settlement.item());
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

    /** The settler the pool's settler thread calls; the lock keeps its connection to one call at a time. */
    private final class TableSettler implements Settler<Job> {
        private final ReentrantLock lock = new ReentrantLock();
        /** Open after the first batch, null after a failure or close; guarded by lock. */
        private @Nullable Connection connection;

        @Override
        public void settle(List<Settlement<Job>> batch) throws SQLException {
            if (closed) {
                forget(batch);
                throw new IllegalStateException("the job table " + table + " is closed: " + batch.size()
                        + " settlements not written (their rows' leases run out)");
            }
            lock.lock();
            try {
                if (connection == null) {
                    connection = connect();
                    connection.setAutoCommit(false);
                }
                write(connection, batch);
            } catch (SQLException | RuntimeException e) {
                closeQuietly(connection, e); // a broken connection is not used again
                connection = null;
                throw e;
            } finally {
                forget(batch); // settled or not, no longer renewed (JT-7)
                lock.unlock();
            }
        }

        void close() {
            lock.lock();
            try {
                closeQuietly(connection, null);
                connection = null;
            } finally {
                lock.unlock();
            }
        }

        @Override
        public String toString() {
            return "the settler of " + table + " (owner " + owner + ")";
        }
    }

    /**
     * The thread that renews this owner's leases (JT-4): started by the first claim that took a
     * row, it extends every {@code running} row of this owner to now + lease, every third of a
     * lease, until {@link #stop}. A renewal that fails is tried again at the next tick; the rows'
     * leases run out if the database stays away.
     */
    private final class Renewal {
        private final ReentrantLock lock = new ReentrantLock();
        /** Signalled by stop. */
        private final Condition isStopped = lock.newCondition();
        /** Guarded by lock. */
        private @Nullable Thread thread;
        /** Guarded by lock. */
        private boolean stopped;
        /** Renewals that failed (the database unreachable); read by tests. */
        private final AtomicLong failures = new AtomicLong();
        /** Renewals committed; read by tests. */
        private final AtomicLong renewals = new AtomicLong();

        void start() {
            lock.lock();
            try {
                if (thread == null && !stopped) {
                    thread = Thread.ofPlatform().daemon().name("drain-jobtable-lease-" + table).start(this::renewUntilStopped);
                }
            } finally {
                lock.unlock();
            }
        }

        void stop() {
            Thread t;
            lock.lock();
            try {
                stopped = true;
                isStopped.signalAll();
                t = thread;
            } finally {
                lock.unlock();
            }
            if (t != null && t != Thread.currentThread()) {
                boolean interrupted = false;
                while (true) {
                    try {
                        t.join(); // the renewer ends within one statement's timeout of the signal
                        break;
                    } catch (InterruptedException e) {
                        interrupted = true; // keep waiting: a renewer left running would outlive the table
                    }
                }
                if (interrupted) {
                    Thread.currentThread().interrupt();
                }
            }
        }

        private void renewUntilStopped() {
            Connection c = null;
            long interval = Math.max(1, lease.toNanos() / 3);
            try {
                while (awaitTick(interval)) {
                    try {
                        if (c == null) {
                            c = connect();
                            c.setAutoCommit(false);
                        }
                        renew(c);
                    } catch (SQLException | RuntimeException e) {
                        failures.incrementAndGet();
                        if (c != null) {
                            rollback(c, e);
                        }
                        closeQuietly(c, null);
                        c = null;
                    }
                }
            } finally {
                closeQuietly(c, null);
            }
        }

        /**
         * Extends the lease of every row this owner holds, in one transaction: it locks them in id
         * order and skips those another transaction has locked (a batch of settlements writing
         * them, which needs no renewal), so that it never waits for, or deadlocks with, the
         * settler (JT-4).
         */
        private void renew(Connection c) throws SQLException {
            Map<Long, Integer> holding = new java.util.HashMap<>();
            for (Job job : held) {
                holding.put(job.id(), job.claim());
            }
            try (PreparedStatement owned = prepare(c, sql.held); PreparedStatement renew = prepare(c, sql.renew)) {
                owned.setString(1, owner);
                boolean any = false;
                try (ResultSet rows = owned.executeQuery()) {
                    while (rows.next()) {
                        Integer claim = holding.get(rows.getLong(1));
                        if (claim != null) { // a row this table still tracks, not one whose settlement failed
                            renew.setLong(1, lease.toMillis());
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

        /** Waits one interval; false once stopped. */
        private boolean awaitTick(long nanos) {
            lock.lock();
            try {
                long left = nanos;
                while (!stopped && left > 0) {
                    left = isStopped.awaitNanos(left);
                }
                return !stopped;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt(); // nobody interrupts it but the JVM's end: stop renewing
                return false;
            } finally {
                lock.unlock();
            }
        }
    }

    /** The statements, written once per table. */
    private static final class Sql {
        final String insert;
        final String claimable;
        final String take;
        final String buryLost;
        final String held;
        final String renew;
        final String settle;
        final String counts;

        Sql(String t, String now, String firstUnlocked) {
            String fence = " WHERE id = ? AND owner = ? AND claims = ? AND state = 'running'";
            insert = "INSERT INTO " + t + " (payload) VALUES (?)";
            claimable = "SELECT id, payload, state, claims, lost_leases FROM " + t
                    + " WHERE state = 'ready' OR (state = 'running' AND lease_until < " + now + ")"
                    + " ORDER BY id " + firstUnlocked;
            take = "UPDATE " + t + " SET state = 'running', owner = ?, claims = ?, lost_leases = ?, lease_until = "
                    + now + " + ? WHERE id = ?";
            buryLost = "UPDATE " + t + " SET state = 'dead', owner = NULL, lease_until = NULL, lost_leases = ?,"
                    + " last_error = ?, settled_at = " + now + " WHERE id = ?";
            held = "SELECT id FROM " + t + " WHERE owner = ? AND state = 'running' ORDER BY id FOR UPDATE SKIP LOCKED";
            renew = "UPDATE " + t + " SET lease_until = " + now + " + ? WHERE id = ? AND claims = ?";
            settle = "UPDATE " + t + " SET state = ?, last_error = COALESCE(CAST(? AS CHARACTER VARYING(" + MAX_ERROR
                    + ")), last_error), owner = NULL, lease_until = NULL, settled_at = CASE WHEN ? THEN " + now
                    + " ELSE settled_at END" + fence;
            counts = "SELECT state, COUNT(*) FROM " + t + " GROUP BY state";
        }
    }

    /** The table's definition, the same on every dialect. */
    static List<String> schema(String t) {
        return List.of(
                "CREATE TABLE IF NOT EXISTS " + t + " ("
                        + "id BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY, "
                        + "payload CHARACTER VARYING NOT NULL, "
                        + "state CHARACTER VARYING(8) NOT NULL DEFAULT 'ready', "
                        + "owner CHARACTER VARYING(80), "
                        + "claims INTEGER NOT NULL DEFAULT 0, "
                        + "lost_leases INTEGER NOT NULL DEFAULT 0, "
                        + "lease_until BIGINT, "
                        + "last_error CHARACTER VARYING(" + MAX_ERROR + "), "
                        + "settled_at BIGINT, "
                        + "CHECK (state IN ('ready', 'running', 'done', 'dead')))",
                "CREATE INDEX IF NOT EXISTS " + t + "_by_state ON " + t + " (state, id)");
    }

    /**
     * How to open a job table. Every setting has a default; {@link #open()} checks the database.
     */
    public static final class Builder {
        private final DataSource dataSource;
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
            try (Connection c = dataSource.getConnection()) {
                Dialect dialect = Dialect.of(c);
                c.setAutoCommit(true);
                try (Statement s = c.createStatement()) {
                    for (String ddl : schema(table)) {
                        s.execute(ddl);
                    }
                }
                return new JobTable(this, dialect);
            } catch (SQLException e) {
                throw new SQLException("cannot open the job table " + table + ": " + e.getMessage(), e.getSQLState(), e);
            }
        }
    }

    /** {@return how many lease renewals have failed (the database was unreachable), for tests} */
    long renewalFailures() {
        return renewal.failures.get();
    }

    /** {@return how many renewals have been committed, for tests} */
    long renewals() {
        return renewal.renewals.get();
    }
}
