package dev.drain.queue;

import static dev.drain.queue.Queues.blockedGetter;
import static dev.drain.queue.Queues.blockedJoiner;
import static dev.drain.queue.Queues.endings;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatNoException;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.drain.support.Bounds;
import dev.drain.support.Call;
import dev.drain.support.Spawner;
import dev.drain.support.ThreadKind;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The eighteen shutdown tests of CPython 3.13's {@code Lib/test/test_queue.py}
 * ({@code BaseQueueTestMixin}), which CPython runs for {@code queue.Queue}, {@code LifoQueue} and
 * {@code PriorityQueue}; here for each {@link QueueKind} on each {@link ThreadKind}.
 *
 * <p>They were written for {@code queue.Queue}, whose threads block; {@code ShutdownQueue} has the
 * asyncio semantics, which agree with {@code queue.Queue} on everything these tests check (the one
 * difference, asyncio's single-check {@code join()}, gives the same outcome here). How they are
 * rendered:
 * <ul>
 *   <li>The "one thread" tests run their whole body on one thread of the parameter kind, so that
 *       a call that wrongly blocks fails the test after a bounded wait instead of hanging it; an
 *       assertion that fails there ends that call, and the test's thread rethrows it.
 *   <li>CPython's {@code go} event is the {@link #go} latch; CPython's {@code results} list is the
 *       outcome of each {@link Call}, asserted on the test's thread after the call has ended.
 *   <li>A thread that CPython starts without a {@code go} to wait for and that should block
 *       ({@code join()}, the pending {@code get()}) is waited for until it is in line before the
 *       test goes on, so the test checks what it names on every run rather than on most.
 *   <li>A {@code put} that CPython makes on a queue with room only to fill it is a
 *       {@code putNowait}, which cannot wait.
 * </ul>
 */
@ParameterizedClass(name = "{0}, {1} threads")
@MethodSource("kinds")
class CPythonThreadingShutdownTest {
    static Stream<Arguments> kinds() {
        return Stream.of(QueueKind.values()).flatMap(kind ->
                Stream.of(ThreadKind.values()).map(threads -> Arguments.of(kind, threads)));
    }

    @RegisterExtension
    final Spawner spawn = new Spawner();

    private final QueueKind kind;

    /** CPython's {@code go} event: the threads that wait for it start their call once it opens. */
    private final CountDownLatch go = new CountDownLatch(1);

    CPythonThreadingShutdownTest(QueueKind kind, ThreadKind threads) {
        this.kind = kind;
        spawn.use(threads);
    }

    // ---- one thread ----------------------------------------------------------------------------

    /** SQ-04, SQ-05 (test_shutdown_empty): on a shut-down empty queue, put throws QueueShutDown and a blocking get throws it instead of waiting. */
    @Test
    void shutdownEmpty() {
        ShutdownQueue<String> q = kind.create(0);
        inOneThread(() -> {
            q.shutdown();
            assertThatThrownBy(() -> q.put("data")).isInstanceOf(QueueShutDown.class);
            assertThatThrownBy(q::get).isInstanceOf(QueueShutDown.class);
        });
    }

    /** SQ-05 (test_shutdown_nonempty): after a graceful shutdown get still returns the item left, then throws QueueShutDown. */
    @Test
    void shutdownNonempty() {
        ShutdownQueue<String> q = kind.create(0);
        inOneThread(() -> {
            q.put("data");
            q.shutdown();
            assertThat(q.get()).isEqualTo("data");
            assertThatThrownBy(q::get).isInstanceOf(QueueShutDown.class);
        });
    }

    /** SQ-08 (test_shutdown_immediate): after an immediate shutdown get throws QueueShutDown although an item had been put. */
    @Test
    void shutdownImmediate() {
        ShutdownQueue<String> q = kind.create(0);
        inOneThread(() -> {
            q.put("data");
            q.shutdown(true);
            assertThatThrownBy(q::get).isInstanceOf(QueueShutDown.class);
        });
    }

    /** SQ-09 (test_shutdown_allowed_transitions): open, then graceful, then immediate, then graceful again are all allowed, and the queue stays shut down. */
    @Test
    void shutdownAllowedTransitions() {
        ShutdownQueue<String> q = kind.create(0);
        inOneThread(() -> {
            assertThat(q.isShutdown()).isFalse();
            q.shutdown();
            assertThat(q.isShutdown()).isTrue();
            q.shutdown(true);
            assertThat(q.isShutdown()).isTrue();
            assertThatNoException().isThrownBy(() -> q.shutdown(false));
        });
    }

    /**
     * SQ-05, SQ-10, SQ-11 (test_shutdown_all_methods_in_one_thread): after a graceful shutdown of
     * a full queue, puts throw QueueShutDown, both items can still be taken and marked done so
     * that join() returns, and then every kind of get throws QueueShutDown.
     */
    @Test
    void shutdownAllMethodsInOneThread() {
        ShutdownQueue<String> q = kind.create(2);
        inOneThread(() -> {
            q.put("L");
            q.putNowait("O");
            q.shutdown(false);
            assertThatThrownBy(() -> q.put("E")).isInstanceOf(QueueShutDown.class);
            assertThatThrownBy(() -> q.putNowait("W")).isInstanceOf(QueueShutDown.class);
            assertThat(q.get()).isIn("L", "O");
            q.taskDone();
            assertThat(q.get()).isIn("L", "O");
            q.taskDone();
            q.join();
            assertThatThrownBy(q::get).isInstanceOf(QueueShutDown.class);
            assertThatThrownBy(q::getNowait).isInstanceOf(QueueShutDown.class);
            assertThatThrownBy(() -> q.get(Duration.ofSeconds(1))).isInstanceOf(QueueShutDown.class);
        });
    }

    /**
     * SQ-08, SQ-10 (test_shutdown_immediate_all_methods_in_one_thread): after an immediate
     * shutdown of a full queue, puts and gets throw QueueShutDown, taskDone() has nothing left to
     * mark done, and join() returns.
     */
    @Test
    void shutdownImmediateAllMethodsInOneThread() {
        ShutdownQueue<String> q = kind.create(2);
        inOneThread(() -> {
            q.put("L");
            q.putNowait("O");
            q.shutdown(true);
            assertThatThrownBy(() -> q.put("E")).isInstanceOf(QueueShutDown.class);
            assertThatThrownBy(() -> q.putNowait("W")).isInstanceOf(QueueShutDown.class);
            assertThatThrownBy(q::get).isInstanceOf(QueueShutDown.class);
            assertThatThrownBy(q::getNowait).isInstanceOf(QueueShutDown.class);
            assertThatThrownBy(q::taskDone).isInstanceOf(IllegalStateException.class);
            q.join();
        });
    }

    // ---- many threads --------------------------------------------------------------------------

    /**
     * SQ-07 (test_shutdown_all_methods_in_many_threads): when a writer shuts the queue down
     * gracefully in the middle of a many-producer, many-consumer run, every reader ends by
     * QueueShutDown once the queue is empty.
     */
    @Test
    void shutdownAllMethodsInManyThreads() throws Exception {
        manyThreads(false);
    }

    /**
     * SQ-08 (test_shutdown_immediate_all_methods_in_many_threads): when a writer shuts the queue
     * down immediately in the middle of a many-producer, many-consumer run, the queue is empty at
     * once, every reader ends by QueueShutDown, and every join() returns.
     */
    @Test
    void shutdownImmediateAllMethodsInManyThreads() throws Exception {
        manyThreads(true);
    }

    // CPython: 4 writers, 6 readers, 2 joiners, 64 Ki messages. Scaled down so that a run takes
    // milliseconds; the structure (barrier, shutdown half-way through the second phase) is kept.
    private static final int WRITERS = 4;
    private static final int READERS = 6;
    private static final int JOINERS = 2;
    private static final int MESSAGES_PER_WRITER = 1024;
    /** A writer that reaches this message asks for the shutdown; it puts half as many before the barrier. */
    private static final int SHUTDOWN_AT = MESSAGES_PER_WRITER / 2;

    private void manyThreads(boolean immediate) throws Exception {
        ShutdownQueue<Integer> q = kind.create(0);
        CyclicBarrier start = new CyclicBarrier(WRITERS + READERS + (immediate ? JOINERS : 0));
        AtomicBoolean shutdownRequested = new AtomicBoolean();
        CountDownLatch shutdownNow = new CountDownLatch(1);

        List<Call<Boolean>> writers = new ArrayList<>();
        for (int w = 0; w < WRITERS; w++) {
            writers.add(spawn.call("writer " + w, () -> {
                for (int i = 0; i < SHUTDOWN_AT / 2; i++) {
                    q.put(i);
                }
                await(start);
                boolean askedForShutdown = false;
                for (int i = SHUTDOWN_AT / 2; i < MESSAGES_PER_WRITER; i++) {
                    try {
                        q.put(i);
                    } catch (QueueShutDown e) {
                        break;
                    }
                    if (i == SHUTDOWN_AT && shutdownRequested.compareAndSet(false, true)) {
                        askedForShutdown = true;
                        shutdownNow.countDown();
                    }
                }
                return askedForShutdown;
            }));
        }
        List<Call<Void>> readers = new ArrayList<>();
        for (int r = 0; r < READERS; r++) {
            readers.add(spawn.run("reader " + r, () -> {
                q.get(); // at least one item each before the barrier
                q.taskDone();
                await(start);
                while (true) {
                    try {
                        q.getNowait();
                        q.taskDone();
                    } catch (QueueShutDown e) {
                        return; // the one way out: CPython records True here
                    } catch (QueueEmpty e) {
                        pollAgain();
                    }
                }
            }));
        }
        Call<Integer> shutdowner = spawn.call("shutdown", () -> {
            await(shutdownNow);
            q.shutdown(immediate);
            return q.qsize();
        });
        List<Call<Void>> joiners = new ArrayList<>();
        if (immediate) {
            for (int j = 0; j < JOINERS; j++) {
                joiners.add(spawn.run("joiner " + j, () -> {
                    await(start);
                    q.join();
                }));
            }
        }

        long askedForShutdown = writers.stream().filter(writer -> Boolean.TRUE.equals(writer.value())).count();
        assertThat(askedForShutdown).as("writers that asked for the shutdown").isOne();
        assertThat(endings(readers)).as("how the readers ended").containsOnly("returned");
        Integer leftAtShutdown = shutdowner.value();
        if (immediate) {
            assertThat(leftAtShutdown).as("qsize() right after shutdown(true)").isZero();
            assertThat(q.empty()).isTrue();
            assertThat(endings(joiners)).as("how the joiners ended").containsOnly("returned");
        }
    }

    // ---- getters, putters and joiners released by a shutdown -----------------------------------

    /** SQ-05 (test_shutdown_get): after a graceful shutdown of a full queue, three getters take its two items and exactly one throws QueueShutDown. */
    @Test
    void shutdownGet() throws Exception {
        ShutdownQueue<String> q = full("Y", "D");
        List<Call<String>> getters = List.of(
                callAfterGo("getter 1", q::get), callAfterGo("getter 2", q::get), callAfterGo("getter 3", q::get));

        q.shutdown(false);
        go.countDown();

        assertThat(endings(getters)).containsExactlyInAnyOrder("Y", "D", "QueueShutDown");
    }

    /** SQ-08 (test_shutdown_immediate_get): after an immediate shutdown of a full queue, every getter throws QueueShutDown. */
    @Test
    void shutdownImmediateGet() throws Exception {
        ShutdownQueue<String> q = full("Y", "D");
        List<Call<String>> getters = List.of(callAfterGo("getter 1", q::get), callAfterGo("getter 2", q::get));

        q.shutdown(true);
        go.countDown();

        assertThat(endings(getters)).containsOnly("QueueShutDown");
    }

    /** SQ-04 (test_shutdown_put): after a graceful shutdown of a full queue, every putter throws QueueShutDown. */
    @Test
    void shutdownPut() throws Exception {
        shutdownPut(false);
    }

    /**
     * SQ-04 (test_shutdown_immediate_put): after an immediate shutdown of a full queue, which
     * leaves it with room, every putter throws QueueShutDown.
     *
     * <p>CPython's version does not test what its name says: its helper ignores {@code immediate}
     * and calls {@code shutdown()}, so it repeats test_shutdown_put (CPython's test_shutdown_immediate_put never shuts down immediately). This
     * port shuts down immediately, as intended.
     */
    @Test
    void shutdownImmediatePut() throws Exception {
        shutdownPut(true);
    }

    private void shutdownPut(boolean immediate) throws Exception {
        ShutdownQueue<String> q = full("Y", "D");
        List<Call<Void>> putters = List.of(
                runAfterGo("putter E", () -> q.put("E")), runAfterGo("putter W", () -> q.put("W")));

        q.shutdown(immediate);
        go.countDown();

        assertThat(endings(putters)).containsOnly("QueueShutDown");
    }

    /** SQ-10, SQ-11 (test_shutdown_join): after a graceful shutdown, the waiting joiners return once a getter takes the last item and marks it done. */
    @Test
    void shutdownJoin() throws Exception {
        shutdownJoin(false);
    }

    /** SQ-08, SQ-11 (test_shutdown_immediate_join): an immediate shutdown that drains the only unfinished item releases the waiting joiners. */
    @Test
    void shutdownImmediateJoin() throws Exception {
        shutdownJoin(true);
    }

    private void shutdownJoin(boolean immediate) throws Exception {
        ShutdownQueue<String> q = kind.create(0);
        q.putNowait("Y");
        List<Call<Void>> joiners = List.of(blockedJoiner(spawn, q, "joiner 1"), blockedJoiner(spawn, q, "joiner 2"));
        List<Call<String>> getters = immediate ? List.of() : List.of(callAfterGo("getter", () -> getAndMarkDone(q)));

        q.shutdown(immediate);
        go.countDown();

        assertThat(endings(getters)).isEqualTo(immediate ? List.of() : List.of("Y"));
        assertThat(endings(joiners)).containsOnly("returned");
    }

    /** SQ-04, SQ-11 (test_shutdown_put_join): after a graceful shutdown a putter throws QueueShutDown, and the joiner returns once the item left is taken and marked done. */
    @Test
    void shutdownPutJoin() throws Exception {
        shutdownPutJoin(false);
    }

    /** SQ-04, SQ-08 (test_shutdown_immediate_put_join): after an immediate shutdown a putter throws QueueShutDown, the item left is gone, and the joiner returns. */
    @Test
    void shutdownImmediatePutJoin() throws Exception {
        shutdownPutJoin(true);
    }

    private void shutdownPutJoin(boolean immediate) throws Exception {
        ShutdownQueue<String> q = kind.create(2);
        q.putNowait("Y"); // not full
        Call<Void> putter = runAfterGo("putter E", () -> q.put("E"));
        Call<Void> joiner = blockedJoiner(spawn, q, "joiner");
        assertThat(q.unfinishedTasks()).isEqualTo(1);

        q.shutdown(immediate);
        go.countDown();

        if (immediate) {
            assertThatThrownBy(q::getNowait).isInstanceOf(QueueShutDown.class);
        } else {
            assertThat(spawn.call("get", q::get).value()).isEqualTo("Y");
            q.taskDone();
        }
        putter.thrown(QueueShutDown.class);
        joiner.value();
    }

    /**
     * SQ-05, SQ-11 (test_shutdown_get_task_done_join): getters racing a graceful shutdown of a
     * full queue each take an item and mark it done, and the waiting joiners return.
     */
    @Test
    void shutdownGetTaskDoneJoin() throws Exception {
        ShutdownQueue<String> q = full("Y", "D");
        assertThat(q.unfinishedTasks()).isEqualTo(q.qsize());
        List<Call<String>> getters = List.of(
                callAfterGo("getter 1", () -> getAndMarkDone(q)), callAfterGo("getter 2", () -> getAndMarkDone(q)));
        List<Call<Void>> joiners = List.of(blockedJoiner(spawn, q, "joiner 1"), blockedJoiner(spawn, q, "joiner 2"));

        go.countDown();
        q.shutdown(false); // races the getters, on purpose

        assertThat(endings(getters)).containsExactlyInAnyOrder("Y", "D");
        assertThat(endings(joiners)).containsOnly("returned");
    }

    /** SQ-07 (test_shutdown_pending_get, gh-117531): a graceful shutdown wakes a getter blocked on an empty queue, and it throws QueueShutDown. */
    @Test
    void shutdownPendingGet() {
        ShutdownQueue<String> q = kind.create(0);
        Call<String> getter = blockedGetter(spawn, q, "getter");

        q.shutdown(false);

        getter.thrown(QueueShutDown.class);
    }

    // ---- helpers -------------------------------------------------------------------------------

    /** Runs {@code body} on one thread of the test's kind and waits (bounded) for it; rethrows what it threw. */
    private void inOneThread(Spawner.Action body) {
        spawn.run("the one thread", body).value();
    }

    /** Starts {@code body} on a new thread that first waits for {@link #go}: CPython's helpers' {@code go.wait()}. */
    private <V> Call<V> callAfterGo(String name, Call.Body<V> body) {
        return spawn.call(name, () -> {
            await(go);
            return body.run();
        });
    }

    /** Starts {@code body}, which returns nothing, on a new thread that first waits for {@link #go}. */
    private Call<Void> runAfterGo(String name, Spawner.Action body) {
        return callAfterGo(name, () -> {
            body.run();
            return null;
        });
    }

    /** CPython's {@code _get_task_done}: get an item and mark it done. */
    private static String getAndMarkDone(ShutdownQueue<String> q) throws InterruptedException, QueueShutDown {
        String item = q.get();
        q.taskDone();
        return item;
    }

    /** A queue of this test's kind, bounded by and filled with {@code items}. */
    private ShutdownQueue<String> full(String... items) throws QueueShutDown, QueueFull {
        ShutdownQueue<String> q = kind.create(items.length);
        for (String item : items) {
            q.putNowait(item);
        }
        return q;
    }

    /**
     * What a reader does when it finds the queue empty before the shutdown: let another thread
     * run. CPython's reader spins and the interpreter switches threads under it; a virtual thread
     * is never preempted, so a spinning reader gives its carrier up itself, rather than leave the
     * writers and the shutdown thread to wait until contention on the queue's lock parks it.
     */
    @SuppressWarnings("ThreadPriorityCheck") // yielding is the point here, see above
    private static void pollAgain() {
        Thread.yield();
    }

    private static void await(CountDownLatch latch) throws InterruptedException {
        if (!latch.await(Bounds.WAIT.toNanos(), TimeUnit.NANOSECONDS)) {
            throw new AssertionError("latch did not open within " + Bounds.WAIT);
        }
    }

    private static void await(CyclicBarrier barrier) throws Exception {
        barrier.await(Bounds.WAIT.toNanos(), TimeUnit.NANOSECONDS);
    }
}
