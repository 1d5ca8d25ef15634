package dev.drain.jobtable;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.drain.pool.RunOutcome;
import dev.drain.pool.WorkerPool;
import dev.drain.support.Bounds;
import dev.drain.support.Waits;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * JT-13: a stream that waits for work, as a service runs on: what another process enqueues is
 * claimed while it waits (through {@code LISTEN/NOTIFY} on PostgreSQL, by polling on H2), a stop
 * or an abort ends the wait at once, and a lost listening connection costs only latency. On both
 * dialects; "another process" is another {@link JobTable} on the same table, whose enqueue this
 * table's streams are not told of in memory.
 */
@ParameterizedClass
@EnumSource(Dialect.class)
class WaitingClaimsTest extends OnEveryDialect {
    /** Longer than every bound of a test: a wait that only this ends fails the test. */
    private static final Duration NEVER = Duration.ofHours(1);

    WaitingClaimsTest(Dialect dialect) {
        super(dialect);
    }

    /**
     * A pool serving a table's waiting stream on a thread of its own, and what it handled; closing
     * it aborts the run and waits for its end (bounded), so that a failed test leaves no run behind.
     */
    private record Serving(WorkerPool<Job, Void> pool, CompletableFuture<RunOutcome<Job>> outcome, List<String> handled)
            implements AutoCloseable {
        @Override
        public void close() {
            pool.abort();
            ended();
        }

        /** {@return the run's outcome, which must come within the bound} */
        RunOutcome<Job> ended() {
            assertThat(outcome).as("the run's end").succeedsWithin(Bounds.WAIT);
            return outcome.join();
        }
    }

    /** Serves {@code t}'s waiting stream with a pool of two workers on {@code runner}. */
    private static Serving serve(JobTable t, ExecutorService runner) {
        List<String> handled = new CopyOnWriteArrayList<>();
        WorkerPool<Job, Void> pool = WorkerPool.<Job>forEach(job -> handled.add(job.payload())).workers(2).settler(t.settler()).build();
        CompletableFuture<RunOutcome<Job>> outcome = CompletableFuture.supplyAsync(() -> {
            try (Stream<Job> claims = t.claimsUntilStopped()) {
                return pool.drain(claims);
            }
        }, runner);
        return new Serving(pool, outcome, handled);
    }

    /** {@return a table on this test's table that polls every {@code poll}} */
    private JobTable polling(Duration poll) throws SQLException {
        return open(JobTable.on(db).pollInterval(poll));
    }

    /**
     * JT-13: a job another process enqueues while the stream waits is claimed and done: heard at
     * once on PostgreSQL (the stream's poll interval is an hour), found by a poll on H2.
     */
    @Test
    void aJobEnqueuedElsewhereIsClaimedWhileTheStreamWaits() throws Exception {
        JobTable served = polling(dialect == Dialect.POSTGRES ? NEVER : Duration.ofMillis(100));
        JobTable elsewhere = open(JobTable.on(db));
        try (ExecutorService runner = Executors.newVirtualThreadPerTaskExecutor(); Serving serving = serve(served, runner)) {
            Waits.until("the stream waits for work", () -> served.streamsWaiting() == 1);
            elsewhere.enqueue(List.of("late"));
            Waits.until("the job enqueued elsewhere handled", () -> serving.handled().contains("late"));
            serving.pool().requestStop();
            assertThat(serving.ended()).isInstanceOf(RunOutcome.Completed.class);
        }
        assertThat(Rows.inState(db, table, "done")).hasSize(1);
    }

    /** JT-13: jobs enqueued in another process's transaction are claimed once it commits, heard through its NOTIFY (PostgreSQL). */
    @Test
    void aJobEnqueuedInAnotherTransactionIsHeardAtItsCommit() throws Exception {
        assumeTrue(dialect == Dialect.POSTGRES, "H2 has no NOTIFY: its streams poll");
        JobTable served = polling(NEVER);
        JobTable elsewhere = open(JobTable.on(db));
        try (ExecutorService runner = Executors.newVirtualThreadPerTaskExecutor(); Serving serving = serve(served, runner)) {
            Waits.until("the stream waits for work", () -> served.streamsWaiting() == 1);
            try (Connection c = db.getConnection()) {
                c.setAutoCommit(false);
                elsewhere.enqueue(c, List.of("rolled back"));
                c.rollback();
                elsewhere.enqueue(c, List.of("committed"));
                c.commit();
            }
            Waits.until("the committed job handled", () -> serving.handled().contains("committed"));
            serving.pool().requestStop();
            serving.ended();
            assertThat(serving.handled()).containsExactly("committed");
        }
    }

    /** JT-13: a stop ends a stream's wait at once (its poll interval is an hour), and the run completes. */
    @Test
    void aStopEndsTheWaitAtOnce() throws Exception {
        JobTable served = polling(NEVER);
        try (ExecutorService runner = Executors.newVirtualThreadPerTaskExecutor(); Serving serving = serve(served, runner)) {
            Waits.until("the stream waits for work", () -> served.streamsWaiting() == 1);
            serving.pool().requestStop();
            assertThat(serving.ended()).isInstanceOfSatisfying(RunOutcome.Completed.class,
                    completed -> assertThat(completed.stopRequested()).isTrue());
        }
        assertThat(served.streamsWaiting()).isZero();
    }

    /** JT-13: an abort ends a stream's wait at once (its poll interval is an hour). */
    @Test
    void anAbortEndsTheWaitAtOnce() throws Exception {
        JobTable served = polling(NEVER);
        try (ExecutorService runner = Executors.newVirtualThreadPerTaskExecutor(); Serving serving = serve(served, runner)) {
            Waits.until("the stream waits for work", () -> served.streamsWaiting() == 1);
            serving.pool().abort();
            serving.ended();
        }
        assertThat(served.streamsWaiting()).isZero();
    }

    /**
     * JT-13: an idle stream that waits claims about once per poll interval, not in a loop: over the
     * time it takes to see five claims, at most one more than that time's poll intervals (the
     * count can only be lower on a busy machine, never higher).
     */
    @Test
    void anIdleWaitingStreamClaimsOncePerPollInterval() throws Exception {
        Duration poll = Duration.ofMillis(100);
        JobTable served = polling(poll);
        try (ExecutorService runner = Executors.newVirtualThreadPerTaskExecutor(); Serving serving = serve(served, runner)) {
            Waits.until("the first claim", () -> served.claimsRun() >= 1);
            long first = served.claimsRun();
            long start = System.nanoTime();
            Waits.untilLookingEvery(Duration.ofMillis(10), "five more claims", () -> served.claimsRun() >= first + 5);
            long claims = served.claimsRun() - first;
            long intervals = (System.nanoTime() - start) / poll.toNanos();
            assertThat(claims).as("claims in %s poll intervals", intervals).isLessThanOrEqualTo(intervals + 2);
            serving.pool().requestStop();
            serving.ended();
        }
    }

    /** JT-13: closing a batch stream wakes no waiting stream: twenty batches beside an idle waiting stream cost twenty claims, and one for the waiting stream. */
    @Test
    void closingAStreamWakesNoOtherStream() throws Exception {
        JobTable served = polling(NEVER);
        try (ExecutorService runner = Executors.newVirtualThreadPerTaskExecutor(); Serving serving = serve(served, runner)) {
            Waits.until("the stream waits for work", () -> served.streamsWaiting() == 1);
            long before = served.claimsRun();
            for (int i = 0; i < 20; i++) {
                assertThat(claimAll(served)).isEmpty();
            }
            assertThat(served.claimsRun() - before).as("claims run by twenty batches and the waiting stream").isEqualTo(20);
            serving.pool().requestStop();
            serving.ended();
        }
    }

    /**
     * JT-4, JT-13: a stream asked for while the table is being closed is refused or closed with
     * it: after close() returns, no stream of the table claims (a stream registered after close()
     * looked at the open ones would claim rows the closed table can never settle). 100 rounds, each
     * starting both calls from a barrier, on platform threads.
     */
    @Test
    void aStreamRacingTheTablesCloseNeverClaimsAfterIt() throws Exception {
        try (ExecutorService racer = Executors.newSingleThreadExecutor()) {
            raceTheClose(racer);
        }
    }

    private void raceTheClose(ExecutorService racer) throws Exception {
        for (int round = 0; round < 100; round++) {
            JobTable t = open(JobTable.on(db), table + "_" + round);
            t.enqueue(Rows.payloads(3));
            java.util.concurrent.CountDownLatch closedReturned = new java.util.concurrent.CountDownLatch(1);
            java.util.concurrent.CyclicBarrier start = new java.util.concurrent.CyclicBarrier(2);
            CompletableFuture<Boolean> claimedAfterClose = CompletableFuture.supplyAsync(() -> {
                Stream<Job> claims;
                try {
                    start.await(Bounds.WAIT.toSeconds(), java.util.concurrent.TimeUnit.SECONDS);
                    claims = t.claimsUntilStopped();
                } catch (IllegalStateException refused) {
                    return false;
                } catch (Exception e) {
                    throw new AssertionError(e);
                }
                try (claims) {
                    assertThat(closedReturned.await(Bounds.WAIT.toSeconds(), java.util.concurrent.TimeUnit.SECONDS)).isTrue();
                    return claims.iterator().hasNext();
                } catch (InterruptedException e) {
                    throw new AssertionError(e);
                }
            }, racer);
            start.await(Bounds.WAIT.toSeconds(), java.util.concurrent.TimeUnit.SECONDS);
            t.close();
            closedReturned.countDown();
            assertThat(claimedAfterClose).as("round %s: a stream of the closed table claimed", round).succeedsWithin(Bounds.WAIT)
                    .isEqualTo(false);
            assertThat(Rows.inState(db, table + "_" + round, "ready")).as("round %s: the rows", round).hasSize(3);
        }
    }

    /**
     * JT-13: when the listening connection drops (its backend terminated), the stream falls back to
     * polling and misses nothing, and the listener comes back: a job enqueued elsewhere during the
     * outage and one after it are both handled (PostgreSQL).
     */
    @Test
    void aDroppedListenerFallsBackToPollingAndMissesNothing() throws Exception {
        assumeTrue(dialect == Dialect.POSTGRES, "H2 has no listener");
        JobTable served = polling(Duration.ofMillis(200));
        JobTable elsewhere = open(JobTable.on(db));
        try (ExecutorService runner = Executors.newVirtualThreadPerTaskExecutor(); Serving serving = serve(served, runner)) {
            Waits.until("the stream waits for work", () -> served.streamsWaiting() == 1);
            Waits.untilLookingEvery(Duration.ofMillis(20), "the listener's backend terminated", () -> terminateListener() > 0);
            elsewhere.enqueue(List.of("during"));
            Waits.until("the listener's outage noticed", () -> served.listenerOutages() >= 1);
            Waits.until("the job enqueued during the outage handled", () -> serving.handled().contains("during"));
            elsewhere.enqueue(List.of("after"));
            Waits.until("the job enqueued after it handled", () -> serving.handled().contains("after"));
            serving.pool().requestStop();
            serving.ended();
        }
        assertThat(Rows.inState(db, table, "done")).hasSize(2);
    }

    /** Terminates the backends that listen on this table's channel; {@return how many} */
    private int terminateListener() {
        try (Connection c = db.getConnection();
                PreparedStatement p = c.prepareStatement("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE query = ?")) {
            p.setString(1, "LISTEN drain_" + table);
            int terminated = 0;
            try (ResultSet r = p.executeQuery()) {
                while (r.next()) {
                    terminated++;
                }
            }
            return terminated;
        } catch (SQLException e) {
            throw new AssertionError(e);
        }
    }
}
