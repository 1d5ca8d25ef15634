package dev.drain.jobtable;

import static org.assertj.core.api.Assertions.assertThat;

import dev.drain.pool.Backoff;
import dev.drain.pool.ItemContext;
import dev.drain.pool.Results;
import dev.drain.pool.RunOutcome;
import dev.drain.pool.Settlement;
import dev.drain.pool.WorkerPool;
import dev.drain.support.Outage;
import dev.drain.support.Waits;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.SortedSet;
import java.util.TreeSet;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * JT-8, JT-7: a pool over a job table, in the cases the generated runs do not reach: a graceful
 * stop, a job no attempt can do, a backend down for seconds, acknowledgements that fail, and a
 * database that goes away in the middle of a run. On both dialects.
 */
@ParameterizedClass
@EnumSource(Dialect.class)
class JobTablePoolTest extends OnEveryDialect {
    JobTablePoolTest(Dialect dialect) {
        super(dialect);
    }

    /** Runs {@code pool} over {@code t}'s claims to its end, reading every result; {@return its outcome} */
    private static RunOutcome<Job> runToTheEnd(WorkerPool<Job, Long> pool, JobTable t) {
        Results<Job, Long> ran;
        try (Stream<Job> claims = t.claims(); Results<Job, Long> results = pool.run(claims)) {
            ran = results;
            try {
                results.forEachRemaining(r -> {});
            } catch (RuntimeException ended) {
                // a PoolFailure, a PoolUnsettled: the outcome says which
            }
        }
        return ran.outcome().orElseThrow();
    }

    /** JT-8: a graceful stop in the middle of a run acknowledges every job that succeeded, leaves none running, and the rest are ready. */
    @Test
    void aGracefulStopAcknowledgesEverySuccessAndLeavesNothingRunning() throws Exception {
        JobTable t = open(JobTable.on(db).claimBatch(4));
        t.enqueue(Rows.payloads(40));
        WorkerPool<Job, Long> pool = WorkerPool.<Job, Long>builder(Job::id).workers(3).queueSize(2)
                .settler(t.settler()).settleBatch(5).build();
        Results<Job, Long> ran;
        try (Stream<Job> claims = t.claims(); Results<Job, Long> results = pool.run(claims)) {
            ran = results;
            for (int read = 0; read < 10; read++) {
                results.next();
            }
            pool.requestStop();
            results.forEachRemaining(r -> {});
        }
        assertThat(ran.outcome().orElseThrow()).isInstanceOf(RunOutcome.Completed.class);
        long succeeded = ran.stats().succeeded();
        assertThat(Rows.inState(db, table, "running")).isEmpty();
        assertThat(Rows.inState(db, table, "done")).hasSize((int) succeeded);
        assertThat(Rows.inState(db, table, "ready")).hasSize(40 - (int) succeeded);
        assertThat(succeeded).as("succeeded before the stop took hold").isBetween(10L, 39L);
    }

    /** JT-8, JT-5: a job that fails every attempt is dead-lettered with its failure once, and the run goes on with the others. */
    @Test
    void aJobNoAttemptCanDoIsDeadLetteredOnce() throws Exception {
        JobTable t = open(JobTable.on(db));
        t.enqueue(List.of("fine", "poison", "fine"));
        CountDownLatch finesHandled = new CountDownLatch(2);
        WorkerPool<Job, Long> pool = WorkerPool.<Job, Long>builder(job -> {
            if (job.payload().equals("poison")) {
                // its failure stops the intake: it fails only once both others are handled
                assertThat(finesHandled.await(20, TimeUnit.SECONDS)).as("both fine jobs handled").isTrue();
                throw new IllegalStateException("cannot parse " + job.payload());
            }
            finesHandled.countDown();
            return job.id();
        }).workers(2).queueSize(2).retryable(IllegalStateException.class).maxRetries(2).settler(t.settler()).build();
        RunOutcome<Job> outcome = runToTheEnd(pool, t);
        assertThat(outcome).isInstanceOf(RunOutcome.Failed.class);
        assertThat(Rows.all(db, table).values()).extracting(Rows.Row::state, Rows.Row::lastError).containsExactly(
                org.assertj.core.groups.Tuple.tuple("done", null),
                org.assertj.core.groups.Tuple.tuple("dead", "after 3 attempts: java.lang.IllegalStateException: cannot parse poison"),
                org.assertj.core.groups.Tuple.tuple("done", null));
        try (Stream<Job> again = t.claims()) {
            assertThat(again.toList()).as("claimable after the run").isEmpty();
        }
    }

    /**
     * WP-23, JT-8, JT-5: a service over the table goes on past its poison jobs: 2,000 jobs, one in
     * 100 failing for good, one {@code forEach} run. Each poison job ends dead, once, with its
     * failure; every other job is done once; nothing is left ready or running.
     */
    @Test
    void poisonJobsAmongThousandsEndDeadOnceAndTheRestAreDoneInOneRun() throws Exception {
        JobTable t = open(JobTable.on(db));
        List<String> payloads = new ArrayList<>();
        for (int i = 0; i < 2_000; i++) {
            payloads.add(i % 100 == 42 ? "poison " + i : "job " + i);
        }
        t.enqueue(payloads);
        List<Long> done = Collections.synchronizedList(new ArrayList<>());
        WorkerPool<Job, Void> service = WorkerPool.<Job>forEach(job -> {
            if (job.payload().startsWith("poison")) {
                throw new IllegalArgumentException("cannot parse " + job.payload());
            }
            done.add(job.id());
        }).workers(8).queueSize(16).settler(t.settler()).build();
        RunOutcome<Job> outcome;
        try (Stream<Job> claims = t.claims()) {
            outcome = service.drain(claims);
        }
        assertThat(outcome).isInstanceOf(RunOutcome.Completed.class);
        assertThat(outcome.failures()).hasSize(20);
        assertThat(done).hasSize(1_980).doesNotHaveDuplicates();
        assertThat(Rows.inState(db, table, "dead")).hasSize(20);
        assertThat(Rows.inState(db, table, "done")).hasSize(1_980);
        assertThat(Rows.inState(db, table, "ready")).isEmpty();
        assertThat(Rows.inState(db, table, "running")).isEmpty();
        assertThat(Rows.all(db, table).values()).filteredOn(r -> r.state().equals("dead"))
                .allMatch(r -> r.lastError() != null && r.lastError().contains("cannot parse poison"));
    }

    /**
     * WP-28, WP-23, JT-8: the handler's backend goes down for five seconds in the middle of a run
     * of 200 jobs: with the retries and the backoff {@code Backoff}'s javadoc recommends (eight
     * retries, exponential from 1 s to 30 s), no job ends dead, every job is done once, in one run,
     * and no retry comes sooner than the backoff's floor after the attempt before it.
     */
    @Test
    void aBackendDownForFiveSecondsEndsNoJobDead() throws Exception {
        JobTable t = open(JobTable.on(db));
        t.enqueue(Rows.payloads(200));
        Outage backend = new Outage(50, Duration.ofSeconds(5));
        List<Long> done = Collections.synchronizedList(new ArrayList<>());
        WorkerPool<Job, Void> service = WorkerPool.<Job>forEach(job -> {
            backend.call("job " + job.id());
            done.add(job.id());
        }).workers(8).settler(t.settler()).retryable(IOException.class).maxRetries(8)
                .retryBackoff(Outage.RECOMMENDED).build();
        RunOutcome<Job> outcome;
        try (Stream<Job> claims = t.claims()) {
            outcome = service.drain(claims);
        }
        assertThat(backend.refused()).as("calls the outage refused").isGreaterThanOrEqualTo(8);
        assertThat(backend.retries()).as("retries").isEqualTo(backend.refused());
        assertThat(backend.callsSoonerThan(Outage::recommendedFloor)).as("retries sooner than the backoff's floor").isEmpty();
        assertThat(outcome).isEqualTo(new RunOutcome.Completed<Job>(false));
        assertThat(done).hasSize(200).doesNotHaveDuplicates();
        assertThat(Rows.inState(db, table, "done")).hasSize(200);
        assertThat(Rows.inState(db, table, "dead")).isEmpty();
    }

    /**
     * WP-28, JT-8: no worker idles on a delay: one worker, job 1 fails its first attempt and waits
     * 2 s for its retry (far longer than the others take); the worker does jobs 2 to 4 meanwhile,
     * and job 1's retry comes last; the table holds every job done.
     */
    @Test
    void noWorkerIdlesOnADelay() throws Exception {
        JobTable t = open(JobTable.on(db));
        t.enqueue(Rows.payloads(4));
        List<String> attempts = Collections.synchronizedList(new ArrayList<>());
        WorkerPool<Job, Void> service = WorkerPool.<Job>forEach(job -> {
            int attempt = ItemContext.current().attempt();
            attempts.add(job.id() + "/" + attempt);
            if (job.id() == 1 && attempt == 1) {
                throw new IOException("the backend did not answer job 1");
            }
        }).workers(1).queueSize(1).settler(t.settler()).retryable(IOException.class).maxRetries(1)
                .retryBackoff(Backoff.fixed(Duration.ofSeconds(2))).build();
        RunOutcome<Job> outcome;
        try (Stream<Job> claims = t.claims()) {
            outcome = service.drain(claims);
        }
        assertThat(outcome).isEqualTo(new RunOutcome.Completed<Job>(false));
        assertThat(attempts).containsExactly("1/1", "2/1", "3/1", "4/1", "1/2");
        assertThat(Rows.inState(db, table, "done")).containsExactly(1L, 2L, 3L, 4L);
    }

    /** JT-7, JT-8: when the acknowledgements fail, the outcome is Unsettled and names them, their rows stay running, and after the lease the next runs get exactly those. */
    @Test
    void failedAcknowledgementsAreNamedAndRedeliveredAfterTheLease() throws Exception {
        FaultyDataSource faulty = new FaultyDataSource(db);
        Duration lease = Duration.ofMillis(500);
        JobTable t = open(JobTable.on(faulty).lease(lease).claimBatch(10));
        t.enqueue(Rows.payloads(3));
        CountDownLatch claimed = new CountDownLatch(3);
        WorkerPool<Job, Long> pool = WorkerPool.<Job, Long>builder(job -> {
            claimed.countDown();
            assertThat(claimed.await(20, TimeUnit.SECONDS)).as("all three handed out").isTrue();
            faulty.failing.set(true); // the database goes away before any acknowledgement
            return job.id();
        }).workers(3).queueSize(3).settler(t.settler()).settleBatch(3).build();
        RunOutcome<Job> outcome = runToTheEnd(pool, t);
        faulty.failing.set(false); // the table stays open: it must not renew what it failed to settle
        assertThat(outcome).isInstanceOf(RunOutcome.Unsettled.class);
        SortedSet<Long> unsettled = new TreeSet<>();
        outcome.unsettled().forEach(s -> unsettled.add(s.item().id()));
        assertThat(outcome.unsettled()).allMatch(s -> s instanceof Settlement.Succeeded<Job>);
        assertThat(Rows.inState(db, table, "running")).as("rows after the failed acknowledgements").isEqualTo(unsettled)
                .hasSize(3);
        JobTable next = open(JobTable.on(db).lease(lease));
        List<Job> redelivered = new ArrayList<>();
        Waits.until("the unacknowledged jobs claimed again once their leases ran out (JT-3)", () -> {
            try (Stream<Job> claims = next.claims()) {
                List<Job> taken = claims.toList();
                redelivered.addAll(taken);
                next.settler().settle(taken.stream().<Settlement<Job>>map(Settlement.Succeeded::new).toList());
            } catch (Exception e) {
                throw new AssertionError(e);
            }
            return redelivered.size() >= unsettled.size();
        });
        assertThat(redelivered).as("what the next runs get").extracting(Job::id).containsExactlyElementsOf(unsettled);
    }

    /** JT-8, JT-2: a database that goes away mid-run ends the run with what is unacknowledged named, and nothing is acknowledged that did not succeed. */
    @Test
    void aDatabaseThatGoesAwayMidRunEndsTheRunWithNothingWronglyAcknowledged() throws Exception {
        FaultyDataSource faulty = new FaultyDataSource(db);
        JobTable t = open(JobTable.on(faulty).claimBatch(2));
        t.enqueue(Rows.payloads(20));
        WorkerPool<Job, Long> pool = WorkerPool.<Job, Long>builder(job -> {
            if (job.payload().equals("p5")) {
                faulty.failing.set(true);
            }
            return job.id();
        }).workers(1).queueSize(1).settler(t.settler()).settleBatch(1).build();
        RunOutcome<Job> outcome = runToTheEnd(pool, t);
        faulty.failing.set(false);
        assertThat(outcome).isInstanceOf(RunOutcome.Unsettled.class);
        assertThat(outcome.unsettled()).as("unsettled").isNotEmpty();
        SortedSet<Long> done = Rows.inState(db, table, "done");
        assertThat(done.size()).as("acknowledged").isLessThanOrEqualTo(6);
        SortedSet<Long> unsettled = new TreeSet<>();
        outcome.unsettled().forEach(s -> unsettled.add(s.item().id()));
        assertThat(Collections.disjoint(done, unsettled)).as("acknowledged %s, named unsettled %s", done, unsettled).isTrue();
        assertThat(Rows.inState(db, table, "dead")).isEmpty();
    }
}
