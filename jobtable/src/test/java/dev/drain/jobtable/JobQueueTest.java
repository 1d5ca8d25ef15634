package dev.drain.jobtable;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.drain.pool.Settlement;
import dev.drain.support.Bounds;
import dev.drain.support.Waits;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * JT-1, JT-3, JT-11: the table as a job queue a service runs on: opening it beside live
 * transactions, payloads kept exactly or refused, enqueue in the caller's transaction, one
 * suspect per claimant, and a presence that is kept while no claim runs. On both dialects.
 */
@ParameterizedClass
@EnumSource(Dialect.class)
class JobQueueTest extends OnEveryDialect {
    JobQueueTest(Dialect dialect) {
        super(dialect);
    }

    /**
     * JT-1: opening a table that exists takes no lock that waits for a writer: it returns while
     * another transaction holds a row of it (PostgreSQL's {@code CREATE INDEX IF NOT EXISTS} takes
     * a table lock that waits for every open writer, and stalls the pools behind it).
     */
    @Test
    void openingAnExistingTableWaitsForNoOpenTransaction() throws Exception {
        JobTable live = open(JobTable.on(db));
        live.enqueue(Rows.payloads(3));
        try (Connection writer = db.getConnection(); ExecutorService opener = Executors.newSingleThreadExecutor()) {
            writer.setAutoCommit(false);
            try (PreparedStatement hold = writer.prepareStatement("UPDATE " + table + " SET lease_until = lease_until WHERE id = 1")) {
                hold.executeUpdate(); // the row stays locked until the rollback below
            }
            Future<JobTable> opening = opener.submit(() -> open(JobTable.on(db).queryTimeout(Duration.ofSeconds(60))));
            try {
                assertThat(opening).as("open() beside a transaction that holds a row").succeedsWithin(Bounds.WAIT);
            } finally {
                writer.rollback(); // lets a waiting open() through, so that the executor's close returns
            }
        }
        assertThat(live.counts()).containsEntry(JobState.READY, 3L);
    }

    /** JT-1: a table of that name without a job table's columns fails open(), naming the table and the columns, and is left as it was. */
    @Test
    void aTableWithoutTheColumnsFailsToOpen() throws SQLException {
        try (Connection c = db.getConnection(); java.sql.Statement s = c.createStatement()) {
            s.execute("CREATE TABLE " + table + " (id BIGINT PRIMARY KEY, payload CHARACTER VARYING)");
        }
        assertThatThrownBy(() -> open(JobTable.on(db))).isInstanceOf(SQLException.class)
                .hasMessageStartingWith("cannot open the job table " + table + ": the table exists without the columns")
                .hasMessageContaining("lost_leases");
    }

    /** JT-11: a payload the table cannot keep exactly (a lone surrogate, a NUL) is refused before anything is written, with its position. */
    @Test
    void aPayloadTheTableCannotKeepIsRefusedAndNothingIsWritten() throws SQLException {
        JobTable t = open(JobTable.on(db));
        assertThatThrownBy(() -> t.enqueue(List.of("fine", "lone \ud800 high"))).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("payload 1 cannot be kept exactly: a lone surrogate U+D800 at 5 (nothing was enqueued)");
        assertThatThrownBy(() -> t.enqueue(List.of("low \udc00 first"))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("a lone surrogate U+DC00 at 4");
        assertThatThrownBy(() -> t.enqueue(List.of("a\u0000b"))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("a NUL at 1");
        assertThatThrownBy(() -> t.enqueue(java.util.Arrays.asList("fine", null))).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("payload 1 is null (nothing was enqueued)");
        assertThatThrownBy(() -> t.enqueue(List.of("never"), java.time.Instant.MAX)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("a run-at time in milliseconds since the epoch");
        try (Connection c = db.getConnection()) {
            assertThatThrownBy(() -> t.enqueue(c, List.of("ends high \ud83d"))).isInstanceOf(IllegalArgumentException.class);
        }
        assertThat(Rows.all(db, table)).as("rows written").isEmpty();
    }

    /** JT-11: every payload the table takes comes back from a claim exactly as it was enqueued. */
    @Test
    void aPayloadComesBackExactlyAsEnqueued() throws SQLException {
        JobTable t = open(JobTable.on(db));
        List<String> payloads = List.of("", "emoji \ud83d\ude80 pair", "quote ' and \\ backslash", "ü é 中文", "x".repeat(100_000),
                "{\"json\": [1, 2]}", "\ufffd replacement", "tab\tnew\nline");
        List<Long> ids = t.enqueue(payloads);
        assertThat(ids).hasSize(payloads.size()).isSorted().doesNotHaveDuplicates();
        List<Job> jobs = claimAll(t);
        assertThat(jobs).extracting(Job::id).containsExactlyElementsOf(ids);
        assertThat(jobs).extracting(Job::payload).containsExactlyElementsOf(payloads);
    }

    /** JT-11: jobs enqueued on the caller's connection vanish with its rollback: no row, nothing claimed. */
    @Test
    void anEnqueueInARolledBackTransactionLeavesNoJob() throws SQLException {
        JobTable t = open(JobTable.on(db));
        try (Connection c = db.getConnection()) {
            c.setAutoCommit(false);
            List<Long> ids = t.enqueue(c, Rows.payloads(3));
            assertThat(ids).hasSize(3);
            assertThat(claimAll(t)).as("claimed before the caller's transaction ends").isEmpty();
            c.rollback();
            assertThat(c.getAutoCommit()).as("the caller's connection's setting, left as it was").isFalse();
        }
        assertThat(Rows.all(db, table)).isEmpty();
        assertThat(claimAll(t)).isEmpty();
    }

    /** JT-11: jobs enqueued on the caller's connection exist once it commits, each claimed once, in order. */
    @Test
    void anEnqueueInACommittedTransactionIsClaimedOnce() throws Exception {
        JobTable t = open(JobTable.on(db));
        List<Long> ids;
        try (Connection c = db.getConnection()) {
            c.setAutoCommit(false);
            ids = t.enqueue(c, List.of("order 1 paid", "order 2 paid"));
            c.commit();
        }
        List<Job> first = claimAll(t);
        assertThat(first).extracting(Job::id).containsExactlyElementsOf(ids);
        assertThat(first).extracting(Job::payload).containsExactly("order 1 paid", "order 2 paid");
        t.settler().settle(first.stream().<Settlement<Job>>map(Settlement.Succeeded::new).toList());
        assertThat(claimAll(t)).as("claimed again").isEmpty();
        assertThat(Rows.inState(db, table, "done")).containsExactlyElementsOf(ids);
    }

    /**
     * JT-3: a row whose next lost lease would bury it is a suspect (here, with maxLostLeases 2,
     * every row whose lease ran out), and a table holds one at a time: the next claim takes the
     * first suspect, with the rows that are not suspects; a stream that holds it ends without the
     * other suspects, and the next suspect is taken once the first is settled.
     */
    @Test
    void aClaimantHoldsOneSuspectAtATime() throws Exception {
        JobTable dying = open(JobTable.on(db).lease(Duration.ofMillis(200)).claimBatch(3));
        List<Long> ids = dying.enqueue(Rows.payloads(3));
        assertThat(claimAll(dying)).hasSize(3);
        dying.stopRenewing(); // the claimant is gone: its leases run out
        List<Long> fresh = dying.enqueue(List.of("fresh0", "fresh1"));
        Waits.until("the three claimed rows' leases expired", () -> Rows.expired(db, table, dialect) == 3);
        JobTable next = open(JobTable.on(db).claimBatch(10).maxLostLeases(2));
        List<Job> first = claimAll(next);
        assertThat(first).as("the first stream: one suspect, then the fresh rows").extracting(Job::id)
                .containsExactly(ids.get(0), fresh.get(0), fresh.get(1));
        assertThat(claimAll(next)).as("claimed while the first suspect is held").isEmpty();
        next.settler().settle(List.of(new Settlement.Succeeded<>(first.getFirst())));
        List<Job> second = claimAll(next);
        assertThat(second).as("claimed once the first suspect is settled").extracting(Job::id).containsExactly(ids.get(1));
        List<Integer> lost = new ArrayList<>();
        for (long id : ids) {
            lost.add(Rows.one(db, table, id).lostLeases());
        }
        assertThat(lost).as("the suspects' lost leases: one each for the two taken, none yet for the third").containsExactly(1, 1, 0);
    }

    /** {@return the database's clock, in milliseconds since the epoch: the clock that decides a lease and a run-at time} */
    private long databaseNow() throws SQLException {
        try (Connection c = db.getConnection(); java.sql.Statement st = c.createStatement();
                java.sql.ResultSet r = st.executeQuery("SELECT " + dialect.nowMillis)) {
            r.next();
            return r.getLong(1);
        }
    }

    /** {@return when, on the database's clock, row {@code id} was last claimed: its lease's end less the lease} */
    private long claimedAt(long id, Duration lease) throws SQLException {
        try (Connection c = db.getConnection();
                PreparedStatement p = c.prepareStatement("SELECT lease_until FROM " + table + " WHERE id = ?")) {
            p.setLong(1, id);
            try (java.sql.ResultSet r = p.executeQuery()) {
                r.next();
                return r.getLong(1) - lease.toMillis();
            }
        }
    }

    /** JT-12: a job enqueued to run later is not claimed before its time on the database's clock, and is claimed once after it. */
    @Test
    void aScheduledJobIsNotClaimedBeforeItsTime() throws SQLException {
        Duration lease = Duration.ofSeconds(30);
        JobTable t = open(JobTable.on(db).lease(lease));
        long runAt = databaseNow() + 1_500;
        long later = t.enqueue(List.of("later"), java.time.Instant.ofEpochMilli(runAt)).getFirst();
        long now = t.enqueue(List.of("now")).getFirst();
        assertThat(claimAll(t)).as("claimed before the scheduled job's time").extracting(Job::id).containsExactly(now);
        List<Job> claimed = claimWhenThere(t, "the scheduled job claimed");
        assertThat(claimed).singleElement().extracting(Job::id).isEqualTo(later);
        assertThat(claimedAt(later, lease)).as("claimed at, on the database's clock, against its run-at time").isGreaterThanOrEqualTo(runAt);
        assertThat(claimAll(t)).as("claimed again").isEmpty();
    }

    /** JT-12: a job released with a due time for its retry (Settlement.Released.retryAt) is not claimable before it, and is claimed once after it. */
    @Test
    void aJobReleasedWithADelayIsNotClaimedBeforeItIsDue() throws Exception {
        Duration lease = Duration.ofSeconds(30);
        JobTable t = open(JobTable.on(db).lease(lease));
        t.enqueue(List.of("flaky"));
        Job first = claimAll(t).getFirst();
        long due = databaseNow() + 1_500;
        t.settler().settle(List.of(new Settlement.Released<>(first, Settlement.Why.CANCELLED, java.time.Instant.ofEpochMilli(due))));
        assertThat(Rows.one(db, table, first.id()).state()).isEqualTo("ready");
        assertThat(claimAll(t)).as("claimed before its retry is due").isEmpty();
        List<Job> again = claimWhenThere(t, "the released job claimed again");
        assertThat(again).singleElement().satisfies(job -> {
            assertThat(job.id()).isEqualTo(first.id());
            assertThat(job.claim()).isEqualTo(2);
        });
        assertThat(claimedAt(first.id(), lease)).as("claimed again at, on the database's clock, against its due time").isGreaterThanOrEqualTo(due);
    }

    /** JT-1: a table of an earlier version (no run_at) fails open() naming migrate(); migrate() adds the column, keeps the rows, and changes nothing when run again. */
    @Test
    void migrateBringsAnEarlierTableToThisVersion() throws SQLException {
        // each earlier version: the first (no run_at, no attempts), the one before JT-16 (no attempts)
        List<String> earlier = List.of(Store.createTable(table).replace("run_at BIGINT, ", "")
                .replace("attempts INTEGER NOT NULL DEFAULT 0, ", ""),
                Store.createTable(table + "_b").replace("attempts INTEGER NOT NULL DEFAULT 0, ", ""));
        List<String> names = List.of(table, table + "_b");
        for (int i = 0; i < names.size(); i++) {
            String name = names.get(i);
            try (Connection c = db.getConnection(); java.sql.Statement st = c.createStatement()) {
                st.execute(earlier.get(i));
                st.execute("INSERT INTO " + name + " (payload) VALUES ('from before')");
            }
            assertThatThrownBy(() -> open(JobTable.on(db), name)).as(name).isInstanceOf(SQLException.class)
                    .hasMessageContaining(".table(\"" + name + "\").migrate()");
            JobTable.on(db).table(name).migrate();
            JobTable.on(db).table(name).migrate();
            JobTable t = open(JobTable.on(db), name);
            assertThat(claimAll(t)).as(name).singleElement().satisfies(job -> {
                assertThat(job.payload()).isEqualTo("from before");
                assertThat(job.attempts()).isZero();
            });
        }
    }

    /**
     * JT-3, JT-4: the owner's presence cut while its table holds a row and runs no claim (a
     * proxy's idle timeout, an administrator's {@code pg_terminate_backend}) is taken again at the
     * renewer's next tick, without a claim: then another table's claim finds the row alive, and
     * the holder's settlement is the one the row keeps. Before, only a claim took it again, and
     * a table whose producer never claimed again left its rows looking abandoned.
     */
    @Test
    void aCutPresenceIsTakenAgainByTheRenewer() throws Exception {
        assumeTrue(dialect == Dialect.POSTGRES, "H2 has no sessions to watch: its rows wait for their lease");
        JobTable holder = open(JobTable.on(db).lease(Duration.ofSeconds(3)));
        JobTable other = open(JobTable.on(db));
        holder.enqueue(List.of("held"));
        Job job = claimAll(holder).getFirst();
        int cut = presenceBackend(holder.owner());
        assertThat(cut).as("the backend that holds the presence").isNotZero();
        try (Connection c = db.getConnection(); PreparedStatement p = c.prepareStatement("SELECT pg_terminate_backend(?)")) {
            p.setInt(1, cut);
            p.executeQuery().close();
        }
        Waits.untilLookingEvery(Duration.ofMillis(20), "the presence held by a session other than the one cut", () -> {
            int now = presenceBackend(holder.owner());
            return now != 0 && now != cut;
        });
        assertThat(claimAll(other)).as("what another table claims").isEmpty();
        holder.settler().settle(List.of(new Settlement.Succeeded<>(job)));
        assertThat(Rows.inState(db, table, "done")).containsExactly(job.id());
        assertThat(holder.staleWrites()).isZero();
    }

    /** {@return the backend that holds {@code owner}'s presence lock (JT-3), or 0 if none does} */
    private int presenceBackend(String owner) {
        try (Connection c = db.getConnection();
                PreparedStatement p = c.prepareStatement("SELECT l.pid FROM pg_locks l WHERE " + Presence.lockOf("?"))) {
            p.setString(1, owner);
            try (ResultSet r = p.executeQuery()) {
                return r.next() ? r.getInt(1) : 0;
            }
        } catch (SQLException e) {
            throw new AssertionError(e);
        }
    }
}
