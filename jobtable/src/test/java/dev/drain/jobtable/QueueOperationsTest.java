package dev.drain.jobtable;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.drain.pool.ItemFailure;
import dev.drain.pool.Settlement;
import dev.drain.support.Waits;
import java.net.ConnectException;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.NoSuchElementException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * JT-14: operating the queue: a job and its failure, requeueing dead jobs (one, by their failure,
 * all), purging done ones, the backlog that tells due from scheduled and live leases from expired
 * ones, and what each says of bad input. On both dialects.
 */
@ParameterizedClass
@EnumSource(Dialect.class)
class QueueOperationsTest extends OnEveryDialect {
    QueueOperationsTest(Dialect dialect) {
        super(dialect);
    }

    /** Claims every ready job of {@code t} and settles job i with {@code fates.get(i)}: "done", or the failure's message. */
    private static List<Job> settle(JobTable t, List<String> fates) throws Exception {
        List<Job> jobs = claimAll(t);
        List<Settlement<Job>> batch = new java.util.ArrayList<>();
        for (int i = 0; i < jobs.size(); i++) {
            String fate = fates.get(i);
            batch.add(fate.equals("done") ? new Settlement.Succeeded<>(jobs.get(i))
                    : new Settlement.Failed<>(new ItemFailure<>(jobs.get(i), 4, new ConnectException(fate))));
        }
        t.settler().settle(batch);
        return jobs;
    }

    /** JT-14: a dead job is read with its state, claims and the failure that killed it; its toString names the failure, never the payload. */
    @Test
    void aDeadJobIsReadWithItsFailure() throws Exception {
        JobTable t = open(JobTable.on(db));
        long id = t.enqueue(List.of("secret payload")).getFirst();
        settle(t, List.of("payments down"));
        StoredJob dead = t.operations().job(id).orElseThrow();
        assertThat(dead.state()).isEqualTo(JobState.DEAD);
        assertThat(dead.payload()).isEqualTo("secret payload");
        assertThat(dead.claims()).isOne();
        assertThat(dead.lastError()).isEqualTo("after 4 attempts: java.net.ConnectException: payments down");
        assertThat(dead.settledAt()).isNotNull();
        assertThat(dead.toString()).isEqualTo("job " + id + " (dead, 1 claim): after 4 attempts: java.net.ConnectException: payments down")
                .doesNotContain("secret");
        assertThat(t.operations().job(id + 1000)).as("a job that is not there").isEmpty();
    }

    /** JT-14: requeueing a dead job makes it ready as a fresh job, keeps its failure, and the next claim takes it once. */
    @Test
    void aRequeuedJobIsClaimedAgainOnce() throws Exception {
        JobTable t = open(JobTable.on(db));
        long id = t.enqueue(List.of("p")).getFirst();
        settle(t, List.of("down"));
        t.operations().requeue(id);
        StoredJob ready = t.operations().job(id).orElseThrow();
        assertThat(ready.state()).isEqualTo(JobState.READY);
        assertThat(ready.lastError()).as("the failure kept").contains("down");
        assertThat(ready.settledAt()).isNull();
        assertThat(claimAll(t)).singleElement().satisfies(job -> {
            assertThat(job.id()).isEqualTo(id);
            assertThat(job.claim()).isEqualTo(2);
        });
        assertThat(claimAll(t)).isEmpty();
    }

    /** JT-14: requeueing a job that is not there, or not dead, says so and changes nothing. */
    @Test
    void requeueingWhatIsNotDeadIsRefused() throws Exception {
        JobTable t = open(JobTable.on(db));
        List<Long> ids = t.enqueue(List.of("done one"));
        settle(t, List.of("done"));
        assertThatThrownBy(() -> t.operations().requeue(ids.getFirst() + 1000)).isInstanceOf(NoSuchElementException.class)
                .hasMessage("no job " + (ids.getFirst() + 1000) + " in " + table);
        assertThatThrownBy(() -> t.operations().requeue(ids.getFirst())).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("is done, not dead");
        assertThat(t.operations().job(ids.getFirst()).orElseThrow().state()).isEqualTo(JobState.DONE);
    }

    /** JT-14: requeueing dead jobs by their failure takes exactly those whose failure contains the text (no wildcards); all takes the rest. */
    @Test
    void deadJobsAreRequeuedByTheirFailure() throws Exception {
        JobTable t = open(JobTable.on(db));
        List<Long> ids = t.enqueue(List.of("a", "b", "c", "d"));
        settle(t, List.of("connect timed out", "malformed order", "connect timed out", "done"));
        assertThat(t.operations().requeueDead("100%_")).as("a text with LIKE's wildcards, taken literally").isZero();
        assertThat(t.operations().requeueDead("connect timed")).isEqualTo(2);
        assertThat(claimAll(t)).extracting(Job::id).containsExactly(ids.get(0), ids.get(2));
        assertThat(t.operations().requeueDead()).as("the rest").isOne();
        assertThat(t.operations().job(ids.get(1)).orElseThrow().state()).isEqualTo(JobState.READY);
    }

    /** JT-14: a purge deletes the done jobs settled longer ago than its bound, and no other; a negative bound is refused. */
    @Test
    void aPurgeDeletesOnlyOldDoneJobs() throws Exception {
        JobTable t = open(JobTable.on(db));
        List<Long> ids = t.enqueue(List.of("done", "dead"));
        settle(t, List.of("done", "failed"));
        assertThatThrownBy(() -> t.operations().purgeDone(Duration.ofSeconds(-1))).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("in the future");
        assertThat(t.operations().purgeDone(Duration.ofHours(1))).as("done less than an hour ago").isZero();
        Waits.untilLookingEvery(Duration.ofMillis(20), "the done job purged after 50 ms", () -> {
            try {
                return t.operations().purgeDone(Duration.ofMillis(50)) == 1;
            } catch (SQLException e) {
                throw new AssertionError(e);
            }
        });
        assertThat(t.operations().job(ids.get(0))).isEmpty();
        assertThat(t.operations().job(ids.get(1))).as("a dead job is kept").isPresent();
    }

    /** JT-14: the backlog tells due jobs from scheduled ones, and live leases from expired ones, which counts() cannot. */
    @Test
    void theBacklogTellsExpiredLeasesFromLiveOnes() throws Exception {
        JobTable t = open(JobTable.on(db));
        t.enqueue(List.of("live", "due later"));
        assertThat(claimAll(t)).extracting(Job::payload).containsExactly("live", "due later");
        t.enqueue(List.of("due"));
        t.enqueue(List.of("later"), Instant.now().plus(Duration.ofHours(1)));
        JobTable dying = open(JobTable.on(db).lease(Duration.ofMillis(200)).claimBatch(1));
        assertThat(claimAll(dying)).extracting(Job::payload).containsExactly("due");
        dying.stopRenewing();
        Waits.until("the dead claimant's lease expired", () -> Rows.expired(db, table, dialect) == 1);
        t.enqueue(List.of("fresh"));
        Backlog backlog = t.operations().backlog();
        assertThat(backlog).isEqualTo(new Backlog(1, 1, 2, 1, 0, 0));
        assertThat(backlog.unfinished()).isEqualTo(5);
        assertThat(backlog.toString()).isEqualTo("due 1, scheduled 1, running 2 (+ 1 abandoned), done 0, dead 0");
        assertThat(t.counts()).as("counts(): three running, live or not").containsEntry(JobState.RUNNING, 3L);
    }
}
