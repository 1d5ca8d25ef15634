package dev.drain.jobtable;

import static org.assertj.core.api.Assertions.assertThat;
import static org.quicktheories.QuickTheory.qt;

import dev.drain.pool.ItemFailure;
import dev.drain.pool.Results;
import dev.drain.pool.RunOutcome;
import dev.drain.pool.Settlement;
import dev.drain.pool.Settler;
import dev.drain.pool.WorkerPool;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import javax.sql.DataSource;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;
import org.quicktheories.core.Gen;
import org.quicktheories.generators.Generate;

/**
 * JT-8: generated runs of a pool over a job table, each ended its own way at its own moment,
 * each on a table of its own: afterwards the table holds exactly the books. On both dialects.
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
     * @param ending how it ends
     * @param endAfter when
     */
    record Schedule(int jobs, int workers, int queueSize, int claimBatch, int settleBatch, int failEvery, Ending ending,
            int endAfter) {}

    static Gen<Schedule> schedules() {
        Gen<int[]> shape = Generate.range(0, 40).zip(Generate.range(1, 6), Generate.range(1, 6), Generate.range(1, 8),
                (jobs, workers, queue, claim) -> new int[] {jobs, workers, queue, claim});
        return shape.zip(Generate.range(1, 8), Generate.range(0, 5), Generate.enumValues(Ending.class), Generate.range(0, 30),
                (s, settle, failEvery, ending, endAfter) -> new Schedule(s[0], s[1], s[2], s[3], settle, failEvery, ending, endAfter));
    }

    /** JT-8, JT-6: after any run, done rows are the succeeded items, dead rows the failures, and every other row is ready again and is what the next claim gets. */
    @Test
    void theTableHoldsExactlyTheBooks(Engines engines) {
        DataSource db = engines.dataSource(dialect);
        AtomicInteger runs = new AtomicInteger();
        qt().withFixedSeed(SEED).withExamples(SCHEDULES).withShrinkCycles(30).forAll(schedules())
                .checkAssert(schedule -> check(db, "p" + runs.incrementAndGet(), schedule));
    }

    private static void check(DataSource db, String name, Schedule s) {
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
                        return job.id();
                    }).workers(s.workers()).queueSize(s.queueSize()).settleBatch(s.settleBatch())
                    .settler(batch -> {
                        store.settle(batch);
                        settled.addAll(batch); // only what the table took
                    }).build();
            self.set(pool);
            if (s.ending() == Ending.ABORT_BEFORE_THE_RUN) {
                pool.abort();
            }
            Results<Job, Long> ran;
            try (Stream<Job> claims = t.claims(); Results<Job, Long> results = pool.run(claims)) {
                ran = results;
                readUntilTheEnding(results, pool, s);
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
            assertThat(ready.size() + succeeded.size() + failed.size()).as("rows").isEqualTo(s.jobs());
            assertThat(pool.liveThreads()).as("the pool's threads").isZero();
            List<Job> again;
            try (Stream<Job> next = t.claims()) {
                again = next.toList();
            }
            assertThat(Rows.ids(again)).as("what the next claim gets").isEqualTo(ready);
        } catch (SQLException e) {
            throw new AssertionError(e);
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
