package dev.drain.pool;

import static org.assertj.core.api.Assertions.assertThat;

import dev.drain.support.Call;
import dev.drain.support.Spawner;
import dev.drain.support.ThreadKind;
import dev.drain.support.Waits;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * WP-28: the {@link RetryRoom}'s own promises, beneath the pool's: an item is due at its time and
 * not before, the time to the next due is exact, and a worker waiting for the earliest due is
 * woken by an earlier item and by a drop. Times are {@link System#nanoTime()} values the test
 * chooses, except where a worker waits.
 */
class RetryRoomTest {
    @RegisterExtension
    final Spawner spawn = new Spawner();

    private static final long HOUR = TimeUnit.HOURS.toNanos(1);

    /** WP-28: an item is taken at its due time, not a nanosecond before, and once. */
    @Test
    void anItemIsDueAtItsTimeNotBefore() {
        RetryRoom<String> room = new RetryRoom<>(2);
        assertThat(room.pollDue(0)).as("an empty room").isNull();
        assertThat(room.park("a", 2, 1_000)).isEqualTo(RetryRoom.Parked.PARKED);
        assertThat(room.pollDue(999)).as("a nanosecond early").isNull();
        assertThat(room.pollDue(1_000)).isEqualTo(new RetryRoom.Waiting<>("a", 2, 1_000));
        assertThat(room.pollDue(2_000)).as("taken once").isNull();
    }

    /** WP-28: the time to the next due is the earliest item's, at least a nanosecond, and none when nothing waits. */
    @Test
    void theTimeToTheNextDueIsTheEarliestItems() {
        RetryRoom<String> room = new RetryRoom<>(2);
        assertThat(room.nanosToNextDue(0)).as("nothing waits").isEqualTo(Long.MAX_VALUE);
        assertThat(room.park("late", 2, 1_000)).isEqualTo(RetryRoom.Parked.PARKED);
        assertThat(room.park("early", 2, 500)).isEqualTo(RetryRoom.Parked.PARKED);
        assertThat(room.nanosToNextDue(400)).isEqualTo(100);
        assertThat(room.nanosToNextDue(600)).as("past due").isEqualTo(1);
        assertThat(Objects.requireNonNull(room.pollDue(600)).held()).isEqualTo("early");
        assertThat(room.nanosToNextDue(600)).isEqualTo(400);
    }

    /** WP-28: a full room refuses, and a dropped one gives back what waited and takes nothing more. */
    @Test
    void aFullRoomRefusesAndADroppedOneTakesNothing() {
        RetryRoom<String> room = new RetryRoom<>(1);
        assertThat(room.park("a", 2, 1_000)).isEqualTo(RetryRoom.Parked.PARKED);
        assertThat(room.park("b", 2, 1_000)).isEqualTo(RetryRoom.Parked.FULL);
        assertThat(room.drop()).containsExactly(new RetryRoom.Waiting<>("a", 2, 1_000));
        assertThat(room.park("c", 2, 1_000)).isEqualTo(RetryRoom.Parked.DROPPED);
        assertThat(room.pollDue(Long.MAX_VALUE)).isNull();
        assertThat(room.nanosToNextDue(0)).isEqualTo(Long.MAX_VALUE);
    }

    /** {@return a worker of {@code kind} waiting in {@code room}'s {@code awaitDue} for "late", parked there, due in an hour} */
    private Call<RetryRoom.Waiting<String>> waitingForAnItemDueInAnHour(RetryRoom<String> room, ThreadKind kind) {
        assertThat(room.park("late", 2, System.nanoTime() + HOUR)).isEqualTo(RetryRoom.Parked.PARKED);
        Call<RetryRoom.Waiting<String>> worker = spawn.use(kind).call("worker", room::awaitDue);
        Waits.untilParked(worker.thread());
        return worker;
    }

    /** WP-28: a worker waiting for an item due in an hour takes one parked later that is due now, at once. */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void aWaitingWorkerTakesAnEarlierItemParkedLater(ThreadKind kind) {
        RetryRoom<String> room = new RetryRoom<>(2);
        Call<RetryRoom.Waiting<String>> worker = waitingForAnItemDueInAnHour(room, kind);
        assertThat(room.park("now", 3, System.nanoTime())).isEqualTo(RetryRoom.Parked.PARKED);
        assertThat(Objects.requireNonNull(worker.value()).held()).isEqualTo("now");
    }

    /** WP-28, WP-12: a drop wakes a worker waiting for an item due in an hour, with nothing to take. */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void aDropWakesAWaitingWorker(ThreadKind kind) {
        RetryRoom<String> room = new RetryRoom<>(2);
        Call<RetryRoom.Waiting<String>> worker = waitingForAnItemDueInAnHour(room, kind);
        assertThat(room.drop()).extracting(RetryRoom.Waiting::held).containsExactly("late");
        assertThat(worker.value()).isNull();
    }
}
