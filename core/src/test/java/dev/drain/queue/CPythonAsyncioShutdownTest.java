package dev.drain.queue;

import static dev.drain.queue.Queues.blockedGetter;
import static dev.drain.queue.Queues.blockedJoiner;
import static dev.drain.queue.Queues.blockedPutter;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.drain.support.Call;
import dev.drain.support.Spawner;
import dev.drain.support.ThreadKind;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The five shutdown tests of CPython 3.13's {@code Lib/test/test_asyncio/test_queues.py}
 * ({@code _QueueShutdownTestMixin}), which CPython runs for {@code Queue}, {@code LifoQueue} and
 * {@code PriorityQueue}; here for each {@link QueueKind}, and each test that starts threads on both
 * {@link ThreadKind}s.
 *
 * <p>How the asyncio scheduling is rendered: the test's thread is the test's task. A task that
 * CPython creates and lets run to its first {@code await} is a thread started with
 * {@link Queues#blockedGetter} (and its siblings), which return once the thread waits in line. A
 * task that CPython creates but that only runs after the shutdown (the {@code join()} tasks of the
 * immediate tests) is also made to wait before the shutdown: that is the deterministic reading, and
 * the stronger one, since the shutdown must then release (or keep) a joiner that is really waiting.
 * Every {@code await} of {@code put}, {@code get} or {@code join} that CPython expects to finish
 * without waiting runs on its own thread too, so that a regression fails the test after a bounded
 * wait instead of hanging it.
 */
@ParameterizedClass(name = "{0}")
@EnumSource(QueueKind.class)
class CPythonAsyncioShutdownTest {
    @RegisterExtension
    final Spawner spawn = new Spawner();

    private final QueueKind kind;

    CPythonAsyncioShutdownTest(QueueKind kind) {
        this.kind = kind;
    }

    /** SQ-17 (test_format): a fresh unbounded queue that has been shut down prints {@code maxsize=0 shutdown}. */
    @Test
    void format() {
        ShutdownQueue<String> q = kind.create(0);
        q.shutdown();
        assertThat(q).hasToString("<" + Queues.pythonName(kind) + " maxsize=0 shutdown>");
    }

    /**
     * SQ-07 (test_shutdown_empty): a graceful shutdown of an empty queue makes the waiting getter
     * and every later put and get throw QueueShutDown, while join() returns.
     */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void shutdownEmpty(ThreadKind threads) throws Exception {
        spawn.use(threads);
        ShutdownQueue<String> q = kind.create(0);
        Call<String> getter = blockedGetter(spawn, q, "getter");

        q.shutdown(false); // unfinished tasks: 0 -> 0

        assertThat(q.qsize()).isZero();
        spawn.run("join", q::join).value();
        getter.thrown(QueueShutDown.class);
        assertPutsAndGetsThrowShutDown(q);
    }

    /**
     * SQ-07 (test_shutdown_nonempty): a graceful shutdown of a full queue makes the waiting putter
     * throw QueueShutDown and keeps the item for one get, and the waiting join() returns only
     * after that item's taskDone().
     */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void shutdownNonempty(ThreadKind threads) throws Exception {
        spawn.use(threads);
        ShutdownQueue<String> q = kind.create(1);
        q.putNowait("data");
        Call<Void> joiner = blockedJoiner(spawn, q, "joiner");
        Call<Void> putter = blockedPutter(spawn, q, "putter", "data2");

        q.shutdown(false); // unfinished tasks: 1 -> 1

        assertThat(q.qsize()).isEqualTo(1);
        putter.thrown(QueueShutDown.class);
        assertThat(spawn.call("get", q::get).value()).isEqualTo("data");
        assertStillWaiting(q, joiner);
        assertPutsAndGetsThrowShutDown(q);

        q.taskDone();
        joiner.value();
        assertThatTaskDoneUnderflows(q);
    }

    /**
     * SQ-08 (test_shutdown_immediate): an immediate shutdown empties the queue and, with no item
     * left unfinished, releases join(), after which every put and get throws QueueShutDown and
     * taskDone() has nothing left to mark done.
     */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void shutdownImmediate(ThreadKind threads) throws Exception {
        spawn.use(threads);
        ShutdownQueue<String> q = kind.create(0);
        q.putNowait("data");
        Call<Void> joiner = blockedJoiner(spawn, q, "joiner");

        q.shutdown(true); // unfinished tasks: 1 -> 0

        assertThat(q.qsize()).isZero();
        joiner.value();
        assertPutsAndGetsThrowShutDown(q);
        assertThatTaskDoneUnderflows(q);
    }

    /**
     * SQ-08 (test_shutdown_immediate_with_unfinished): an immediate shutdown does not release
     * join() while an item taken before it still lacks its taskDone(), and that one taskDone()
     * is then allowed and releases it.
     */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void shutdownImmediateWithUnfinished(ThreadKind threads) throws Exception {
        spawn.use(threads);
        ShutdownQueue<String> q = kind.create(0);
        q.putNowait("data");
        q.putNowait("data");
        Call<Void> joiner = blockedJoiner(spawn, q, "joiner");
        assertThat(spawn.call("get", q::get).value()).isEqualTo("data");

        q.shutdown(true); // unfinished tasks: 2 -> 1

        assertThat(q.qsize()).isZero();
        assertStillWaiting(q, joiner);
        assertPutsAndGetsThrowShutDown(q);

        q.taskDone();
        assertThatTaskDoneUnderflows(q);
        joiner.value();
    }

    /** CPython's checks after a shutdown, on a queue that is now empty: put, putNowait, get and getNowait all throw QueueShutDown. */
    private void assertPutsAndGetsThrowShutDown(ShutdownQueue<String> q) {
        spawn.run("put", () -> q.put("data")).thrown(QueueShutDown.class);
        assertThatThrownBy(() -> q.putNowait("data")).isInstanceOf(QueueShutDown.class);
        spawn.call("get", q::get).thrown(QueueShutDown.class);
        assertThatThrownBy(q::getNowait).isInstanceOf(QueueShutDown.class);
    }

    /** The joiner has not been released: it is still counted among the waiting joiners. */
    private static void assertStillWaiting(ShutdownQueue<?> q, Call<Void> joiner) {
        assertThat(q.waitingJoiners()).as("joiners still waiting").isEqualTo(1);
        assertThat(joiner.isDone()).as("joiner done").isFalse();
    }

    private static void assertThatTaskDoneUnderflows(ShutdownQueue<?> q) {
        assertThatThrownBy(q::taskDone)
                .isInstanceOf(IllegalStateException.class)
                .hasMessage("taskDone() called too many times");
    }
}
