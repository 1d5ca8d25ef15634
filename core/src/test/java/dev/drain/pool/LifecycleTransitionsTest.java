package dev.drain.pool;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * WP-12, WP-13, WP-19: {@link Lifecycle}'s transitions on their own, against a run's machinery
 * that only records what it is told ({@link Lifecycle.Effects}). Through the pool, an effect that
 * a transition forgets is often covered by another path (the watchdog looks at the phase every
 * {@value Watchdog#OWNER_CHECK_MILLIS} ms, a second abandon finds the run ended); here each
 * transition is held to exactly what it must do, and to doing it once. The driver is an unstarted
 * thread, whose interrupt status records the interrupt a cancellation sends it.
 */
class LifecycleTransitionsTest {

    /** The run's machinery, recording each effect; its intake holds {@code queued} until dropped. */
    private static final class RecordingEffects implements Lifecycle.Effects<Integer> {
        final List<String> effects = new ArrayList<>();
        private final List<Integer> queued;

        RecordingEffects(List<Integer> queued) {
            this.queued = new ArrayList<>(queued);
        }

        @Override
        public void stopIntake() {
            effects.add("stopIntake");
        }

        @Override
        public void abortAt(long deadline) {
            effects.add("abortAt");
        }

        @Override
        public List<Integer> dropIntake() {
            effects.add("dropIntake");
            List<Integer> dropped = List.copyOf(queued);
            queued.clear();
            return dropped;
        }

        @Override
        public void cancelAttempts() {
            effects.add("cancelAttempts");
        }

        @Override
        public void dropOutbox() {
            effects.add("dropOutbox");
        }
    }

    private final Ledger<Integer> ledger = new Ledger<>();
    private final Lifecycle<Integer> lifecycle = new Lifecycle<>("transitions", ledger, new Reporter(null));
    private final RecordingEffects run = new RecordingEffects(List.of(7, 8));
    private final Thread driver = Thread.ofPlatform().unstarted(() -> { });

    /** A lifecycle whose run has started and whose driver has begun. */
    private void started() {
        lifecycle.start(run);
        assertThat(lifecycle.driverStarted(driver)).isTrue();
    }

    /** WP-13: an abandon of a running run drops the intake as discarded, drops the outbox, has the attempts cancelled and wakes the driver, each once, and says it abandoned the run. */
    @Test
    void anAbandonCancelsEverythingOnce() {
        started();
        assertThat(lifecycle.abandon(RunOutcome.Abandoned.Reason.RESULTS_CLOSED)).isTrue();
        assertThat(lifecycle.phase()).isEqualTo(Lifecycle.Phase.ABANDONING);
        assertThat(run.effects).containsExactly("dropIntake", "dropOutbox", "cancelAttempts");
        assertThat(ledger.fates().discarded()).containsExactly(7, 8);
        assertThat(driver.isInterrupted()).as("the driver is woken").isTrue();
    }

    /** WP-19: a second abandon, whatever its reason, does nothing and says so. */
    @Test
    void aSecondAbandonDoesNothing() {
        started();
        boolean _ = lifecycle.abandon(RunOutcome.Abandoned.Reason.SCOPE_CLOSED);
        run.effects.clear();
        assertThat(lifecycle.abandon(RunOutcome.Abandoned.Reason.CONSUMER_INTERRUPTED)).isFalse();
        assertThat(run.effects).isEmpty();
        assertThat(ledger.fates().discarded()).containsExactly(7, 8);
    }

    /** WP-19: once the run is sealed, an abandon does nothing and says so: the run is ending by itself. */
    @Test
    void anAbandonOfASealedRunDoesNothing() {
        started();
        lifecycle.seal();
        assertThat(lifecycle.abandon(RunOutcome.Abandoned.Reason.SCOPE_CLOSED)).isFalse();
        assertThat(run.effects).isEmpty();
        assertThat(driver.isInterrupted()).isFalse();
    }

    /** WP-13: an abandon after an abort drops the outbox, and leaves the attempts to the cancellation the abort began. */
    @Test
    void anAbandonAfterAnAbortOnlyDropsTheOutbox() {
        started();
        lifecycle.abort();
        run.effects.clear();
        assertThat(lifecycle.abandon(RunOutcome.Abandoned.Reason.RESULTS_CLOSED)).isTrue();
        assertThat(run.effects).containsExactly("dropIntake", "dropOutbox");
    }

    /** WP-12: an abort of a running run drops the intake as discarded, has the attempts cancelled and wakes the driver, and leaves the outbox to the consumer. */
    @Test
    void anAbortCancelsTheAttemptsAndWakesTheDriver() {
        started();
        lifecycle.abort();
        assertThat(lifecycle.phase()).isEqualTo(Lifecycle.Phase.ABORTING);
        assertThat(run.effects).containsExactly("dropIntake", "cancelAttempts");
        assertThat(ledger.fates().discarded()).containsExactly(7, 8);
        assertThat(driver.isInterrupted()).isTrue();
    }

    /** WP-19: an abort asked for before the run is applied when it starts, and the driver, once it starts, forks nothing. */
    @Test
    void anAbortBeforeTheRunIsAppliedAtItsStart() {
        lifecycle.abort();
        assertThat(lifecycle.phase()).isEqualTo(Lifecycle.Phase.NEW);
        lifecycle.start(run);
        assertThat(lifecycle.phase()).isEqualTo(Lifecycle.Phase.ABORTING);
        assertThat(run.effects).containsExactly("dropIntake", "cancelAttempts");
        assertThat(lifecycle.driverStarted(driver)).isFalse();
    }

    /** WP-18: a crash of a running run cancels it as an abort does, and its outcome is the crash. */
    @Test
    void aCrashCancelsTheRun() {
        started();
        Error fatal = new OutOfMemoryError("a test's");
        lifecycle.crashed(fatal);
        assertThat(run.effects).containsExactly("dropIntake", "cancelAttempts");
        lifecycle.seal();
        assertThat(lifecycle.end()).isInstanceOfSatisfying(RunOutcome.Crashed.class,
                crashed -> assertThat(crashed.cause()).isSameAs(fatal));
    }

    /** WP-19: a stop of a running run stops the intake and nothing else: the queued items drain. */
    @Test
    void aStopOnlyStopsTheIntake() {
        started();
        lifecycle.requestStop();
        assertThat(lifecycle.phase()).isEqualTo(Lifecycle.Phase.STOPPING);
        assertThat(run.effects).containsExactly("stopIntake");
        assertThat(driver.isInterrupted()).isFalse();
    }

    /** WP-19: the run ends once: a second end is refused, and the outcome stays the first. */
    @Test
    void theRunEndsOnce() {
        started();
        lifecycle.seal();
        RunOutcome<Integer> first = lifecycle.end();
        assertThatThrownBy(lifecycle::end).isInstanceOf(IllegalStateException.class).hasMessageContaining("ENDED");
        assertThat(lifecycle.outcome()).isSameAs(first);
    }

    /** WP-19: the results can be closed only once the run has ended, and closing them again changes nothing. */
    @Test
    void theResultsCloseOnlyAfterTheEnd() {
        started();
        assertThatThrownBy(lifecycle::closed).isInstanceOf(IllegalStateException.class).hasMessageContaining("RUNNING");
        lifecycle.seal();
        RunOutcome<Integer> _ = lifecycle.end();
        lifecycle.closed();
        lifecycle.closed();
        assertThat(lifecycle.phase()).isEqualTo(Lifecycle.Phase.CLOSED);
    }
}
