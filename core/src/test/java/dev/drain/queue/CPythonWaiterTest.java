package dev.drain.queue;

import static dev.drain.queue.Queues.blockedGetter;
import static dev.drain.queue.Queues.blockedPutter;
import static dev.drain.queue.Queues.endings;
import static dev.drain.queue.Queues.underLock;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.drain.support.Bounds;
import dev.drain.support.Call;
import dev.drain.support.Spawner;
import dev.drain.support.ThreadKind;
import dev.drain.support.Waits;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The tests of CPython 3.13's {@code Lib/test/test_asyncio/test_queues.py} that define the waiter
 * lines and cancellation, which the shutdown code relies on: who waits in line, who leaves it, and
 * what a woken waiter that is cancelled does with its wake-up.
 *
 * <p>Python to Java: {@code task.cancel()} is {@link Thread#interrupt()}, and
 * {@code CancelledError} is {@link InterruptedException}; {@code asyncio.wait_for(get(), t)} is
 * the timed {@code get(t)}; {@code len(q._getters)} and {@code len(q._putters)} are
 * {@code waitingGetters()} and {@code waitingPutters()}. A task woken by a put or get and cancelled
 * before it runs (cancel right after the {@code put_nowait} or {@code get_nowait}, with no
 * {@code await} between them) is a thread woken and interrupted inside
 * {@link Queues#underLock}, so it is still in transit when the interrupt comes, on every run.
 * CPython runs most of these only for {@code asyncio.Queue}; those whose outcome depends on the
 * order run here for every {@link QueueKind}, the rest for FIFO. Where CPython awaits a
 * {@code put} on a queue with room or a {@code get} on a non-empty one only to set up or finish a
 * scenario, the port calls {@code putNowait} or {@code getNowait}, which cannot wait.
 */
class CPythonWaiterTest {
    static Stream<Arguments> everyKind() {
        return Stream.of(QueueKind.values()).flatMap(kind ->
                Stream.of(ThreadKind.values()).map(threads -> Arguments.of(kind, threads)));
    }

    @RegisterExtension
    final Spawner spawn = new Spawner();

    /** SQ-13 (test_get_cancelled_race): an interrupted getter leaves the line, so the next put goes to the getter behind it. */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void getCancelledRace(ThreadKind threads) throws Exception {
        spawn.use(threads);
        ShutdownQueue<String> q = ShutdownQueue.fifo(0);
        Call<String> first = blockedGetter(spawn, q, "getter 1");
        Call<String> second = blockedGetter(spawn, q, "getter 2");

        first.thread().interrupt();
        first.thrown(InterruptedException.class);
        assertThat(q.waitingGetters()).isEqualTo(1);
        q.putNowait("a");

        assertThat(second.value()).isEqualTo("a");
    }

    /**
     * SQ-14 (test_get_cancel_drop_one_pending_reader): a getter woken by a put and interrupted
     * before it runs drops nothing, so a new get receives the first of the two items put.
     */
    @ParameterizedTest
    @MethodSource("everyKind")
    void getCancelDropOnePendingReader(QueueKind kind, ThreadKind threads) throws Exception {
        spawn.use(threads);
        ShutdownQueue<Integer> q = kind.create(0);
        Call<Integer> reader = blockedGetter(spawn, q, "reader");

        underLock(q, () -> {
            q.putNowait(1); // wakes the reader
            q.putNowait(2);
            reader.thread().interrupt();
        });

        reader.thrown(InterruptedException.class);
        List<Integer> inGetOrder = kind.getOrder(List.of(1, 2));
        assertThat(spawn.call("reader again", q::get).value()).isEqualTo(inGetOrder.get(0));
        assertThat(q.itemsInGetOrder()).containsExactly(inGetOrder.get(1));
    }

    /**
     * SQ-14 (test_get_cancel_drop_many_pending_readers): when the first of three getters woken
     * by two puts is interrupted before it runs, it passes its wake-up on, and the other two
     * receive both items.
     */
    @ParameterizedTest
    @MethodSource("everyKind")
    void getCancelDropManyPendingReaders(QueueKind kind, ThreadKind threads) throws Exception {
        spawn.use(threads);
        ShutdownQueue<Integer> q = kind.create(0);
        Call<Integer> reader1 = blockedGetter(spawn, q, "reader 1");
        Call<Integer> reader2 = blockedGetter(spawn, q, "reader 2");
        Call<Integer> reader3 = blockedGetter(spawn, q, "reader 3");

        underLock(q, () -> {
            q.putNowait(1); // wakes reader 1
            q.putNowait(2); // wakes reader 2
            reader1.thread().interrupt();
        });

        reader1.thrown(InterruptedException.class);
        // Which of the two receives which item is not defined, in CPython either.
        assertThat(endings(List.of(reader2, reader3))).containsExactlyInAnyOrder("1", "2");
        assertThat(q.empty()).isTrue();
    }

    /**
     * SQ-14 (test_put_cancel_drop): a putter woken by a get and interrupted before it runs adds
     * nothing, and a new put of the same item then succeeds.
     */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void putCancelDrop(ThreadKind threads) throws Exception {
        spawn.use(threads);
        ShutdownQueue<Integer> q = ShutdownQueue.fifo(1);
        q.putNowait(1);
        Call<Void> writer = blockedPutter(spawn, q, "writer", 2);

        underLock(q, () -> {
            assertThat(q.getNowait()).isEqualTo(1); // wakes the writer
            writer.thread().interrupt();
        });

        writer.thrown(InterruptedException.class);
        assertThat(q.qsize()).isZero();
        spawn.run("writer again", () -> q.put(2)).value();
        assertThat(q.getNowait()).isEqualTo(2);
        assertThat(q.qsize()).isZero();
    }

    /**
     * SQ-13 (test_put_cancelled_race): an interrupted putter leaves the line without adding its
     * item, so the slot freed by the next get goes to the putter behind it.
     */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void putCancelledRace(ThreadKind threads) throws Exception {
        spawn.use(threads);
        ShutdownQueue<String> q = ShutdownQueue.fifo(1);
        spawn.run("put a", () -> q.put("a")).value(); // room: does not wait
        Call<Void> putB = blockedPutter(spawn, q, "put b", "b");
        Call<Void> putX = blockedPutter(spawn, q, "put X", "X");

        putX.thread().interrupt();
        putX.thrown(InterruptedException.class);
        assertThat(q.getNowait()).isEqualTo("a");
        putB.value();
        assertThat(q.getNowait()).isEqualTo("b");

        assertThat(q.qsize()).as("X was never added").isZero();
    }

    /** SQ-15 (test_cancelled_getters_not_being_held_in_self_getters): a get that times out leaves the line. */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void cancelledGettersNotBeingHeldInSelfGetters(ThreadKind threads) {
        spawn.use(threads);
        ShutdownQueue<String> q = ShutdownQueue.fifo(5);

        spawn.call("get(timeout)", () -> q.get(Bounds.SHORT)).thrown(QueueEmpty.class);

        assertThat(q.waitingGetters()).isZero();
    }

    /** SQ-13 (test_cancelled_puts_not_being_held_in_self_putters): a putter interrupted while it waits leaves the line. */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void cancelledPutsNotBeingHeldInSelfPutters(ThreadKind threads) throws Exception {
        spawn.use(threads);
        ShutdownQueue<Integer> q = ShutdownQueue.fifo(1);
        q.putNowait(1);
        Call<Void> putter = blockedPutter(spawn, q, "putter", 1);
        assertThat(q.waitingPutters()).isEqualTo(1);

        putter.thread().interrupt();

        putter.thrown(InterruptedException.class);
        assertThat(q.waitingPutters()).isZero();
    }

    /**
     * SQ-14 (test_cancelled_put_silence_value_error_exception): a putter that a get has already
     * taken out of the line, interrupted before it runs, throws InterruptedException and nothing
     * else.
     */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void cancelledPutSilenceValueErrorException(ThreadKind threads) throws Exception {
        spawn.use(threads);
        ShutdownQueue<Integer> q = ShutdownQueue.fifo(1);
        q.putNowait(1);
        Call<Void> putter = blockedPutter(spawn, q, "putter", 1);

        underLock(q, () -> {
            q.getNowait(); // takes the putter out of the line and wakes it
            putter.thread().interrupt();
        });

        putter.thrown(InterruptedException.class);
        assertThat(q.waitingPutters()).isZero();
    }

    /**
     * SQ-06 (test_why_are_getters_waiting): a producer and a consumer passing five items through
     * a one-slot queue both finish, each put waking the waiting getter and each get the waiting
     * putter.
     */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void whyAreGettersWaiting(ThreadKind threads) {
        spawn.use(threads);
        ShutdownQueue<Integer> q = ShutdownQueue.fifo(1);
        int items = 5;

        Call<Void> producer = spawn.run("producer", () -> {
            for (int i = 0; i < items; i++) {
                q.put(i);
            }
        });
        Call<List<Integer>> consumer = spawn.call("consumer", () -> {
            List<Integer> received = new ArrayList<>();
            for (int i = 0; i < items; i++) {
                received.add(q.get());
            }
            return received;
        });

        producer.value();
        assertThat(consumer.value()).containsExactly(0, 1, 2, 3, 4);
    }

    /**
     * SQ-06 (test_why_are_putters_waiting): when a getter empties a full queue with two putters
     * waiting, each get wakes one putter, and both put their items.
     */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void whyArePuttersWaiting(ThreadKind threads) throws Exception {
        spawn.use(threads);
        ShutdownQueue<Integer> q = ShutdownQueue.fifo(2);
        List<Call<Void>> putters = IntStream.range(0, 4)
                .mapToObj(i -> spawn.run("putter " + i, () -> q.put(i)))
                .toList();
        Waits.until("two putters have put and two wait", () -> q.qsize() == 2 && q.waitingPutters() == 2);

        // CPython's getter task: take as many items as there are, without waiting.
        int available = q.qsize();
        for (int i = 0; i < available; i++) {
            q.getNowait();
        }

        putters.forEach(Call::value);
        assertThat(q.qsize()).isEqualTo(2);
    }

    /**
     * SQ-01 (test_float_maxsize, as an int analogue: Java's maxsize is an int, and Python's
     * maxsize=1.3, which admits two items, becomes maxsize=2): a bounded queue takes items, by
     * putNowait or by put, until qsize() reaches maxsize, and is full then.
     */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void floatMaxsizeAsIntAnalogue(ThreadKind threads) throws Exception {
        spawn.use(threads);
        ShutdownQueue<Integer> q = ShutdownQueue.fifo(2);
        q.putNowait(1);
        q.putNowait(2);
        assertThat(q.full()).isTrue();
        assertThatThrownBy(() -> q.putNowait(3)).isInstanceOf(QueueFull.class);

        ShutdownQueue<Integer> r = ShutdownQueue.fifo(2);
        spawn.run("put 1", () -> r.put(1)).value();
        spawn.run("put 2", () -> r.put(2)).value();
        assertThat(r.full()).isTrue();
    }

    /** SQ-10 (test_task_done_underflow): taskDone() on a fresh queue throws IllegalStateException. */
    @ParameterizedTest
    @EnumSource(QueueKind.class)
    void taskDoneUnderflow(QueueKind kind) {
        ShutdownQueue<Integer> q = kind.create(0);

        assertThatThrownBy(q::taskDone)
                .isInstanceOf(IllegalStateException.class)
                .hasMessage("taskDone() called too many times");
    }

    /** SQ-17 (_QueueJoinTestMixin.test_format): a fresh queue prints {@code maxsize=0}, and with two unfinished tasks {@code maxsize=0 tasks=2}. */
    @ParameterizedTest
    @EnumSource(QueueKind.class)
    void joinFormat(QueueKind kind) throws Exception {
        ShutdownQueue<Integer> q = kind.create(0);
        String name = Queues.pythonName(kind);
        assertThat(q).hasToString("<" + name + " maxsize=0>");

        // CPython sets _unfinished_tasks = 2; here: two items put and taken, not yet marked done.
        q.putNowait(1);
        q.putNowait(2);
        q.getNowait();
        q.getNowait();

        assertThat(q).hasToString("<" + name + " maxsize=0 tasks=2>");
    }
}
