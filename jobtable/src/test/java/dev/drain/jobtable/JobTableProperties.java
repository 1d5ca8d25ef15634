package dev.drain.jobtable;

import static org.assertj.core.api.Assertions.assertThat;
import static org.quicktheories.QuickTheory.qt;

import dev.drain.pool.Backoff;
import dev.drain.pool.ItemContext;
import dev.drain.pool.ItemFailure;
import dev.drain.pool.Results;
import dev.drain.pool.RunOutcome;
import dev.drain.pool.Settlement;
import dev.drain.pool.Settler;
import dev.drain.pool.WorkerPool;
import dev.drain.support.Bounds;
import java.io.IOException;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;
import org.quicktheories.core.Gen;
import org.quicktheories.generators.Generate;

/**
 * JT-8, JT-13, JT-16: generated runs of a pool over a job table, over {@code claims()} or the
 * waiting stream, some of whose jobs fail for good and some of whose retries are deferred to the
 * table (WP-29), each ended its own way at its own moment, each on a table of its own: afterwards
 * the table holds exactly the books. On both dialects.
 * {@code -Djt.schedules=N} sets how many runs (the heavy profile asks 300), {@code -Djt.seed}
 * the seed.
 */
@ParameterizedClass
@EnumSource(Dialect.class)
@ExtendWith(Engines.Extension.class)
class JobTableProperties {
    static final long SEED = Long.getLong("jt.seed", 20261203L);
    static final int SCHEDULES = Integer.getInteger("jt.schedules", 40);

    private final Dialect dialect;

    JobTableProperties(Dialect dialect) {
        this.dialect = dialect;
    }

    /** How a generated run ends. */
    enum Ending {
        /** The claims run out. */
        NATURAL,
        /** {@code requestStop()} once the consumer has read {@code endAfter} results. */
        STOP,
        /** {@code abort()} once the consumer has read {@code endAfter} results. */
        ABORT,
        /** {@code abort()} from the handler of the {@code endAfter}-th attempt, on the pool's own thread. */
        ABORT_FROM_A_HANDLER,
        /** {@code abort()} before {@code run()}: nothing is pulled. */
        ABORT_BEFORE_THE_RUN
    }

    /**
     * One generated run.
     *
     * @param jobs rows in the table
     * @param workers the pool's workers
     * @param queueSize its intake
     * @param claimBatch rows per claim
     * @param settleBatch settlements per batch
     * @param failEvery every this-th job fails for good (0: none)
     * @param deferEvery every this-th job that does not fail for good fails its first attempt with
     *     a retryable exception whose retry is due in an hour, so deferred to the table (0: none)
     * @param ending how it ends; over the waiting stream, {@code NATURAL} is a stop once no row is
     *     ready or running (the stream never runs out), and a stop or an abort that the results
     *     never reach comes the same way
     * @param endAfter when
     * @param waiting whether the pool pulls the waiting stream ({@code claimsUntilStopped()}, JT-13)
     *     rather than {@code claims()}
     */
    record Schedule(int jobs, int workers, int queueSize, int claimBatch, int settleBatch, int failEvery, int deferEvery,
            Ending ending, int endAfter, boolean waiting) {}

    static Gen<Schedule> schedules() {
        Gen<int[]> shape = Generate.range(0, 40).zip(Generate.range(1, 6), Generate.range(1, 6), Generate.range(1, 8),
                (jobs, workers, queue, claim) -> new int[] {jobs, workers, queue, claim});
        // a zip takes five, so two draws carry two values each: failEvery (0 to 4) and deferEvery (0 to 4)
        // as one number of 0-24; endAfter (0 to 30) and waiting as one of 0-61 (31-61: over the waiting stream)
        return shape.zip(Generate.range(1, 8), Generate.range(0, 24), Generate.enumValues(Ending.class), Generate.range(0, 61),
                (s, settle, failing, ending, drawn) -> new Schedule(s[0], s[1], s[2], s[3], settle, failing % 5, failing / 5, ending,
                        drawn % 31, drawn >= 31));
    }

    /**
     * JT-8, JT-6, JT-13, JT-16: after any run, over either stream, done rows are the succeeded
     * items, dead rows the failures, deferred rows wait ready with their attempt counted until
     * their retry is due, and every other row is ready again and is what the next claim gets.
     */
    @Test
    void theTableHoldsExactlyTheBooks(Engines engines) {
        DataSource db = engines.dataSource(dialect);
        AtomicInteger runs = new AtomicInteger();
        AtomicInteger waiting = new AtomicInteger();
        AtomicInteger deferring = new AtomicInteger();
        qt().withFixedSeed(SEED).withExamples(SCHEDULES).withShrinkCycles(30).forAll(schedules())
                .checkAssert(schedule -> {
                    waiting.addAndGet(schedule.waiting() ? 1 : 0);
                    deferring.addAndGet(check(db, "p" + runs.incrementAndGet(), schedule) > 0 ? 1 : 0);
                });
        if (runs.get() >= 10) { // a draw of two kinds: ten runs or more have both
            assertThat(waiting.get()).as("runs over the waiting stream, of %s", runs.get()).isPositive().isLessThan(runs.get());
            assertThat(deferring.get()).as("runs that deferred a retry, of %s", runs.get()).isPositive();
        }
    }

    /** Runs {@code s} on a table of its own and checks it; {@return how many retries it deferred} */
    private static int check(DataSource db, String name, Schedule s) {
        String table = Engines.freshTable(name);
        try (JobTable t = JobTable.on(db).table(table).claimBatch(s.claimBatch()).open()) {
            t.enqueue(Rows.payloads(s.jobs()));
            List<Settlement<Job>> settled = Collections.synchronizedList(new ArrayList<>());
            Settler<Job> store = t.settler();
            AtomicReference<WorkerPool<Job, Long>> self = new AtomicReference<>();
            AtomicInteger attempts = new AtomicInteger();
            WorkerPool<Job, Long> pool = WorkerPool.<Job, Long>builder(job -> {
                        int attempt = attempts.incrementAndGet();
                        if (s.ending() == Ending.ABORT_FROM_A_HANDLER && attempt == s.endAfter() + 1) {
                            self.get().abort();
                        }
                        if (s.failEvery() > 0 && job.id() % s.failEvery() == 0) {
                            throw new IllegalArgumentException("job " + job.id() + " cannot be done");
                        }
                        if (s.deferEvery() > 0 && job.id() % s.deferEvery() == 0 && ItemContext.current().attempt() == 1) {
                            throw new IOException("job " + job.id() + "'s backend is down for an hour");
                        }
                        return job.id();
                    }).workers(s.workers()).queueSize(s.queueSize()).settleBatch(s.settleBatch())
                    .retryable(IOException.class).maxRetries(2).retryBackoff(Backoff.fixed(Duration.ofHours(1)))
                    .deferRetriesLongerThan(Duration.ofMinutes(1)).priorAttempts(Job::attempts)
                    .settler(new Settler<Job>() {
                        @Override
                        public void settle(List<Settlement<Job>> batch) throws Exception {
                            store.settle(batch);
                            settled.addAll(batch); // only what the table took
                        }

                        @Override
                        public boolean keepsDeferred() {
                            return store.keepsDeferred();
                        }
                    }).build();
            self.set(pool);
            if (s.ending() == Ending.ABORT_BEFORE_THE_RUN) {
                pool.abort();
            }
            Results<Job, Long> ran;
            try (Stream<Job> claims = s.waiting() ? t.claimsUntilStopped() : t.claims(); Results<Job, Long> results = pool.run(claims)) {
                ran = results;
                StopWhenDrained stopper = new StopWhenDrained(t, pool, s.waiting());
                try {
                    readUntilTheEnding(results, pool, s);
                } finally {
                    stopper.close();
                }
            }
            RunOutcome<Job> outcome = ran.outcome().orElseThrow();
            assertThat(outcome).as("the outcome").isNotInstanceOf(RunOutcome.Unsettled.class);
            assertThat(t.staleWrites()).as("stale writes").isZero();
            // A row released during the run (an item the abort dropped) may be claimed again by
            // the same run's producer before it stops, and then released again: one settlement per
            // claim, and the row's fate is its last claim's.
            Set<Job> once = new HashSet<>();
            Set<Job> released = new HashSet<>();
            Map<Long, Settlement<Job>> last = new TreeMap<>();
            synchronized (settled) {
                for (Settlement<Job> settlement : settled) {
                    Job job = settlement.item();
                    assertThat(once.add(job)).as("settled once: %s", job).isTrue();
                    if (settlement instanceof Settlement.Released<Job>) {
                        released.add(job);
                    }
                    Settlement<Job> before = last.get(job.id());
                    if (before != null) {
                        Settlement<Job> earlier = before.item().claim() < job.claim() ? before : settlement;
                        assertThat(earlier).as("an earlier claim's settlement of row %s", job.id())
                                .isInstanceOf(Settlement.Released.class);
                    }
                    if (before == null || before.item().claim() < job.claim()) {
                        last.put(job.id(), settlement);
                    }
                }
            }
            SortedSet<Long> succeeded = lastOfKind(last, Settlement.Succeeded.class);
            SortedSet<Long> failed = lastOfKind(last, Settlement.Failed.class);
            SortedSet<Long> deferred = lastOfKind(last, Settlement.Deferred.class);
            assertThat(ran.stats().deferred()).as("deferred in the books").isEqualTo(deferred.size());
            for (long id : deferred) {
                StoredJob row = t.operations().job(id).orElseThrow();
                assertThat(row.state()).as("a deferred row's state").isEqualTo(JobState.READY);
                assertThat(row.attempts()).as("a deferred row's attempts").isEqualTo(1);
                assertThat(row.runAt()).as("a deferred row's due time").isNotNull().isAfter(Instant.now().plus(Duration.ofMinutes(30)));
            }
            assertThat(failed).as("failed settlements").isEqualTo(ids(outcome.failures().stream().map(ItemFailure::item).toList()));
            assertThat(outcome.failures()).as("failures").hasSize(failed.size());
            Set<Job> dropped = new HashSet<>(outcome.discarded());
            dropped.addAll(outcome.cancelled());
            assertThat(released).as("released settlements").isEqualTo(dropped);
            assertThat(Rows.inState(db, table, "done")).as("done rows").isEqualTo(succeeded);
            assertThat(Rows.inState(db, table, "dead")).as("dead rows").isEqualTo(failed);
            assertThat(Rows.inState(db, table, "running")).as("running rows, after %s with the settlements %s", outcome, settled).isEmpty();
            SortedSet<Long> ready = Rows.inState(db, table, "ready");
            SortedSet<Long> releasedLast = lastOfKind(last, Settlement.Released.class);
            assertThat(ready.containsAll(releasedLast)).as("every released row ready: %s in %s", releasedLast, ready).isTrue();
            assertThat(ready.containsAll(deferred)).as("every deferred row ready: %s in %s", deferred, ready).isTrue();
            assertThat(ready.size() + succeeded.size() + failed.size()).as("rows").isEqualTo(s.jobs());
            assertThat(pool.liveThreads()).as("the pool's threads").isZero();
            List<Job> again;
            try (Stream<Job> next = t.claims()) {
                again = next.toList();
            }
            SortedSet<Long> due = new TreeSet<>(ready);
            due.removeAll(deferred);
            assertThat(Rows.ids(again)).as("what the next claim gets: every ready row but the deferred ones").isEqualTo(due);
            return deferred.size();
        } catch (SQLException e) {
            throw new AssertionError(e);
        }
    }

    /**
     * Over the waiting stream, which never runs out: stops the pool once no row is ready or
     * running, looking every 25 ms on a thread of its own until closed (a run ended by the
     * schedule's stop, abort or failure ends the stream before). If a look fails, the pool is
     * aborted, so that the run ends, and {@link #close} throws what failed. Over {@code claims()},
     * nothing.
     */
    private static final class StopWhenDrained {
        private final AtomicBoolean closed = new AtomicBoolean();
        private final AtomicReference<@Nullable Throwable> failed = new AtomicReference<>();
        private final @Nullable Thread looker;

        StopWhenDrained(JobTable t, WorkerPool<Job, Long> pool, boolean waiting) {
            looker = !waiting ? null : Thread.ofVirtual().start(() -> {
                try {
                    while (!closed.get()) {
                        Backlog backlog = t.operations().backlog();
                        if (backlog.due() + backlog.running() + backlog.expired() == 0) {
                            pool.requestStop(); // what a service's owner does once the work is done
                        }
                        Thread.sleep(25); // a dashboard's look, not a synchronization: the stop is what ends the run
                    }
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                } catch (Throwable e) { // anything: the run must end, and the test must fail with it
                    failed.set(e);
                    pool.abort();
                }
            });
        }

        /** Stops looking, waits for the looker to end, and throws what made a look fail. */
        void close() {
            closed.set(true);
            if (looker != null) {
                try {
                    assertThat(looker.join(Bounds.WAIT)).as("the stopper ended").isTrue();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new AssertionError(e);
                }
            }
            Throwable e = failed.get();
            if (e != null) {
                throw new AssertionError("a look at the backlog failed", e);
            }
        }
    }

    /** Reads the results, ending the run as the schedule says; a failed or aborted run's exception is expected. */
    private static void readUntilTheEnding(Results<Job, Long> results, WorkerPool<Job, Long> pool, Schedule s) {
        int read = 0;
        try {
            while (results.hasNext()) {
                results.next();
                read++;
                if (read == s.endAfter()) {
                    switch (s.ending()) {
                        case STOP -> pool.requestStop();
                        case ABORT -> pool.abort();
                        default -> {}
                    }
                }
            }
        } catch (RuntimeException ended) {
            // a PoolFailure or PoolAborted: the outcome says which
        }
    }

    private static SortedSet<Long> ids(List<Job> jobs) {
        return Rows.ids(jobs);
    }

    /** {@return the ids whose last settlement is of {@code kind}} */
    @SuppressWarnings("rawtypes") // a class literal of a generic record is raw
    private static SortedSet<Long> lastOfKind(Map<Long, Settlement<Job>> last, Class<? extends Settlement> kind) {
        SortedSet<Long> ids = new TreeSet<>();
        last.forEach((id, settlement) -> {
            if (kind.isInstance(settlement)) {
                ids.add(id);
            }
        });
        return ids;
    }
}
