package dev.drain.queue;

import static org.assertj.core.api.Assertions.assertThat;
import static org.quicktheories.generators.SourceDSL.integers;
import static org.quicktheories.generators.SourceDSL.lists;

import dev.drain.support.Evidence;
import dev.drain.support.PropertyReport;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.quicktheories.generators.Generate;

/**
 * SQ-20 as a property: whatever the heap, whichever operation, and however many comparisons
 * succeed before the comparator throws, the queue is left holding a permutation of what it should
 * hold: after a put, every old item and the new one; after a get, every item but the smallest,
 * which CPython's {@code heappop} loses too. Seeded like every property: {@code -Dqt.seed=N},
 * {@code -Dqt.examples=N}.
 */
@ExtendWith(PropertyReport.class)
class ComparatorFaultProperties {
    /** SQ-20: a comparator that throws at any point of a put or a get leaves the queue a permutation of what it should hold, never an item twice. */
    @Test
    void aThrowingComparatorLeavesAPermutation(Evidence evidence) {
        evidence.property("A priority queue whose comparator throws after any number of comparisons, in a put or a "
                + "get, holds a permutation of its items: all of them and the new one after a put, all but the "
                + "smallest after a get (lost, as heapq loses it).", "SQ-20");
        ShutdownQueueProperties.quickTheory(evidence, ShutdownQueueProperties.examples(500))
                .forAll(lists().of(integers().between(0, 9)).ofSizeBetween(1, 24), Generate.booleans(),
                        integers().between(0, 12))
                .checkAssert((items, put, budget) -> {
                    ComparatorFaultTest.Budgeted order = new ComparatorFaultTest.Budgeted();
                    ShutdownQueue<Integer> q = ShutdownQueue.priority(0, order);
                    try {
                        for (int item : items) {
                            q.putNowait(item);
                        }
                    } catch (QueueShutDown | QueueFull e) {
                        throw new AssertionError("an open, unbounded queue refused a put", e);
                    }
                    List<Integer> expected = new ArrayList<>(items);
                    order.arm(budget);
                    boolean threw = false;
                    try {
                        if (put) {
                            expected.add(-1);
                            q.putNowait(-1);
                        } else {
                            expected.remove(Integer.valueOf(items.stream().mapToInt(Integer::intValue).min().orElseThrow()));
                            q.getNowait();
                        }
                    } catch (ComparatorFaultTest.Bomb e) {
                        threw = true;
                    } catch (QueueShutDown | QueueFull | QueueEmpty e) {
                        throw new AssertionError("an open, unbounded, non-empty queue refused", e);
                    }
                    order.arm(-1);
                    evidence.tries(1).count(threw ? "operations the comparator broke" : "operations that completed", 1)
                            .count(put ? "puts" : "gets", 1);
                    assertThat(q.itemsInGetOrder()).as("%s of %s with %s comparisons", put ? "put" : "get", items, budget)
                            .containsExactlyInAnyOrderElementsOf(expected);
                });
    }
}
