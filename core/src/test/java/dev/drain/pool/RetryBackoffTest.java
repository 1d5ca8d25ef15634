package dev.drain.pool;

import static dev.drain.pool.Workloads.assertLedgerExact;
import static dev.drain.pool.Workloads.assertNoThreadsLeft;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.drain.pool.SettlementTest.RecordingSettler;
import dev.drain.support.Bounds;
import dev.drain.support.Call;
import dev.drain.support.Spawner;
import dev.drain.support.ThreadKind;
import dev.drain.support.Waits;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * WP-28: a retry that waits, without holding a worker. With a {@link Backoff}, a retryable failure
 * parks its item in the run's retry room and its worker goes on; the retry starts no earlier than
 * its delay; a graceful stop still runs the retries that wait, an abort cancels them; the books,
 * the attempts and the lead stay exact. On both intakes, with owners of both kinds.
 */
@ParameterizedClass
@EnumSource(WorkerPool.IntakeKind.class)
class RetryBackoffTest {
    private final WorkerPool.IntakeKind intake;

    @RegisterExtension
    final Spawner spawn = new Spawner();

    RetryBackoffTest(WorkerPool.IntakeKind intake) {
        this.intake = intake;
    }

    /** Each attempt's start, in the order they started: "item/attempt". */
    private final ConcurrentLinkedQueue<String> starts = new ConcurrentLinkedQueue<>();
    /** When each attempt started ({@link System#nanoTime()}), by "item/attempt". */
    private final Map<String, Long> startedAt = new ConcurrentHashMap<>();

    /** {@return the time between the starts of two attempts} */
    private Duration gap(String from, String to) {
        return Duration.ofNanos(Objects.requireNonNull(startedAt.get(to), to) - Objects.requireNonNull(startedAt.get(from), from));
    }

    /** A side effect whose items in {@code flaky} fail their first {@code failures} attempts with an {@link IOException}. */
    private SideEffect<Integer> flaky(List<Integer> flaky, int failures) {
        return item -> {
            int attempt = ItemContext.current().attempt();
            starts.add(item + "/" + attempt);
            startedAt.put(item + "/" + attempt, System.nanoTime());
            if (flaky.contains(item) && attempt <= failures) {
                throw new IOException("a flaky backend, on " + item);
            }
        };
    }

    /**
     * WP-28: no worker idles on a delay: one worker, item 0 fails once with a delay of 2 s (far
     * longer than the other three take, even on a busy machine); the worker handles items 1, 2 and
     * 3 meanwhile, and item 0's second attempt comes last. Each item
     * gets exactly the attempts it needed.
     */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void noWorkerIdlesOnADelay(ThreadKind kind) {
        WorkerPool<Integer, Void> pool = WorkerPool.<Integer>forEach(flaky(List.of(0), 1)).intake(intake).workers(1)
                .retryable(IOException.class).maxRetries(1).retryBackoff(Backoff.fixed(Duration.ofSeconds(2)))
                .build();
        Call<RunOutcome<Integer>> owner = spawn.use(kind).call("owner", () -> pool.drain(Workloads.CountingSource.of(4)));
        assertThat(owner.value()).isEqualTo(new RunOutcome.Completed<Integer>(false));
        assertThat(starts).containsExactly("0/1", "1/1", "2/1", "3/1", "0/2");
        assertNoThreadsLeft(pool);
    }

    /**
     * WP-28: a retry never starts before its delay: exponential from 100 ms, item 0 failing twice:
     * the first retry waits at least 50 ms (half of 100, the jitter's floor), the second at least
     * 100 ms (half of 200).
     */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void aRetryNeverStartsBeforeItsDelay(ThreadKind kind) {
        WorkerPool<Integer, Void> pool = WorkerPool.<Integer>forEach(flaky(List.of(0), 2)).intake(intake).workers(2)
                .retryable(IOException.class).maxRetries(2)
                .retryBackoff(Backoff.exponential(Duration.ofMillis(100), Duration.ofSeconds(1))).build();
        Call<RunOutcome<Integer>> owner = spawn.use(kind).call("owner", () -> pool.drain(Workloads.CountingSource.of(3)));
        assertThat(owner.value()).isEqualTo(new RunOutcome.Completed<Integer>(false));
        assertThat(gap("0/1", "0/2")).isGreaterThanOrEqualTo(Duration.ofMillis(50));
        assertThat(gap("0/2", "0/3")).isGreaterThanOrEqualTo(Duration.ofMillis(100));
        assertNoThreadsLeft(pool);
    }

    /**
     * WP-28, WP-7: a graceful stop runs the retries that wait: item 0 is parked for 200 ms when the
     * stop comes; the run ends {@code Completed(stopRequested)} only after its second attempt.
     */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void aStopRunsTheRetriesThatWait(ThreadKind kind) {
        WorkerPool<Integer, Void> pool = WorkerPool.<Integer>forEach(flaky(List.of(0), 1)).intake(intake).workers(2)
                .retryable(IOException.class).maxRetries(1).retryBackoff(Backoff.fixed(Duration.ofMillis(200))).build();
        Call<RunOutcome<Integer>> owner = spawn.use(kind).call("owner", () -> pool.drain(Workloads.CountingSource.endless()));
        Waits.until("item 0 failed once", () -> starts.contains("0/1"));
        pool.requestStop();
        assertThat(owner.value()).isEqualTo(new RunOutcome.Completed<Integer>(true));
        assertThat(starts).contains("0/2");
        assertNoThreadsLeft(pool);
    }

    /**
     * WP-28, WP-12, WP-22: an abort cancels the retries that wait: item 0 parked for longer than any
     * wait of the test; the run ends {@code Aborted}, item 0 among its cancelled items, released to
     * the settler once with when its retry was due (for a store that can keep it until then), and
     * never attempted again.
     */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void anAbortCancelsTheRetriesThatWait(ThreadKind kind) {
        RecordingSettler settler = new RecordingSettler();
        WorkerPool<Integer, String> pool = WorkerPool.<Integer, String>builder(item -> {
            flaky(List.of(0), 1).accept(item);
            return Workloads.result(item);
        }).intake(intake).workers(2).queueSize(2).retryable(IOException.class).maxRetries(1)
                .retryBackoff(Backoff.fixed(Bounds.WAIT.multipliedBy(3))).settler(settler).build();
        Instant started = Instant.now();
        AtomicReference<Instant> aborted = new AtomicReference<>(Instant.MAX);
        Call<RunOutcome<Integer>> owner = spawn.use(kind).call("owner", () -> {
            try (Results<Integer, String> results = pool.run(Workloads.CountingSource.of(3))) {
                results.next();
                Waits.until("item 0 failed once and waits for its retry", () -> results.stats().retried() == 1);
                Waits.until("items 1 and 2 done", () -> results.stats().succeeded() == 2);
                aborted.set(Instant.now());
                pool.abort();
                return Workloads.drainPastAnAbort(results);
            }
        });
        RunOutcome<Integer> outcome = Objects.requireNonNull(owner.value());
        assertThat(outcome).isInstanceOf(RunOutcome.Aborted.class);
        assertThat(outcome.cancelled()).containsExactly(0);
        assertThat(starts).doesNotContain("0/2");
        Duration wait = Bounds.WAIT.multipliedBy(3);
        Duration rounding = Duration.ofMillis(50); // two clocks read one after the other
        assertThat(settler.offered()).filteredOn(s -> s.item() == 0).singleElement()
                .isInstanceOfSatisfying(Settlement.Released.class, released -> {
                    assertThat(released.why()).isEqualTo(Settlement.Why.CANCELLED);
                    assertThat(released.retryAt()).as("when its retry was due").isNotNull()
                            .isBetween(started.plus(wait).minus(rounding), aborted.get().plus(wait).plus(rounding));
                });
        assertNoThreadsLeft(pool);
    }

    /**
     * WP-28, WP-12: with the retry room full (it holds one item per worker), a second retry waits
     * on its worker; an abort ends that wait at once, and both items are released to the settler,
     * cancelled, each with when its retry was due, and never attempted again.
     */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void anAbortEndsARetryThatWaitsOnItsWorker(ThreadKind kind) {
        RecordingSettler settler = new RecordingSettler();
        WorkerPool<Integer, String> pool = WorkerPool.<Integer, String>builder(item -> {
            flaky(List.of(0, 1), 1).accept(item);
            return Workloads.result(item);
        }).intake(intake).workers(1).queueSize(1).retryable(IOException.class).maxRetries(1)
                .retryBackoff(Backoff.fixed(Bounds.WAIT.multipliedBy(3))).settler(settler).build();
        Call<RunOutcome<Integer>> owner = spawn.use(kind).call("owner", () -> {
            try (Results<Integer, String> results = pool.run(Workloads.CountingSource.of(2))) {
                Waits.until("both items failed once: one waits in the room, one on the worker", () -> results.stats().retried() == 2);
                pool.abort();
                return Workloads.drainPastAnAbort(results);
            }
        });
        RunOutcome<Integer> outcome = Objects.requireNonNull(owner.value());
        assertThat(outcome).isInstanceOf(RunOutcome.Aborted.class);
        assertThat(outcome.cancelled()).containsExactlyInAnyOrder(0, 1);
        assertThat(starts).doesNotContain("0/2", "1/2");
        assertThat(settler.offered()).hasSize(2).allSatisfy(s -> assertThat(s).isInstanceOfSatisfying(Settlement.Released.class,
                released -> {
                    assertThat(released.why()).isEqualTo(Settlement.Why.CANCELLED);
                    assertThat(released.retryAt()).as("when its retry was due").isNotNull();
                }));
        assertNoThreadsLeft(pool);
    }

    /**
     * WP-28, WP-1: with a backoff the lead stays within {@code queueSize + 2 × workers + 1}: every
     * item fails once and waits 20 ms, over an endless source, until a stop; the books are exact.
     */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void theLeadStaysWithinItsBound(ThreadKind kind) {
        WorkerPool<Integer, String> pool = WorkerPool.<Integer, String>builder(item -> {
            if (ItemContext.current().attempt() == 1) {
                throw new IOException("every first attempt fails");
            }
            return Workloads.result(item);
        }).intake(intake).workers(2).queueSize(2).retryable(IOException.class).maxRetries(1)
                .retryBackoff(Backoff.fixed(Duration.ofMillis(20))).build();
        Call<PoolStats> owner = spawn.use(kind).call("owner", () -> {
            try (Results<Integer, String> results = pool.run(Workloads.CountingSource.endless())) {
                for (int i = 0; i < 40; i++) {
                    results.next();
                }
                pool.requestStop();
                Workloads.drain(results);
                assertLedgerExact(results);
                return results.stats();
            }
        });
        PoolStats stats = Objects.requireNonNull(owner.value());
        assertThat(stats.maxLead()).isLessThanOrEqualTo(2 + 2 * 2 + 1);
        assertThat(stats.retried()).isEqualTo(stats.succeeded());
        assertNoThreadsLeft(pool);
    }

    /**
     * WP-28, WP-23: a backend down for a second dead-letters nothing that succeeds once it is back,
     * with the settings {@link Backoff}'s javadoc recommends, scaled down: exponential from 100 ms
     * to 800 ms and six retries wait at least 1.55 s in all (the jitter's floor), longer than the
     * outage. 40 items on 4 workers, in a run that goes on past its failures: none fails.
     */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void aBackendDownForASecondDeadLettersNothing(ThreadKind kind) {
        long backAt = System.nanoTime() + Duration.ofSeconds(1).toNanos();
        WorkerPool<Integer, Void> pool = WorkerPool.<Integer>forEach(item -> {
            if (System.nanoTime() - backAt < 0) {
                throw new IOException("the backend is down");
            }
        }).intake(intake).workers(4).retryable(IOException.class).maxRetries(6)
                .retryBackoff(Backoff.exponential(Duration.ofMillis(100), Duration.ofMillis(800))).build();
        Call<RunOutcome<Integer>> owner = spawn.use(kind).call("owner", () -> pool.drain(Workloads.CountingSource.of(40)));
        assertThat(owner.value()).isEqualTo(new RunOutcome.Completed<Integer>(false));
        assertNoThreadsLeft(pool);
    }

    /** WP-28, WP-16: a backoff needs retries; build() names both settings. */
    @Test
    void aBackoffWithoutRetriesIsRefused() {
        assertThatThrownBy(() -> WorkerPool.<Integer>forEach(item -> { }).intake(intake)
                .retryBackoff(Backoff.fixed(Duration.ofMillis(5))).build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("retryBackoff").hasMessageContaining("maxRetries");
        assertThat(WorkerPool.<Integer>forEach(item -> { }).intake(intake).retryable(IOException.class).maxRetries(1)
                .retryBackoff(Backoff.fixed(Duration.ofMillis(5))).build().settings()).contains("backoff=fixed PT0.005S");
    }

    /**
     * WP-28: an exponential backoff's wait before retry n is drawn from [d/2, d], d = min(cap,
     * first × 2^(n-1)), and never overflows, however many retries.
     */
    @Test
    void anExponentialWaitIsWithinItsBounds() {
        Backoff backoff = Backoff.exponential(Duration.ofMillis(10), Duration.ofSeconds(1));
        SplittableRandom random = new SplittableRandom(20261207L);
        for (int retry = 1; retry <= 200; retry++) {
            long d = Math.min(1_000, 10L << Math.min(retry - 1, 20));
            Duration wait = backoff.delayBefore(retry, random);
            assertThat(wait).as("retry %s", retry).isBetween(Duration.ofMillis(d).dividedBy(2), Duration.ofMillis(d));
        }
        assertThatThrownBy(() -> Backoff.exponential(Duration.ofSeconds(2), Duration.ofSeconds(1)))
                .isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> Backoff.fixed(Duration.ZERO)).isInstanceOf(IllegalArgumentException.class);
    }
}
