package dev.drain.queue;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.drain.support.Call;
import dev.drain.support.Spawner;
import dev.drain.support.ThreadKind;
import dev.drain.support.Waits;
import java.util.Comparator;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * SQ-20: a priority queue whose comparator throws leaves its list exactly as CPython's
 * {@code heapq} leaves it: a permutation of its items (less the one a failing get was taking),
 * never an item twice. The expectations are the output of {@code specs/probes/comparator_faults.py}
 * on CPython 3.13.
 */
class ComparatorFaultTest {
    @RegisterExtension
    final Spawner spawn = new Spawner();

    /** What the comparator throws when its budget is spent. */
    static final class Bomb extends RuntimeException {
        private static final long serialVersionUID = 1L;

        Bomb() {
            super("the comparator refuses", null, false, false);
        }
    }

    /** Integers in natural order, but only {@code budget} comparisons once armed; then every comparison throws. */
    static final class Budgeted implements Comparator<Integer> {
        private int budget = -1; // unarmed

        void arm(int comparisons) {
            budget = comparisons;
        }

        @Override
        public int compare(Integer a, Integer b) {
            if (budget == 0) {
                throw new Bomb();
            }
            if (budget > 0) {
                budget--;
            }
            return Integer.compare(a, b);
        }
    }

    static ShutdownQueue<Integer> queueOf(Budgeted order, int... items) throws Exception {
        ShutdownQueue<Integer> q = ShutdownQueue.priority(0, order);
        for (int item : items) {
            q.putNowait(item);
        }
        return q;
    }

    static Stream<Arguments> pushes() {
        return Stream.of(
                Arguments.of(0, "[5, 7, 9, 8, 10, 12, 1]", true),
                Arguments.of(1, "[5, 7, 1, 8, 10, 12, 9]", true),
                Arguments.of(2, "[1, 7, 5, 8, 10, 12, 9]", false),
                Arguments.of(3, "[1, 7, 5, 8, 10, 12, 9]", false));
    }

    /** SQ-20: a put whose sift fails after {@code budget} comparisons leaves heapq's list: the new item stored, nothing lost or doubled. */
    @ParameterizedTest
    @MethodSource("pushes")
    void failedPutLeavesHeapqsList(int budget, String expected, boolean fails) throws Exception {
        Budgeted order = new Budgeted();
        ShutdownQueue<Integer> q = queueOf(order, 5, 7, 9, 8, 10, 12);
        order.arm(budget);
        if (fails) {
            assertThatThrownBy(() -> q.putNowait(1)).isInstanceOf(Bomb.class);
        } else {
            q.putNowait(1);
        }
        assertThat(q.toString()).contains("_queue=" + expected);
    }

    static Stream<Arguments> pops() {
        return Stream.of(
                Arguments.of(0, "[9, 5, 3, 8, 6, 4, 7]", true),
                Arguments.of(1, "[3, 5, 9, 8, 6, 4, 7]", true),
                Arguments.of(2, "[3, 5, 4, 8, 6, 9, 7]", true),
                Arguments.of(3, "[3, 5, 4, 8, 6, 9, 7]", false),
                Arguments.of(5, "[3, 5, 4, 8, 6, 9, 7]", false));
    }

    /** SQ-20: a get whose sift fails after {@code budget} comparisons leaves heapq's list: the smallest is lost, as in CPython, nothing doubled. */
    @ParameterizedTest
    @MethodSource("pops")
    void failedGetLeavesHeapqsList(int budget, String expected, boolean fails) throws Exception {
        Budgeted order = new Budgeted();
        ShutdownQueue<Integer> q = queueOf(order, 1, 5, 3, 8, 6, 4, 7, 9);
        order.arm(budget);
        if (fails) {
            assertThatThrownBy(q::getNowait).isInstanceOf(Bomb.class);
        } else {
            assertThat(q.getNowait()).isEqualTo(1);
        }
        assertThat(q.toString()).contains("_queue=" + expected);
    }

    /** SQ-20: as asyncio's put_nowait, a put that fails in the comparator keeps the item but neither counts it nor wakes a getter. */
    @Test
    void failedPutStoresTheItemUncounted() throws Exception {
        Budgeted order = new Budgeted();
        ShutdownQueue<Integer> q = queueOf(order, 5, 7, 9);
        order.arm(0);
        assertThatThrownBy(() -> q.putNowait(1)).isInstanceOf(Bomb.class);
        assertThat(q).hasToString("<PriorityQueue maxsize=0 _queue=[5, 7, 9, 1] tasks=3>");
    }

    /** SQ-20: as asyncio's get_nowait, a get that fails in the comparator loses the smallest item and leaves the count. */
    @Test
    void failedGetLosesTheSmallestItem() throws Exception {
        Budgeted order = new Budgeted();
        ShutdownQueue<Integer> q = queueOf(order, 1, 5, 3, 8);
        order.arm(0);
        assertThatThrownBy(q::getNowait).isInstanceOf(Bomb.class);
        assertThat(q).hasToString("<PriorityQueue maxsize=0 _queue=[8, 5, 3] tasks=4>");
    }

    /**
     * SQ-08, SQ-20: an immediate shutdown whose comparator fails mid-drain stops where CPython
     * stops (the queue shut down, the item being taken lost, the rest queued, the count not
     * lowered for it) and, beyond CPython, still wakes every blocked caller: a putter blocked on the
     * full queue throws QueueShutDown instead of waiting forever.
     */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void failedDrainStopsWhereCPythonStopsAndWakesEveryone(ThreadKind kind) throws Exception {
        Budgeted order = new Budgeted();
        ShutdownQueue<Integer> q = ShutdownQueue.priority(5, order);
        for (int item : new int[] {1, 5, 3, 8, 6}) {
            q.putNowait(item);
        }
        Call<Void> putter = spawn.use(kind).run("putter", () -> q.put(0));
        Waits.until("the putter waits", () -> q.waitingPutters() == 1);
        order.arm(1);
        assertThatThrownBy(() -> q.shutdown(true)).isInstanceOf(Bomb.class);
        assertThat(q).hasToString("<PriorityQueue maxsize=5 _queue=[3, 5, 6, 8] tasks=5 shutdown>");
        assertThat(putter.thrown(QueueShutDown.class)).isNotNull();
    }
}
