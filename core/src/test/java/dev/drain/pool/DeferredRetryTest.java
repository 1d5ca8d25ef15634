package dev.drain.pool;

import static dev.drain.pool.Workloads.assertLedgerExact;
import static dev.drain.pool.Workloads.assertNoThreadsLeft;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.drain.support.Call;
import dev.drain.support.Spawner;
import dev.drain.support.ThreadKind;
import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * WP-29: a retry whose wait is at least {@code deferRetriesLongerThan} is handed to the store, which
 * keeps it until it is due: the item is settled {@link Settlement.Deferred} with its attempts and
 * its due time, its worker and the retry room are free at once, the books count it deferred, and
 * a later run goes on counting its attempts from what the store says ({@code priorAttempts}). On
 * both intakes, with owners of both kinds.
 */
@ParameterizedClass
@EnumSource(WorkerPool.IntakeKind.class)
class DeferredRetryTest {
    private final WorkerPool.IntakeKind intake;

    @RegisterExtension
    final Spawner spawn = new Spawner();

    DeferredRetryTest(WorkerPool.IntakeKind intake) {
        this.intake = intake;
    }

    /** An item of a store that keeps deferred retries: its number, and the attempts it had before. */
    record Stored(int number, int attempts) {}

    /** A recording settler that keeps deferred items, as the job table's does. */
    static final class KeepingSettler implements Settler<Stored> {
        final ConcurrentLinkedQueue<Settlement<Stored>> offered = new ConcurrentLinkedQueue<>();

        @Override
        public void settle(List<Settlement<Stored>> batch) {
            offered.addAll(batch);
        }

        @Override
        public boolean keepsDeferred() {
            return true;
        }
    }

    private final ConcurrentLinkedQueue<String> starts = new ConcurrentLinkedQueue<>();

    /** A side effect whose item {@code failing} fails every attempt with an {@link IOException}; the others succeed. */
    private SideEffect<Stored> failing(int failing) {
        return item -> {
            starts.add(item.number() + "/" + ItemContext.current().attempt());
            if (item.number() == failing) {
                throw new IOException("the backend is down for item " + failing);
            }
        };
    }

    private WorkerPool.Builder<Stored, Void> pool(KeepingSettler store, Duration wait, Duration threshold) {
        return WorkerPool.<Stored>forEach(failing(0)).intake(intake).workers(1).settler(store).retryable(IOException.class)
                .maxRetries(3).retryBackoff(Backoff.fixed(wait)).deferRetriesLongerThan(threshold).priorAttempts(Stored::attempts);
    }

    /**
     * WP-29, WP-2, WP-22: a retry due in an hour is the store's at once: item 0's one attempt fails,
     * it is settled Deferred with 1 attempt and a due time an hour away, the one worker goes on
     * with items 1 and 2, and the run completes without waiting; the books count it deferred.
     */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void aLongRetryIsHandedToTheStoreAndTheRunGoesOn(ThreadKind kind) {
        KeepingSettler store = new KeepingSettler();
        WorkerPool<Stored, Void> pool = pool(store, Duration.ofHours(1), Duration.ofSeconds(30)).build();
        Instant before = Instant.now();
        Call<Results<Stored, Void>> owner = spawn.use(kind).call("owner", () -> {
            try (Results<Stored, Void> results = pool.run(List.of(new Stored(0, 0), new Stored(1, 0), new Stored(2, 0)).iterator())) {
                results.forEachRemaining(r -> { });
                return results;
            }
        });
        Results<Stored, Void> results = Objects.requireNonNull(owner.value());
        assertThat(assertLedgerExact(results)).isEqualTo(new RunOutcome.Completed<Stored>(false));
        assertThat(results.stats().deferred()).isOne();
        assertThat(results.stats().retried()).as("retries made in this run").isZero();
        assertThat(starts).containsExactly("0/1", "1/1", "2/1");
        List<Settlement.Deferred<Stored>> deferred = store.offered.stream().<Settlement.Deferred<Stored>>mapMulti((s, out) -> {
            if (s instanceof Settlement.Deferred<Stored> d) {
                out.accept(d);
            }
        }).toList();
        assertThat(deferred).singleElement().satisfies(d -> {
            assertThat(d.item().number()).isZero();
            assertThat(d.attempts()).isOne();
            assertThat(d.retryAt()).isAfterOrEqualTo(before.plus(Duration.ofMinutes(59)));
        });
        assertThat(store.offered).hasSize(3);
        assertNoThreadsLeft(pool);
    }

    /**
     * WP-29, WP-5: a later run goes on counting where the store left off: item 0 comes back saying
     * it had 3 attempts; its next attempt is number 4, the last of {@code maxRetries(3)}, and when it
     * fails it fails for good, "after 4 attempts", never deferred again.
     */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void aLaterRunGoesOnCountingTheAttempts(ThreadKind kind) {
        KeepingSettler store = new KeepingSettler();
        WorkerPool<Stored, Void> pool = pool(store, Duration.ofHours(1), Duration.ofSeconds(30)).build();
        Call<RunOutcome<Stored>> owner = spawn.use(kind).call("owner", () -> pool.drain(List.of(new Stored(0, 3)).iterator()));
        RunOutcome<Stored> outcome = Objects.requireNonNull(owner.value());
        assertThat(starts).containsExactly("0/4");
        assertThat(outcome.failures()).singleElement().satisfies(f -> assertThat(f.attempts()).isEqualTo(4));
        assertThat(store.offered).singleElement().isInstanceOf(Settlement.Failed.class);
        assertNoThreadsLeft(pool);
    }

    /** WP-29, WP-28: a retry shorter than the threshold waits in the run as before: nothing is deferred. */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void aShortRetryStaysInTheRun(ThreadKind kind) {
        KeepingSettler store = new KeepingSettler();
        WorkerPool<Stored, Void> pool = WorkerPool.<Stored>forEach(item -> {
            starts.add(item.number() + "/" + ItemContext.current().attempt());
            if (ItemContext.current().attempt() == 1) {
                throw new IOException("once");
            }
        }).intake(intake).workers(1).settler(store).retryable(IOException.class).maxRetries(1)
                .retryBackoff(Backoff.fixed(Duration.ofMillis(20))).deferRetriesLongerThan(Duration.ofSeconds(30))
                .priorAttempts(Stored::attempts).build();
        Call<RunOutcome<Stored>> owner = spawn.use(kind).call("owner", () -> pool.drain(List.of(new Stored(0, 0)).iterator()));
        assertThat(owner.value()).isEqualTo(new RunOutcome.Completed<Stored>(false));
        assertThat(starts).containsExactly("0/1", "0/2");
        assertThat(store.offered).singleElement().isInstanceOf(Settlement.Succeeded.class);
        assertNoThreadsLeft(pool);
    }

    /** WP-29: a priorAttempts that throws, or says a negative number or one with no next, fails its item alone (a service's run goes on), at once, with that as its cause. */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void aPriorAttemptsThatThrowsFailsItsItemAlone(ThreadKind kind) {
        KeepingSettler store = new KeepingSettler();
        WorkerPool<Stored, Void> pool = WorkerPool.<Stored>forEach(item -> starts.add(item.number() + "/" + ItemContext.current().attempt()))
                .intake(intake).workers(1).settler(store).priorAttempts(item -> {
                    if (item.number() == 1) {
                        throw new IllegalStateException("no such row");
                    }
                    return item.attempts();
                }).build();
        Call<RunOutcome<Stored>> owner = spawn.use(kind).call("owner",
                () -> pool.drain(List.of(new Stored(0, 0), new Stored(1, 0), new Stored(2, -1), new Stored(4, Integer.MAX_VALUE),
                        new Stored(3, 0)).iterator()));
        RunOutcome<Stored> outcome = Objects.requireNonNull(owner.value());
        assertThat(starts).containsExactly("0/1", "3/1");
        assertThat(outcome.failures()).extracting(f -> f.item().number()).containsExactly(1, 2, 4);
        assertThat(outcome.failures()).extracting(f -> f.cause().getMessage())
                .containsExactly("no such row", "priorAttempts gave -1 for an item: it must be between 0 and 2147483646",
                        "priorAttempts gave 2147483647 for an item: it must be between 0 and 2147483646");
        assertNoThreadsLeft(pool);
    }

    /**
     * WP-29, WP-18: a priorAttempts that throws a VirtualMachineError (other than a stack
     * overflow, which is the call's own) crashes the run, as any callback's does: the run ends
     * {@code Crashed} with it, the item it was asked about is released to the store as cancelled,
     * never attempted, and the books are exact.
     */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void aPriorAttemptsThatThrowsAVirtualMachineErrorCrashesTheRun(ThreadKind kind) {
        KeepingSettler store = new KeepingSettler();
        OutOfMemoryError oom = new OutOfMemoryError("priorAttempts ran out of memory, simulated");
        WorkerPool<Stored, Void> pool = WorkerPool.<Stored>forEach(item -> starts.add(item.number() + "/" + ItemContext.current().attempt()))
                .intake(intake).workers(1).settler(store).priorAttempts(item -> {
                    if (item.number() == 1) {
                        throw oom;
                    }
                    return item.attempts();
                }).build();
        Call<RunOutcome<Stored>> owner = spawn.use(kind).call("owner", () -> {
            try (Results<Stored, Void> results = pool.run(List.of(new Stored(0, 0), new Stored(1, 0), new Stored(2, 0)).iterator())) {
                try {
                    Workloads.drain(results);
                } catch (VirtualMachineError expected) {
                    // the outcome says which
                }
                return Workloads.assertLedgerExact(results);
            }
        });
        RunOutcome<Stored> outcome = Objects.requireNonNull(owner.value());
        assertThat(outcome).isInstanceOfSatisfying(RunOutcome.Crashed.class, crashed -> assertThat(crashed.cause()).isSameAs(oom));
        assertThat(starts).doesNotContain("1/1");
        assertThat(store.offered).filteredOn(s -> s.item().number() == 1).singleElement()
                .isInstanceOfSatisfying(Settlement.Released.class, released -> assertThat(released.why()).isEqualTo(Settlement.Why.CANCELLED));
        assertNoThreadsLeft(pool);
    }

    /**
     * WP-29, WP-2, WP-12: an abort that races a deferral (a handler aborts the run and then fails,
     * retryably): whichever comes first, every item pulled has exactly one settlement, the books
     * are exact, and the aborting item is deferred with its attempt counted or released as
     * cancelled. Repeated, since the two race.
     */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void anAbortRacingADeferralLeavesOneSettlementPerItem(ThreadKind kind) {
        for (int round = 0; round < 10; round++) {
            KeepingSettler store = new KeepingSettler();
            java.util.concurrent.atomic.AtomicReference<WorkerPool<Stored, Void>> self = new java.util.concurrent.atomic.AtomicReference<>();
            WorkerPool<Stored, Void> pool = WorkerPool.<Stored>forEach(item -> {
                if (item.number() == 2) {
                    Objects.requireNonNull(self.get()).abort();
                }
                throw new IOException("down");
            }).intake(intake).workers(2).settler(store).retryable(IOException.class).maxRetries(3)
                    .retryBackoff(Backoff.fixed(Duration.ofHours(1))).deferRetriesLongerThan(Duration.ofSeconds(30))
                    .priorAttempts(Stored::attempts).build();
            self.set(pool);
            Call<Results<Stored, Void>> owner = spawn.use(kind).call("owner", () -> {
                try (Results<Stored, Void> results = pool.run(java.util.stream.Stream.iterate(0, n -> n + 1).map(n -> new Stored(n, 0)))) {
                    try {
                        results.forEachRemaining(r -> { });
                    } catch (PoolAborted expected) {
                        // the abort's
                    }
                    return results;
                }
            });
            Results<Stored, Void> results = Objects.requireNonNull(owner.value());
            assertLedgerExact(results);
            assertThat(store.offered).extracting(s -> s.item().number()).as("one settlement per item, round " + round)
                    .doesNotHaveDuplicates().hasSize((int) results.stats().pulled());
            assertThat(store.offered).filteredOn(s -> s.item().number() == 2).singleElement()
                    .matches(s -> s instanceof Settlement.Deferred<Stored> d ? d.attempts() == 1
                            : s instanceof Settlement.Released<Stored> r && r.why() == Settlement.Why.CANCELLED, "deferred or cancelled");
            assertNoThreadsLeft(pool);
        }
    }

    /** WP-29: a deferral needs a backoff, a positive threshold, priorAttempts and a settler that keeps deferred items; each is refused by name. */
    @Test
    void aDeferralWithoutAStoreThatKeepsItIsRefused() {
        SideEffect<Stored> nothing = item -> { };
        assertThatThrownBy(() -> WorkerPool.<Stored>forEach(nothing).retryable(IOException.class).maxRetries(1)
                .retryBackoff(Backoff.fixed(Duration.ofMinutes(1))).deferRetriesLongerThan(Duration.ofSeconds(1))
                .settler(batch -> { }).build())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("needs a settler whose keepsDeferred() is true");
        assertThatThrownBy(() -> WorkerPool.<Stored>forEach(nothing).retryable(IOException.class).maxRetries(1)
                .retryBackoff(Backoff.fixed(Duration.ofMinutes(1))).deferRetriesLongerThan(Duration.ofSeconds(1)).build())
                .hasMessageContaining("needs a settler that keeps deferred items");
        assertThatThrownBy(() -> WorkerPool.<Stored>forEach(nothing).retryable(IOException.class).maxRetries(1)
                .deferRetriesLongerThan(Duration.ofSeconds(1)).settler(new KeepingSettler()).build())
                .hasMessageContaining("has no effect without a retryBackoff");
        assertThatThrownBy(() -> WorkerPool.<Stored>forEach(nothing).retryable(IOException.class).maxRetries(1)
                .retryBackoff(Backoff.fixed(Duration.ofMinutes(1))).deferRetriesLongerThan(Duration.ofSeconds(1))
                .settler(new KeepingSettler()).build())
                .hasMessageContaining("needs priorAttempts(...)");
        assertThatThrownBy(() -> WorkerPool.<Stored>forEach(nothing).retryable(IOException.class).maxRetries(1)
                .retryBackoff(Backoff.fixed(Duration.ofMinutes(1))).deferRetriesLongerThan(Duration.ZERO)
                .settler(new KeepingSettler()).build())
                .hasMessageContaining("deferRetriesLongerThan must be positive");
    }
}
