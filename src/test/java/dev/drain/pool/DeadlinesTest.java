package dev.drain.pool;

import static org.assertj.core.api.Assertions.assertThat;

import dev.drain.support.Bounds;
import dev.drain.support.Call;
import dev.drain.support.Spawner;
import dev.drain.support.ThreadKind;
import dev.drain.support.Waits;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * WP-3 through the run's one timer: a supervisor parks without a timeout and the watchdog wakes it
 * once its deadline has passed (decision 0022). Each waiter parks for at most {@link Bounds#WAIT}
 * and reports how long after its deadline it woke, so a watchdog that fails to wake it shows up as
 * a late wake-up, never as a hang. The watchdog and the waiters run on platform and virtual threads.
 */
@ParameterizedClass
@EnumSource(ThreadKind.class)
class DeadlinesTest {
    private static final Duration TIMEOUT = Duration.ofMillis(100);
    /** Much longer than any scheduling delay, much shorter than the waiters' own bound. */
    private static final Duration LATE = Bounds.WAIT.dividedBy(4);

    @RegisterExtension
    final Spawner spawn = new Spawner();
    private final ThreadKind kind;

    DeadlinesTest(ThreadKind kind) {
        this.kind = kind;
    }

    /** Arms {@code slot}, parks until the deadline has passed (at most Bounds.WAIT), and returns how late it woke, in nanoseconds. */
    private static long awaitDeadline(Deadlines deadlines, int slot) {
        long deadline = deadlines.arm(slot);
        try {
            long bound = System.nanoTime() + Bounds.WAIT.toNanos();
            while (System.nanoTime() - deadline < 0 && System.nanoTime() - bound < 0) {
                LockSupport.parkNanos(bound - System.nanoTime()); // no watchdog: wakes only at the bound
            }
            return System.nanoTime() - deadline;
        } finally {
            deadlines.disarm(slot);
        }
    }

    /** Starts a waiter on {@code slot}. */
    private Call<Long> waiter(Deadlines deadlines, int slot) {
        return spawn.use(kind).call("waiter-" + slot, () -> awaitDeadline(deadlines, slot));
    }

    /** {@return how long after its deadline the waiter woke} */
    private static Duration lateness(Call<Long> waiter) {
        return Duration.ofNanos(Objects.requireNonNull(waiter.value()));
    }

    private Call<Void> watchdog(Deadlines deadlines) {
        return spawn.use(kind).run("watchdog", deadlines::watch);
    }

    /** WP-3: a thread parked without a timeout is woken once its deadline has passed, long before its own bound. */
    @Test
    void anOverdueWaiterIsWoken() {
        Deadlines deadlines = new Deadlines(2, TIMEOUT.toNanos());
        Call<Void> watchdog = watchdog(deadlines);
        assertThat(lateness(waiter(deadlines, 0))).as("woken after its deadline, by the watchdog").isGreaterThanOrEqualTo(Duration.ZERO)
                .isLessThan(LATE);
        deadlines.stop();
        watchdog.value();
    }

    /** WP-3: a deadline armed while the watchdog sleeps with nothing to watch is still served: it falls due after the watchdog wakes. */
    @Test
    void aDeadlineArmedWhileTheWatchdogSleepsIsServed() {
        Deadlines deadlines = new Deadlines(1, TIMEOUT.toNanos());
        Call<Void> watchdog = watchdog(deadlines);
        Waits.untilParked(watchdog.thread()); // asleep for a whole timeout: it saw nothing armed
        assertThat(lateness(waiter(deadlines, 0))).isLessThan(LATE);
        deadlines.stop();
        watchdog.value();
    }

    /** WP-3: the watchdog sleeps until the earliest deadline it saw, not for a whole timeout: a deadline armed just after its scan is served on time, not a timeout late. */
    @Test
    void theWatchdogWakesForTheEarliestDeadline() {
        Duration timeout = Duration.ofSeconds(2);
        Deadlines deadlines = new Deadlines(1, timeout.toNanos());
        Call<Void> watchdog = watchdog(deadlines);
        Waits.untilParked(watchdog.thread()); // scanned an empty slot: asleep until a timeout from now
        assertThat(lateness(waiter(deadlines, 0))).as("served at its own deadline, not at the next whole timeout")
                .isLessThan(timeout.dividedBy(2));
        deadlines.stop();
        watchdog.value();
    }

    /** WP-3: every slot is served: workers and the producer armed at different moments are each woken after their own deadline. */
    @Test
    void everySlotIsServed() {
        int slots = 33;
        Deadlines deadlines = new Deadlines(slots, TIMEOUT.toNanos());
        Call<Void> watchdog = watchdog(deadlines);
        List<Call<Long>> waiters = new ArrayList<>();
        for (int worker = -1; worker < slots - 1; worker++) {
            waiters.add(waiter(deadlines, deadlines.slotOf(worker)));
        }
        for (Call<Long> waiter : waiters) {
            assertThat(lateness(waiter)).as(waiter.thread().getName()).isGreaterThanOrEqualTo(Duration.ZERO).isLessThan(LATE);
        }
        deadlines.stop();
        watchdog.value();
    }

    /** WP-3, decision 0015: an interrupt does not end the watchdog; it goes on serving deadlines until it is stopped. */
    @Test
    void anInterruptDoesNotEndTheWatchdog() {
        Deadlines deadlines = new Deadlines(1, TIMEOUT.toNanos());
        Call<Void> watchdog = watchdog(deadlines);
        Waits.untilParked(watchdog.thread());
        watchdog.thread().interrupt();
        assertThat(lateness(waiter(deadlines, 0))).isLessThan(LATE);
        assertThat(watchdog.isDone()).as("the watchdog still runs").isFalse();
        deadlines.stop();
        watchdog.value();
    }

    /** WP-10: stop() ends a watchdog that sleeps for a timeout of an hour at once, and one stopped before it starts returns at once. */
    @Test
    void stopEndsTheWatchdogAtOnce() {
        Deadlines sleeping = new Deadlines(1, Duration.ofHours(1).toNanos());
        Call<Void> watchdog = watchdog(sleeping);
        Waits.untilParked(watchdog.thread());
        sleeping.stop();
        watchdog.value(); // bounded by Bounds.WAIT, far less than an hour

        Deadlines stopped = new Deadlines(1, Duration.ofHours(1).toNanos());
        stopped.stop();
        watchdog(stopped).value();
    }

    /** WP-3: a timeout too long for nanoTime arithmetic (about 292 years) neither overflows into a deadline in the past nor fails. */
    @Test
    void anEnormousTimeoutIsNeverDue() {
        Deadlines deadlines = new Deadlines(1, Long.MAX_VALUE);
        long deadline = deadlines.arm(0);
        assertThat(deadline - System.nanoTime()).as("the deadline is in the future").isPositive();
        deadlines.disarm(0);
    }
}
