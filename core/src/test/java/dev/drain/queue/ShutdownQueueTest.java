package dev.drain.queue;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import dev.drain.support.Spawner;
import dev.drain.support.ThreadKind;
import dev.drain.support.Waits;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Example-based conformance: one test per property of each clause of {@code specs/shutdown-queue.md}
 * that a single thread (or a single blocked caller) can show. The CPython ports, the in-transit
 * cases and interruption have classes of their own.
 */
class ShutdownQueueTest {
    @RegisterExtension
    final Spawner spawn = new Spawner();

    /** Puts every item with putNowait, failing the test if the queue refuses one. */
    @SafeVarargs
    static <T> void fill(ShutdownQueue<T> q, T... items) throws QueueShutDown, QueueFull {
        for (T item : items) {
            q.putNowait(item);
        }
    }

    /** Takes every item with getNowait until the queue says it is empty or shut down. */
    static <T> List<T> takeAll(ShutdownQueue<T> q) {
        List<T> taken = new ArrayList<>();
        while (true) {
            try {
                taken.add(q.getNowait());
            } catch (QueueEmpty | QueueShutDown e) {
                return taken;
            }
        }
    }

    @Nested
    class OrdersAndBounds {
        /** SQ-01: each kind hands items out in its own order (FIFO, LIFO, smallest first). */
        @ParameterizedTest
        @EnumSource(QueueKind.class)
        void eachKindHasItsOrder(QueueKind kind) throws Exception {
            ShutdownQueue<Integer> q = kind.create(0);
            fill(q, 2, 3, 1);
            assertThat(takeAll(q)).isEqualTo(kind.getOrder(List.of(2, 3, 1)));
        }

        /** SQ-01: a maxsize of zero or less means unbounded: full() stays false and putNowait never refuses. */
        @ParameterizedTest
        @ValueSource(ints = {0, -1, Integer.MIN_VALUE})
        void nonPositiveMaxsizeIsUnbounded(int maxsize) throws Exception {
            ShutdownQueue<Integer> q = new ShutdownQueue<>(maxsize);
            for (int i = 0; i < 1_000; i++) {
                q.putNowait(i);
            }
            assertThat(q.full()).isFalse();
            assertThat(q.qsize()).isEqualTo(1_000);
            assertThat(q.maxsize()).isEqualTo(maxsize);
        }

        /** SQ-01: a bounded queue is full exactly when it holds maxsize items. */
        @Test
        void boundedQueueIsFullAtMaxsize() throws Exception {
            ShutdownQueue<Integer> q = new ShutdownQueue<>(2);
            q.putNowait(1);
            assertThat(q.full()).isFalse();
            q.putNowait(2);
            assertThat(q.full()).isTrue();
            assertThatThrownBy(() -> q.putNowait(3)).isInstanceOf(QueueFull.class);
        }

        /**
         * SQ-01: a priority queue lays out its items exactly as Python's heapq does (checked
         * against CPython 3.13: heappush of 5, 1, 4, 1, 5, 9, 2, 6 gives [1, 1, 2, 5, 5, 9, 4, 6],
         * and one heappop leaves [1, 5, 2, 5, 6, 9, 4]).
         */
        @Test
        void priorityLayoutIsHeapqLayout() throws Exception {
            ShutdownQueue<Integer> q = ShutdownQueue.priority(0);
            fill(q, 5, 1, 4, 1, 5, 9, 2, 6);
            assertThat(q).hasToString("<PriorityQueue maxsize=0 _queue=[1, 1, 2, 5, 5, 9, 4, 6] tasks=8>");
            q.getNowait();
            // heappop refills the root along the smaller children, then sifts the last item up.
            assertThat(q).hasToString("<PriorityQueue maxsize=0 _queue=[1, 5, 2, 5, 6, 9, 4] tasks=8>");
        }

        /** SQ-01: items that compare equal leave a priority queue in the order heapq gives them. */
        @Test
        void priorityTiesFollowHeapq() throws Exception {
            record Job(int priority, String name) {}
            ShutdownQueue<Job> q = ShutdownQueue.priority(0, Comparator.comparingInt(Job::priority));
            fill(q, new Job(1, "a"), new Job(1, "b"), new Job(1, "c"), new Job(1, "d"));
            // CPython 3.13, heapq with a priority-only __lt__: a, c, b, d.
            assertThat(takeAll(q)).extracting(Job::name).containsExactly("a", "c", "b", "d");
        }
    }

    @Nested
    class CheckOrder {
        /** SQ-02: putNowait on a full queue that is shut down throws QueueShutDown, not QueueFull. */
        @Test
        void putNowaitChecksShutdownBeforeFull() throws Exception {
            ShutdownQueue<Integer> q = new ShutdownQueue<>(1);
            q.putNowait(1);
            q.shutdown();
            assertThatThrownBy(() -> q.putNowait(2)).isInstanceOf(QueueShutDown.class);
        }

        /** SQ-02: a successful putNowait adds the item and one unfinished task. */
        @Test
        void putNowaitCountsATask() throws Exception {
            ShutdownQueue<Integer> q = new ShutdownQueue<>(0);
            q.putNowait(7);
            assertThat(q.qsize()).isOne();
            assertThat(q.unfinishedTasks()).isOne();
        }

        /** SQ-03: getNowait on a shut-down queue that still has items returns them. */
        @ParameterizedTest
        @EnumSource(QueueKind.class)
        void getNowaitPrefersItemOverShutdown(QueueKind kind) throws Exception {
            ShutdownQueue<Integer> q = kind.create(0);
            fill(q, 1, 2);
            q.shutdown();
            assertThat(List.of(q.getNowait(), q.getNowait())).isEqualTo(kind.getOrder(List.of(1, 2)));
            assertThatThrownBy(q::getNowait).isInstanceOf(QueueShutDown.class);
        }

        /** SQ-03: getNowait on an empty open queue throws QueueEmpty. */
        @Test
        void getNowaitOnEmptyOpenQueueThrowsQueueEmpty() {
            assertThatThrownBy(new ShutdownQueue<Integer>(0)::getNowait).isInstanceOf(QueueEmpty.class);
        }

        /** SQ-03: a get leaves the unfinished count alone; only taskDone lowers it. */
        @Test
        void getDoesNotFinishATask() throws Exception {
            ShutdownQueue<Integer> q = new ShutdownQueue<>(0);
            q.putNowait(1);
            q.getNowait();
            assertThat(q.unfinishedTasks()).isOne();
        }
    }

    @Nested
    class AfterShutdown {
        /** SQ-04: once shut down, put throws QueueShutDown even on an unbounded queue with room. */
        @ParameterizedTest
        @ValueSource(ints = {0, 3})
        void putAfterShutdownThrows(int maxsize) {
            ShutdownQueue<Integer> q = new ShutdownQueue<>(maxsize);
            q.shutdown();
            assertThatThrownBy(() -> q.put(1)).isInstanceOf(QueueShutDown.class);
            assertThatThrownBy(() -> q.put(1, Duration.ofSeconds(1))).isInstanceOf(QueueShutDown.class);
            assertThat(q.qsize()).isZero();
        }

        /** SQ-05: after a graceful shutdown, get returns every item left in order, then throws QueueShutDown. */
        @ParameterizedTest
        @EnumSource(QueueKind.class)
        void getDrainsThenThrows(QueueKind kind) throws Exception {
            ShutdownQueue<Integer> q = kind.create(3);
            fill(q, 3, 1, 2);
            q.shutdown();
            List<Integer> got = List.of(q.get(), q.get(), q.get());
            assertThat(got).isEqualTo(kind.getOrder(List.of(3, 1, 2)));
            assertThatThrownBy(q::get).isInstanceOf(QueueShutDown.class);
        }

        /** SQ-07: a graceful shutdown leaves the items, their count and the size predicates as they were. */
        @Test
        void gracefulShutdownLeavesItems() throws Exception {
            ShutdownQueue<Integer> q = new ShutdownQueue<>(2);
            fill(q, 1, 2);
            assertThat(q.shutdown(false)).isEmpty();
            assertThat(q.qsize()).isEqualTo(2);
            assertThat(q.full()).isTrue();
            assertThat(q.unfinishedTasks()).isEqualTo(2);
            assertThat(q.isShutdown()).isTrue();
        }

        /** SQ-08: an immediate shutdown removes every item and returns them in the order get would have. */
        @ParameterizedTest
        @EnumSource(QueueKind.class)
        void immediateShutdownReturnsDrainedItemsInGetOrder(QueueKind kind) throws Exception {
            ShutdownQueue<Integer> q = kind.create(0);
            fill(q, 2, 3, 1);
            assertThat(q.shutdown(true)).isEqualTo(kind.getOrder(List.of(2, 3, 1)));
            assertThat(q.qsize()).isZero();
            assertThat(q.unfinishedTasks()).isZero();
        }

        /** SQ-08 (probe B2): the drain never takes the unfinished count below zero. */
        @Test
        void drainClampsTheCountAtZero() throws Exception {
            ShutdownQueue<Integer> q = new ShutdownQueue<>(0);
            fill(q, 1, 2);
            q.taskDone();
            q.taskDone(); // misuse: done before got
            assertThat(q.shutdown(true)).containsExactly(1, 2);
            assertThat(q.unfinishedTasks()).isZero();
            assertThatThrownBy(q::taskDone).isInstanceOf(IllegalStateException.class);
        }

        /** SQ-08 (probe B1): items taken before an immediate shutdown still count until their taskDone. */
        @Test
        void drainLeavesTakenItemsUnfinished() throws Exception {
            ShutdownQueue<Integer> q = new ShutdownQueue<>(0);
            fill(q, 1, 2, 3);
            q.getNowait();
            q.shutdown(true);
            assertThat(q.unfinishedTasks()).isOne();
            assertThat(q.join(Duration.ZERO)).isFalse();
            q.taskDone();
            assertThat(q.join(Duration.ZERO)).isTrue();
        }

        /** SQ-08: the returned list of drained items cannot be modified. */
        @Test
        void drainedListIsUnmodifiable() throws Exception {
            ShutdownQueue<Integer> q = new ShutdownQueue<>(0);
            q.putNowait(1);
            List<Integer> drained = q.shutdown(true);
            assertThatThrownBy(() -> drained.add(2)).isInstanceOf(UnsupportedOperationException.class);
        }
    }

    @Nested
    class Transitions {
        /** SQ-09: a second graceful shutdown changes nothing. */
        @Test
        void gracefulTwice() throws Exception {
            ShutdownQueue<Integer> q = new ShutdownQueue<>(0);
            fill(q, 1, 2);
            q.shutdown();
            String before = q.toString();
            q.shutdown();
            assertThat(q).hasToString(before);
        }

        /** SQ-09 (probe A1): an immediate shutdown after a graceful one drains what is left. */
        @Test
        void gracefulThenImmediateDrains() throws Exception {
            ShutdownQueue<Integer> q = new ShutdownQueue<>(0);
            fill(q, 1, 2);
            q.shutdown();
            assertThat(q).hasToString("<Queue maxsize=0 _queue=[1, 2] tasks=2 shutdown>");
            assertThat(q.shutdown(true)).containsExactly(1, 2);
            assertThat(q).hasToString("<Queue maxsize=0 shutdown>");
            assertThat(q.join(Duration.ZERO)).isTrue();
        }

        /** SQ-09: a graceful shutdown after an immediate one does nothing; there is no downgrade. */
        @Test
        void immediateThenGracefulIsNothing() throws Exception {
            ShutdownQueue<Integer> q = new ShutdownQueue<>(0);
            q.putNowait(1);
            q.shutdown(true);
            assertThat(q.shutdown(false)).isEmpty();
            assertThat(q.isShutdown()).isTrue();
            assertThatThrownBy(q::getNowait).isInstanceOf(QueueShutDown.class);
        }

        /** SQ-09: a second immediate shutdown finds nothing to drain and returns an empty list. */
        @Test
        void immediateTwiceReturnsNothingTheSecondTime() throws Exception {
            ShutdownQueue<Integer> q = new ShutdownQueue<>(0);
            q.putNowait(1);
            assertThat(q.shutdown(true)).containsExactly(1);
            assertThat(q.shutdown(true)).isEmpty();
        }
    }

    @Nested
    class TaskAccounting {
        /** SQ-10: taskDone with no unfinished tasks throws IllegalStateException with Python's message. */
        @Test
        void taskDoneUnderflow() {
            assertThatThrownBy(new ShutdownQueue<Integer>(0)::taskDone)
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessage("taskDone() called too many times");
        }

        /** SQ-10: taskDone works the same after a graceful shutdown as before it. */
        @Test
        void taskDoneIgnoresShutdown() throws Exception {
            ShutdownQueue<Integer> q = new ShutdownQueue<>(0);
            fill(q, 1, 2);
            q.shutdown();
            q.taskDone();
            q.taskDone();
            assertThat(q.unfinishedTasks()).isZero();
            assertThatThrownBy(q::taskDone).isInstanceOf(IllegalStateException.class);
        }

        /** SQ-11: join on a queue with no unfinished tasks returns at once, shut down or not. */
        @Test
        void joinAtZeroReturnsAtOnce() throws Exception {
            ShutdownQueue<Integer> q = new ShutdownQueue<>(0);
            q.join();
            q.shutdown(true);
            q.join();
            assertThat(q.join(Duration.ZERO)).isTrue();
        }
    }

    @Nested
    class Join {
        /**
         * SQ-11: join returns once the count has reached zero since it began, even if a put raised
         * it again before the joiner ran (asyncio's single check; queue.Queue would keep waiting).
         */
        @ParameterizedTest
        @EnumSource(ThreadKind.class)
        void joinReturnsIfCountWasZeroEvenIfItRoseAgain(ThreadKind threads) throws Exception {
            ShutdownQueue<Integer> q = new ShutdownQueue<>(0);
            q.putNowait(1);
            var joiner = spawn.use(threads).run("joiner", q::join);
            Waits.until("the joiner waits", () -> q.waitingJoiners() == 1);
            Queues.underLock(q, () -> {
                q.getNowait();
                q.taskDone(); // count 0: the joiner is released ...
                q.putNowait(2); // ... and the count is 1 again before it runs
            });
            joiner.value();
            assertThat(q.unfinishedTasks()).isOne();
        }

        /** SQ-11: a graceful shutdown does not release join while tasks are unfinished. */
        @ParameterizedTest
        @EnumSource(ThreadKind.class)
        void gracefulShutdownDoesNotReleaseJoin(ThreadKind threads) throws Exception {
            ShutdownQueue<Integer> q = new ShutdownQueue<>(0);
            q.putNowait(1);
            var joiner = spawn.use(threads).run("joiner", q::join);
            Waits.until("the joiner waits", () -> q.waitingJoiners() == 1);
            q.shutdown();
            assertThat(q.join(Duration.ZERO)).isFalse();
            assertThat(joiner.isDone()).isFalse();
            q.getNowait();
            q.taskDone();
            joiner.value();
        }

        /** SQ-08: an immediate shutdown that brings the count to zero releases every joiner. */
        @ParameterizedTest
        @EnumSource(ThreadKind.class)
        void immediateShutdownReleasesJoinersAtZero(ThreadKind threads) throws Exception {
            ShutdownQueue<Integer> q = new ShutdownQueue<>(0);
            fill(q, 1, 2);
            var first = spawn.use(threads).run("joiner-1", q::join);
            var second = spawn.run("joiner-2", q::join);
            Waits.until("both joiners wait", () -> q.waitingJoiners() == 2);
            q.shutdown(true);
            assertThat(q.waitingJoiners()).isZero();
            first.value();
            second.value();
        }
    }

    @Nested
    class Exceptions {
        private static final String STACK_TRACES = "dev.drain.queue.stackTraces";

        /** SQ-19: by default the queue's three exceptions carry no stack trace. */
        @Test
        void exceptionsCarryNoStackTraceByDefault() throws Exception {
            assertThat(System.getProperty(STACK_TRACES)).isNull();
            assertThat(stackTracesOfTheThree()).allSatisfy(trace -> assertThat(trace).isEmpty());
        }

        /** SQ-19: with dev.drain.queue.stackTraces=true each exception records the call that threw it. */
        @Test
        void exceptionsRecordTheirStackTraceWhenAsked() throws Exception {
            System.setProperty(STACK_TRACES, "true");
            try {
                assertThat(stackTracesOfTheThree())
                        .extracting(trace -> trace[0].getClassName() + "." + trace[0].getMethodName())
                        .containsExactly(ShutdownQueue.class.getName() + ".getNowait",
                                ShutdownQueue.class.getName() + ".putNowait",
                                ShutdownQueue.class.getName() + ".get");
            } finally {
                System.clearProperty(STACK_TRACES);
            }
        }

        /** The stack traces of QueueEmpty, QueueFull and QueueShutDown, each thrown by the queue. */
        private List<StackTraceElement[]> stackTracesOfTheThree() throws Exception {
            ShutdownQueue<Integer> q = new ShutdownQueue<>(1);
            List<StackTraceElement[]> traces = new ArrayList<>();
            traces.add(catchThrowableOfType(QueueEmpty.class, q::getNowait).getStackTrace());
            q.putNowait(1);
            traces.add(catchThrowableOfType(QueueFull.class, () -> q.putNowait(2)).getStackTrace());
            q.shutdown(true);
            traces.add(catchThrowableOfType(QueueShutDown.class, q::get).getStackTrace());
            return traces;
        }
    }

    @Nested
    class Nulls {
        /** SQ-16: null items, timeouts and comparators are rejected with NullPointerException. */
        @Test
        @SuppressWarnings("NullAway") // passing null on purpose
        void nullsAreRejected() {
            ShutdownQueue<Integer> q = new ShutdownQueue<>(0);
            assertThatThrownBy(() -> q.putNowait(null)).isInstanceOf(NullPointerException.class);
            assertThatThrownBy(() -> q.put(null)).isInstanceOf(NullPointerException.class);
            assertThatThrownBy(() -> q.put(1, null)).isInstanceOf(NullPointerException.class);
            assertThatThrownBy(() -> q.get(null)).isInstanceOf(NullPointerException.class);
            assertThatThrownBy(() -> q.join(null)).isInstanceOf(NullPointerException.class);
            assertThatThrownBy(() -> ShutdownQueue.priority(0, null)).isInstanceOf(NullPointerException.class);
            assertThat(q.qsize()).isZero();
        }
    }

    @Nested
    class Observers {
        /** SQ-17: toString prints Python's str(queue) for each kind, showing only the non-empty parts. */
        @Test
        void toStringIsPythonsStr() throws Exception {
            assertThat(new ShutdownQueue<Integer>(0)).hasToString("<Queue maxsize=0>");
            ShutdownQueue<Integer> q = ShutdownQueue.lifo(3);
            q.putNowait(5);
            assertThat(q).hasToString("<LifoQueue maxsize=3 _queue=[5] tasks=1>");
            q.shutdown();
            assertThat(q).hasToString("<LifoQueue maxsize=3 _queue=[5] tasks=1 shutdown>");
            q.shutdown(true);
            assertThat(q).hasToString("<LifoQueue maxsize=3 shutdown>");
            assertThat(ShutdownQueue.<Integer>priority(-1)).hasToString("<PriorityQueue maxsize=-1>");
        }

        /** SQ-17: toString counts the callers waiting in line, as Python's _getters[n] and _putters[n]. */
        @ParameterizedTest
        @EnumSource(ThreadKind.class)
        void toStringShowsWaiters(ThreadKind threads) throws Exception {
            spawn.use(threads);
            ShutdownQueue<Integer> empty = new ShutdownQueue<>(1);
            var getter = spawn.call("getter", empty::get);
            Waits.until("a getter waits", () -> empty.waitingGetters() == 1);
            assertThat(empty).hasToString("<Queue maxsize=1 _getters[1]>");
            ShutdownQueue<Integer> full = new ShutdownQueue<>(1);
            full.putNowait(1);
            var putter = spawn.run("putter", () -> full.put(2));
            Waits.until("a putter waits", () -> full.waitingPutters() == 1);
            assertThat(full).hasToString("<Queue maxsize=1 _queue=[1] _putters[1] tasks=1>");
            empty.shutdown();
            full.shutdown();
            getter.thrown(QueueShutDown.class);
            putter.thrown(QueueShutDown.class);
        }
    }
}
