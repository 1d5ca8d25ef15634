package dev.drain.jobtable;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.drain.pool.ItemFailure;
import dev.drain.pool.Settlement;
import dev.drain.support.Bounds;
import dev.drain.support.ThreadKind;
import dev.drain.support.Waits;
import java.sql.SQLException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.SortedSet;
import java.util.TreeSet;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import javax.sql.DataSource;
import org.h2.jdbcx.JdbcDataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;
import org.postgresql.ds.PGSimpleDataSource;

/**
 * JT-1 … JT-7: the table's own promises, one at a time, without a pool: opening, claiming,
 * leases, fenced settlements, releases and atomic batches. On both dialects.
 */
@ParameterizedClass
@EnumSource(Dialect.class)
class JobTableTest extends OnEveryDialect {
    JobTableTest(Dialect dialect) {
        super(dialect);
    }

    private JobTable open() throws SQLException {
        return open(JobTable.on(db));
    }

    /** JT-1: opening creates the table, empty and of the database's dialect, and opening it again changes nothing. */
    @Test
    void openingCreatesTheTableAndOpeningAgainChangesNothing() throws SQLException {
        JobTable first = open();
        first.enqueue(List.of("a"));
        JobTable again = open();
        assertThat(again.dialect()).isEqualTo(dialect);
        assertThat(again.counts()).containsEntry(JobState.READY, 1L).containsEntry(JobState.RUNNING, 0L)
                .containsEntry(JobState.DONE, 0L).containsEntry(JobState.DEAD, 0L);
        assertThat(first.owner()).isNotEqualTo(again.owner());
    }

    /** JT-1: a database that cannot be reached fails open() with an SQLException naming the table, and starts no thread. */
    @Test
    void anUnreachableDatabaseFailsToOpenNamingTheTable() {
        DataSource nowhere = switch (dialect) {
            case POSTGRES -> {
                PGSimpleDataSource pg = new PGSimpleDataSource();
                pg.setServerNames(new String[] {"127.0.0.1"});
                pg.setPortNumbers(new int[] {1}); // nothing listens on port 1
                pg.setConnectTimeout(5);
                yield pg;
            }
            case H2 -> {
                JdbcDataSource h2 = new JdbcDataSource();
                h2.setURL("jdbc:h2:tcp://127.0.0.1:1/nowhere");
                yield h2;
            }
        };
        SQLException failure = catchThrowableOfType(SQLException.class, () -> JobTable.on(nowhere).table(table).open());
        assertThat(failure.getMessage()).startsWith("cannot open the job table " + table + ": ");
        assertThat(Thread.getAllStackTraces().keySet()).noneMatch(t -> t.getName().startsWith("drain-jobtable-lease-" + table));
    }

    /** JT-1: a bad table name, lease or batch is refused when it is set, before any database is touched. */
    @Test
    void badSettingsAreRefusedWhenSet() {
        JobTableBuilder builder = JobTable.on(db);
        assertThatThrownBy(() -> builder.table("jobs; DROP TABLE x")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> builder.lease(Duration.ofMillis(99))).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> builder.claimBatch(0)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> builder.claimBatch(10_001)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> builder.maxLostLeases(0)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> builder.ownerPrefix("has space")).isInstanceOf(IllegalArgumentException.class);
    }

    /** JT-2: a stream of claims hands out every ready row once, in id order, each running under the owner with claim 1. */
    @Test
    void claimsComeInIdOrderRunningUnderTheOwner() throws SQLException {
        JobTable t = open(JobTable.on(db).claimBatch(2));
        t.enqueue(Rows.payloads(5));
        List<Job> jobs = claimAll(t);
        assertThat(jobs).extracting(Job::payload).containsExactly("p0", "p1", "p2", "p3", "p4");
        assertThat(jobs).extracting(Job::id).isSorted();
        assertThat(jobs).extracting(Job::claim).containsOnly(1);
        assertThat(Rows.all(db, table).values()).allSatisfy(row -> {
            assertThat(row.state()).isEqualTo("running");
            assertThat(row.owner()).isEqualTo(t.owner());
            assertThat(row.claims()).isEqualTo(1);
        });
    }

    /** JT-2: claimants racing on one table, on platform and on virtual threads, never get the same row, and together get every row. */
    @Test
    void racingClaimantsNeverShareARow() throws Exception {
        for (ThreadKind kind : ThreadKind.values()) {
            String racedTable = table + "_" + kind.name().toLowerCase(java.util.Locale.ROOT);
            List<JobTable> claimants = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                claimants.add(open(JobTable.on(db).claimBatch(3), racedTable));
            }
            claimants.getFirst().enqueue(Rows.payloads(200));
            List<List<Job>> got = Collections.synchronizedList(new ArrayList<>());
            CyclicBarrier start = new CyclicBarrier(claimants.size());
            List<Thread> threads = new ArrayList<>();
            for (JobTable claimant : claimants) {
                threads.add(kind.start("claimant", () -> {
                    try {
                        start.await(Bounds.WAIT.toNanos(), TimeUnit.NANOSECONDS);
                        got.add(claimAll(claimant));
                    } catch (Exception e) {
                        throw new AssertionError(e);
                    }
                }));
            }
            for (Thread thread : threads) {
                assertThat(thread.join(Bounds.WAIT)).as("a claimant ended").isTrue();
            }
            List<Long> all = got.stream().flatMap(List::stream).map(Job::id).toList();
            assertThat(got).as("every claimant's claims").hasSize(claimants.size());
            assertThat(all).as("the ids claimed, on %s threads", kind).doesNotHaveDuplicates().hasSize(200);
        }
    }

    /** JT-5: Succeeded makes a row done, Failed makes it dead with its attempts and cause, Released makes it ready. */
    @Test
    void settlementsWriteTheirFates() throws Exception {
        JobTable t = open();
        t.enqueue(Rows.payloads(3));
        List<Job> jobs = claimAll(t);
        t.settler().settle(List.of(
                new Settlement.Succeeded<>(jobs.get(0)),
                new Settlement.Failed<>(new ItemFailure<>(jobs.get(1), 3, new IllegalStateException("no such account"))),
                new Settlement.Released<>(jobs.get(2), Settlement.Why.CANCELLED)));
        Map<Long, Rows.Row> rows = Rows.all(db, table);
        assertThat(rows.get(jobs.get(0).id())).extracting(Rows.Row::state, Rows.Row::owner).containsExactly("done", null);
        assertThat(rows.get(jobs.get(1).id())).extracting(Rows.Row::state, Rows.Row::lastError)
                .containsExactly("dead", "after 3 attempts: java.lang.IllegalStateException: no such account");
        assertThat(rows.get(jobs.get(2).id())).extracting(Rows.Row::state, Rows.Row::owner).containsExactly("ready", null);
        assertThat(t.staleWrites()).isZero();
        assertThat(claimAll(t)).as("claimable again").extracting(Job::id, Job::claim).containsExactly(
                org.assertj.core.groups.Tuple.tuple(jobs.get(2).id(), 2));
    }

    /** JT-5: a dead letter keeps at most 2,000 characters of its failure, a NUL is replaced, and a cause whose toString throws is still described. */
    @Test
    void aDeadLetterIsDescribedWhateverItsCauseDoes() throws Exception {
        JobTable t = open();
        t.enqueue(Rows.payloads(3));
        List<Job> jobs = claimAll(t);
        Exception hostile = new Exception() {
            @Override
            @SuppressWarnings("OverrideThrowableToString") // the point: a cause whose toString throws
            public String toString() {
                throw new IllegalStateException("toString, broken on purpose");
            }
        };
        t.settler().settle(List.of(
                new Settlement.Failed<>(new ItemFailure<>(jobs.get(0), 1, new RuntimeException("x".repeat(5_000)))),
                new Settlement.Failed<>(new ItemFailure<>(jobs.get(1), 1, hostile)),
                new Settlement.Failed<>(new ItemFailure<>(jobs.get(2), 1, new RuntimeException("a\u0000b")))));
        assertThat(Rows.one(db, table, jobs.get(0).id()).lastError()).hasSize(JobTable.MAX_ERROR).endsWith("…");
        assertThat(Rows.one(db, table, jobs.get(1).id()).lastError()).contains("whose toString() threw java.lang.IllegalStateException");
        assertThat(Rows.one(db, table, jobs.get(2).id()).lastError()).as("a NUL, which Postgres text cannot hold")
                .isEqualTo("after 1 attempts: java.lang.RuntimeException: a\ufffdb");
    }

    /** JT-5, JT-3: a settlement written after the lease expired and another claim took the row changes nothing, is counted, and leaves the new claim's fate. */
    @Test
    void aLateSettlementIsAFencedNoOp() throws Exception {
        JobTable late = open(JobTable.on(db).lease(Duration.ofMillis(300)));
        late.enqueue(List.of("slow"));
        Job first = claimAll(late).getFirst();
        late.stopRenewing(); // the lease runs out, as when the process stalls
        JobTable next = open();
        List<Job> second = claimWhenThere(next, "the expired row claimed again");
        assertThat(second).singleElement().satisfies(job -> {
            assertThat(job.id()).isEqualTo(first.id());
            assertThat(job.claim()).isEqualTo(2);
        });
        late.settler().settle(List.of(new Settlement.Succeeded<>(first)));
        assertThat(late.staleWrites()).as("stale writes of the late claimant").isOne();
        assertThat(Rows.all(db, table).get(first.id())).extracting(Rows.Row::state, Rows.Row::owner, Rows.Row::lostLeases)
                .containsExactly("running", next.owner(), 1);
        next.settler().settle(List.of(new Settlement.Released<>(second.getFirst(), Settlement.Why.DISCARDED)));
        assertThat(next.staleWrites()).isZero();
        assertThat(Rows.inState(db, table, "ready")).containsExactly(first.id());
    }

    /** JT-4: a row held for many leases is renewed, so no other claimant can take it meanwhile. */
    @Test
    void aHeldRowIsRenewedPastItsLease() throws Exception {
        Duration lease = Duration.ofMillis(300);
        JobTable holder = open(JobTable.on(db).lease(lease));
        holder.enqueue(List.of("long"));
        Job held = claimAll(holder).getFirst();
        JobTable other = open();
        long until = System.nanoTime() + 5 * lease.toNanos();
        List<Job> stolen = new ArrayList<>();
        Waits.until("five leases passed without the row being taken", () -> {
            stolen.addAll(claimAll(other));
            return !stolen.isEmpty() || System.nanoTime() > until;
        });
        assertThat(stolen).as("rows another claimant took").isEmpty();
        assertThat(holder.renewalFailures()).isZero();
        holder.settler().settle(List.of(new Settlement.Succeeded<>(held)));
        assertThat(holder.staleWrites()).isZero();
        assertThat(Rows.inState(db, table, "done")).containsExactly(held.id());
    }

    /** JT-4: a renewal never waits for a row that another transaction holds locked (a settlement being written), so it cannot deadlock with one. */
    @Test
    void aRenewalSkipsARowLockedByAnotherTransaction() throws Exception {
        JobTable holder = open(JobTable.on(db).lease(Duration.ofMillis(300)));
        holder.enqueue(Rows.payloads(2));
        List<Job> held = claimAll(holder);
        try (java.sql.Connection other = db.getConnection()) {
            other.setAutoCommit(false);
            try (java.sql.PreparedStatement lock = other.prepareStatement("SELECT id FROM " + table + " WHERE id = ? FOR UPDATE")) {
                lock.setLong(1, held.getFirst().id());
                lock.executeQuery().close();
            }
            long before = holder.renewals();
            JobTable thief = open(JobTable.on(db));
            List<Job> stolen = new ArrayList<>();
            Waits.until("three renewals while the first row is locked", () -> {
                stolen.addAll(claimAll(thief));
                return holder.renewals() >= before + 3;
            });
            other.rollback();
            assertThat(stolen).as("rows another claimant took meanwhile (the second one's lease was renewed)").isEmpty();
        }
        assertThat(holder.renewalFailures()).isZero();
        holder.settler().settle(List.of(new Settlement.Succeeded<>(held.get(0)), new Settlement.Succeeded<>(held.get(1))));
        assertThat(holder.staleWrites()).as("stale writes: the second row was renewed, the first kept its lease").isZero();
    }

    /** JT-3, JT-2: a claim that only dead-lettered rows does not end the stream: the ready rows after them are still claimed. */
    @Test
    void aClaimThatOnlyDeadLettersRowsGoesOn() throws Exception {
        JobTable dying = open(JobTable.on(db).lease(Duration.ofMillis(200)).claimBatch(2));
        dying.enqueue(Rows.payloads(2));
        claimAll(dying);
        dying.stopRenewing();
        dying.enqueue(List.of("after0", "after1"));
        Waits.until("both claimed rows' leases expired", () -> Rows.expired(db, table, dialect) == 2);
        JobTable next = open(JobTable.on(db).claimBatch(2).maxLostLeases(1));
        assertThat(claimAll(next)).as("claimed after a claim that only dead-lettered").extracting(Job::payload)
                .containsExactly("after0", "after1");
        assertThat(Rows.inState(db, table, "dead")).hasSize(2);
    }

    /** JT-4: a closed table claims and settles nothing: claims() and the settler throw, and the streams it had open are closed, their unpulled rows released. */
    @Test
    void aClosedTableRefusesToClaimOrSettle() throws Exception {
        JobTable t = open(JobTable.on(db).claimBatch(3));
        t.enqueue(Rows.payloads(3));
        Stream<Job> open = t.claims();
        Job pulled = open.iterator().next();
        t.close();
        assertThat(Rows.inState(db, table, "ready")).as("released by the close").hasSize(2);
        assertThatThrownBy(t::claims).isInstanceOf(IllegalStateException.class).hasMessageContaining("closed");
        assertThatThrownBy(() -> t.settler().settle(List.of(new Settlement.Succeeded<>(pulled))))
                .isInstanceOf(IllegalStateException.class);
        assertThat(Rows.inState(db, table, "running")).containsExactly(pulled.id());
        open.close();
    }

    /** JT-3: a row that has lost maxLostLeases leases is dead-lettered by the claim that finds it, not claimed again. */
    @Test
    void aRowThatKeepsLosingItsLeaseIsDeadLettered() throws Exception {
        Duration lease = Duration.ofMillis(200);
        JobTable t0 = open(JobTable.on(db).lease(lease).maxLostLeases(2));
        t0.enqueue(List.of("poison"));
        long id = claimAll(t0).getFirst().id();
        t0.close();
        JobTable t1 = open(JobTable.on(db).lease(lease).maxLostLeases(2));
        Waits.until("the first lost lease", () -> !claimAll(t1).isEmpty());
        t1.close();
        JobTable t2 = open(JobTable.on(db).lease(lease).maxLostLeases(2));
        Waits.until("the second lost lease dead-letters it", () -> {
            assertThat(claimAll(t2)).as("claims after the second lost lease").isEmpty();
            try {
                return Rows.inState(db, table, "dead").contains(id);
            } catch (SQLException e) {
                throw new AssertionError(e);
            }
        });
        assertThat(Rows.all(db, table).get(id)).satisfies(row -> {
            assertThat(row.lostLeases()).isEqualTo(2);
            assertThat(row.lastError()).startsWith("lost 2 leases");
        });
    }

    /** JT-6: closing a stream of claims releases what its last claim took and the pool never pulled, and only that. */
    @Test
    void closingTheClaimsReleasesWhatWasNotPulled() throws SQLException {
        JobTable t = open(JobTable.on(db).claimBatch(5));
        t.enqueue(Rows.payloads(5));
        SortedSet<Long> pulled = new TreeSet<>();
        try (Stream<Job> claims = t.claims()) {
            Iterator<Job> it = claims.iterator();
            pulled.add(it.next().id());
            pulled.add(it.next().id());
        }
        assertThat(Rows.inState(db, table, "running")).isEqualTo(pulled);
        assertThat(Rows.inState(db, table, "ready")).hasSize(3).doesNotContainAnyElementsOf(pulled);
        assertThat(t.staleWrites()).isZero();
    }

    /** JT-7: a batch whose commit fails writes nothing, throws, and the next batch goes through on a new connection. */
    @Test
    void aFailingBatchWritesNothing() throws Exception {
        FaultyDataSource faulty = new FaultyDataSource(db);
        JobTable t = open(JobTable.on(faulty));
        t.enqueue(Rows.payloads(2));
        List<Job> jobs = claimAll(t);
        faulty.failing.set(true);
        assertThatThrownBy(() -> t.settler().settle(List.of(new Settlement.Succeeded<>(jobs.get(0)),
                new Settlement.Succeeded<>(jobs.get(1))))).isInstanceOf(SQLException.class).hasMessageContaining("injected");
        faulty.failing.set(false);
        assertThat(Rows.inState(db, table, "running")).as("rows after the failed batch").hasSize(2);
        t.settler().settle(List.of(new Settlement.Succeeded<>(jobs.get(0)), new Settlement.Succeeded<>(jobs.get(1))));
        assertThat(Rows.inState(db, table, "done")).hasSize(2);
    }

    /** JT-2: a claim that fails ends the stream with a JobTableException that names the table, and keeps nothing claimed. */
    @Test
    void aFailingClaimThrowsFromTheStream() throws SQLException {
        FaultyDataSource faulty = new FaultyDataSource(db);
        JobTable t = open(JobTable.on(faulty));
        t.enqueue(Rows.payloads(1));
        faulty.failing.set(true);
        try (Stream<Job> claims = t.claims()) {
            assertThatThrownBy(() -> claims.iterator().hasNext()).isInstanceOf(JobTableException.class)
                    .hasMessageStartingWith("could not claim jobs from " + table);
        }
        faulty.failing.set(false);
        assertThat(Rows.inState(db, table, "ready")).hasSize(1);
    }
}
