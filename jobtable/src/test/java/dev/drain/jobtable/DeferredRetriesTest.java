package dev.drain.jobtable;

import static org.assertj.core.api.Assertions.assertThat;

import dev.drain.pool.Backoff;
import dev.drain.pool.ItemContext;
import dev.drain.pool.RunOutcome;
import dev.drain.pool.WorkerPool;
import dev.drain.support.Waits;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * JT-16, WP-29: a retry the pool defers is kept by the table: the row is {@code ready} again with
 * its due time and its attempts, no claim takes it before, and the run that takes it after goes
 * on counting its attempts, to its retry budget's end. On both dialects.
 */
@ParameterizedClass
@EnumSource(Dialect.class)
class DeferredRetriesTest extends OnEveryDialect {
    DeferredRetriesTest(Dialect dialect) {
        super(dialect);
    }

    /** "id/attempt" of every attempt, in the order they started. */
    private final List<String> attempts = Collections.synchronizedList(new ArrayList<>());

    /** A service over {@code t} whose job {@code failing} fails its first {@code failures} attempts; its retries wait {@code wait}, deferred from 100 ms. */
    private WorkerPool<Job, Void> service(JobTable t, long failing, int failures, Duration wait) {
        return WorkerPool.<Job>forEach(job -> {
            int attempt = ItemContext.current().attempt();
            attempts.add(job.id() + "/" + attempt);
            if (job.id() == failing && attempt <= failures) {
                throw new IOException("the backend refused job " + job.id());
            }
        }).workers(2).settler(t.settler()).retryable(IOException.class).maxRetries(2).retryBackoff(Backoff.fixed(wait))
                .deferRetriesLongerThan(Duration.ofMillis(100)).priorAttempts(Job::attempts).build();
    }

    /** {@return the ids of this test's rows in {@code state}} */
    private java.util.SortedSet<Long> inState(String state) {
        try {
            return Rows.inState(db, table, state);
        } catch (java.sql.SQLException e) {
            throw new AssertionError(e);
        }
    }

    private static RunOutcome<Job> drain(JobTable t, WorkerPool<Job, Void> pool) {
        try (Stream<Job> claims = t.claims()) {
            return pool.drain(claims);
        }
    }

    /**
     * JT-16, JT-12, WP-29: job 1 fails once and its retry, 2 s away, is deferred: the run completes
     * at once with job 2 done and job 1 ready, due in about 2 s, with 1 attempt; a claim before then
     * takes nothing; once due, a new run takes it as its attempt 2, and it is done.
     */
    @Test
    void aDeferredRetryIsKeptUntilDueAndItsAttemptsGoOn() throws Exception {
        JobTable t = open(JobTable.on(db));
        t.enqueue(List.of("flaky", "fine"));
        Instant before = Instant.now();
        RunOutcome<Job> first = drain(t, service(t, 1, 1, Duration.ofSeconds(2)));
        assertThat(first).isEqualTo(new RunOutcome.Completed<Job>(false));
        StoredJob kept = t.operations().job(1).orElseThrow();
        assertThat(kept.state()).isEqualTo(JobState.READY);
        assertThat(kept.attempts()).isOne();
        assertThat(kept.toString()).startsWith("job 1 (ready, 1 claim, 1 attempt, runs at ");
        assertThat(kept.runAt()).isNotNull().isAfterOrEqualTo(before.plus(Duration.ofMillis(1_900)));
        assertThat(Rows.inState(db, table, "done")).containsExactly(2L);
        if (Instant.now().plusMillis(500).isBefore(kept.runAt())) { // a machine slower than the retry's 2 s skips this look
            assertThat(claimAll(t)).as("a claim before the retry is due").isEmpty();
        }
        Waits.untilLookingEvery(Duration.ofMillis(50), "job 1 done by a later run", () -> {
            drain(t, service(t, 1, 1, Duration.ofSeconds(2)));
            return inState("done").contains(1L);
        });
        assertThat(attempts).containsExactlyInAnyOrder("1/1", "2/1", "1/2");
        assertThat(t.staleWrites()).isZero();
    }

    /**
     * JT-16, WP-29, WP-5: a job that always fails, its every retry deferred: the budget of
     * {@code maxRetries(2)} spans the runs: attempts 1 and 2 each end a run's part deferred, attempt
     * 3, in a third run, fails it for good, "after 3 attempts"; a requeue makes it a fresh job,
     * its attempts back at 0.
     */
    @Test
    void theRetryBudgetSpansTheRuns() throws Exception {
        JobTable t = open(JobTable.on(db));
        t.enqueue(List.of("never"));
        Waits.untilLookingEvery(Duration.ofMillis(50), "job 1 dead", () -> {
            drain(t, service(t, 1, Integer.MAX_VALUE, Duration.ofMillis(150)));
            return inState("dead").contains(1L);
        });
        assertThat(attempts).containsExactly("1/1", "1/2", "1/3");
        StoredJob dead = t.operations().job(1).orElseThrow();
        assertThat(dead.lastError()).startsWith("after 3 attempts: java.io.IOException: the backend refused job 1");
        assertThat(dead.attempts()).isEqualTo(3);
        t.operations().requeue(1);
        assertThat(t.operations().job(1).orElseThrow().attempts()).as("a requeued job's attempts").isZero();
    }
}
