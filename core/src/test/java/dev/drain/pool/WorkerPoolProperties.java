package dev.drain.pool;

import static org.assertj.core.api.Assertions.assertThat;
import static org.quicktheories.QuickTheory.qt;

import dev.drain.pool.PoolRunner.Observed;
import dev.drain.pool.PoolWorkload.Ending;
import dev.drain.pool.PoolWorkload.Fault;
import dev.drain.pool.PoolWorkload.Where;
import dev.drain.support.Evidence;
import dev.drain.support.PropertyReport;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BiConsumer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.quicktheories.QuickTheory;

/**
 * The pool's contract as properties over whole generated workloads (QuickTheories, shrinking on):
 * both intakes, a fault injected into one callback (handlers that fail, time out, swallow one to
 * three interrupts, block in socket I/O, fork subtasks or leak a thread; sinks and sources that
 * throw), and an ending at a random moment (natural, requestStop, abort, close, an interrupted
 * consumer, calls from the wrong thread), consumed from a platform or a virtual thread.
 *
 * <p>Every property draws the same workloads from the same seed, and each workload is run once per
 * test run (the observations are shared): each property judges the same runs from its side. Each
 * property also checks the coverage floors: every combination of where the fault is, how the run
 * ends and which intake carries it, and every fault, ran at least {@link #FLOOR} times, so a
 * generator that drifts fails instead of passing quietly; the report prints each floor, met or
 * missed, and the statistics of the shared workloads, once. Seeded: {@code -Dqt.seed=N},
 * {@code -Dqt.examples=N}.
 */
@ExtendWith(PropertyReport.class)
class WorkerPoolProperties {
    static final long SEED = Long.getLong("qt.seed", 20261201L);
    static final int EXAMPLES = Integer.getInteger("qt.examples", 400);
    /** How many runs every combination of fault site, ending and intake, and every fault, needs. */
    static final int FLOOR = Math.max(1, EXAMPLES / 300);
    /** The name the report gives the workloads every property here draws, and prints the statistics of once. */
    static final String WORKLOADS = "WorkerPoolProperties' workloads (seed " + SEED + ", " + EXAMPLES + " asked)";

    /** Every workload run so far in this JVM, and what it showed: each is run once, whichever property asks. */
    private static final Map<PoolWorkload, Observed> RUNS = new ConcurrentHashMap<>();

    static Observed observe(PoolWorkload w) {
        return RUNS.computeIfAbsent(w, PoolRunner::run);
    }

    /** How many shrinking steps a falsified property gets: {@code -Dqt.shrinks=N}. */
    static final int SHRINKS = Integer.getInteger("qt.shrinks", 200);

    private static QuickTheory quickTheory() {
        return qt().withFixedSeed(SEED).withExamples(EXAMPLES).withShrinkCycles(SHRINKS);
    }

    /** Runs {@code check} over the workloads, counting coverage, then checks the floors. */
    private static void forAllWorkloads(Evidence evidence, BiConsumer<PoolWorkload, Observed> check) {
        Coverage coverage = new Coverage();
        evidence.seed(SEED).requested(EXAMPLES).rerunWith("qt.seed", SEED).rerunWith("qt.examples", EXAMPLES)
                .rerunWith("qt.shrinks", SHRINKS)
                .fewerBecause("QuickTheories does not run a generated workload it has already tried")
                .sharedWorkloads(WORKLOADS);
        quickTheory().forAll(PoolWorkload.workloads()).checkAssert(w -> {
            Observed o = observe(w);
            coverage.count(w, o);
            evidence.tries(1);
            check.accept(w, o);
        });
        coverage.record(evidence);
        coverage.assertFloors();
    }

    /**
     * Counts what the generator produced, by fault, ending and intake, and how often the lead
     * reached its bound; and holds the coverage floors, which the report prints with what met them.
     */
    static final class Coverage {
        private final Map<String, Long> combinations = new ConcurrentHashMap<>();
        private final Map<Fault, Long> faults = new ConcurrentHashMap<>();
        /** What the generator drew: the same for the same seed and number of tries. */
        private final Map<String, Long> counts = new ConcurrentHashMap<>();
        /** What the runs showed, which their threads' timing decides too. */
        private final Map<String, Long> observed = new ConcurrentHashMap<>();

        void count(PoolWorkload w, Observed o) {
            combinations.merge(key(w.fault().where, w.ending(), w.intake()), 1L, Long::sum);
            faults.merge(w.fault(), 1L, Long::sum);
            counts.merge("ending " + name(w.ending()), 1L, Long::sum);
            counts.merge("consumer on a " + name(w.consumer()) + " thread", 1L, Long::sum);
            observed.merge("runs whose lead reached queueSize + workers + 1", o.reachedLeadBound() ? 1L : 0L, Long::sum);
            observed.merge("outcome " + o.end().outcome(), 1L, Long::sum);
            observed.merge("runs aborted at a stop's deadline", o.end().deadlinePassed() ? 1L : 0L, Long::sum);
            counts.merge("runs that go on past their failures", w.continuing() ? 1L : 0L, Long::sum);
            counts.merge("runs whose retries wait in the retry room", w.parksRetries() ? 1L : 0L, Long::sum);
            observed.merge("runs whose ending came only after the last result", o.endedAfterTheLastResult() ? 1L : 0L,
                    Long::sum);
        }

        private static String key(Where where, Ending ending, WorkerPool.IntakeKind intake) {
            return name(where) + " × " + name(ending) + " × " + name(intake);
        }

        private static String name(Enum<?> value) {
            return value.name().toLowerCase(Locale.ROOT).replace('_', ' ');
        }

        /**
         * The floors: every combination of where the fault is, how the run ends and which intake
         * carries it, and every fault, ran at least {@link #FLOOR} times.
         */
        List<Evidence.Floor> floors() {
            List<Evidence.Floor> floors = new ArrayList<>();
            for (Where where : Where.values()) {
                for (Ending ending : Ending.values()) {
                    for (WorkerPool.IntakeKind intake : WorkerPool.IntakeKind.values()) {
                        floors.add(new Evidence.Floor("fault site × ending", name(where) + " × " + name(ending),
                                name(intake), FLOOR, combinations.getOrDefault(key(where, ending, intake), 0L)));
                    }
                }
            }
            for (Fault fault : Fault.values()) {
                floors.add(new Evidence.Floor("fault", name(fault), "runs", FLOOR, faults.getOrDefault(fault, 0L)));
            }
            return floors;
        }

        void record(Evidence evidence) {
            counts.forEach(evidence::count);
            observed.forEach(evidence::observed);
            floors().forEach(f -> evidence.floor(f.table(), f.row(), f.column(), f.needed(), f.ran()));
        }

        void assertFloors() {
            List<String> thin = floors().stream().filter(f -> !f.met())
                    .map(f -> f.row() + (f.column().equals("runs") ? "" : " × " + f.column()) + ": " + f.ran()).toList();
            assertThat(thin).as("combinations that ran fewer than %s times (the generator drifted)", FLOOR).isEmpty();
        }
    }

    /** Whether the consumer gave up on the run (so results may be left undelivered). */
    private static boolean consumerGaveUp(PoolWorkload w) {
        return w.ending() == Ending.CLOSE || w.ending() == Ending.INTERRUPT;
    }

    /**
     * WP-2, WP-12, WP-13, WP-17: the books are exact: every pulled item has exactly one fate, the
     * outcome's lists equal the counters, every result is delivered unless the consumer gave up,
     * and calls from the wrong thread are refused without changing the run.
     */
    @Test
    void ledgerIsExact(Evidence evidence) {
        evidence.property("Every pulled item has exactly one fate (result, permanent failure, discarded, cancelled), "
                + "the outcome's lists equal the counters, nothing is in flight at the end, every result is "
                + "delivered unless the consumer gave up, and calls from the wrong thread are refused.",
                "WP-2", "WP-12", "WP-13", "WP-17", "WP-24", "WP-28");
        forAllWorkloads(evidence, (w, o) -> {
            PoolApi.End end = o.end();
            assertThat(o.hung()).as("the run hung").isFalse();
            assertThat(end.succeeded() + end.failedCount() + end.discardedCount() + end.cancelledCount())
                    .as("succeeded + failed + discarded + cancelled = pulled, in %s", end).isEqualTo(end.pulled());
            assertThat(end.failed()).as("the outcome's failures").hasSize((int) end.failedCount());
            assertThat(end.discarded()).as("the outcome's discarded items").hasSize((int) end.discardedCount());
            assertThat(end.cancelled()).as("the outcome's cancelled items").hasSize((int) end.cancelledCount());
            assertThat(end.inFlight()).as("in flight at the end").isZero();
            List<Integer> fates = new ArrayList<>(o.results());
            fates.addAll(end.failed());
            fates.addAll(end.discarded());
            fates.addAll(end.cancelled());
            assertThat(fates).as("each item's fate, once").doesNotHaveDuplicates();
            Set<Integer> pulled = new HashSet<>();
            for (int i = 0; i < end.pulled(); i++) {
                pulled.add(i);
            }
            if (consumerGaveUp(w) || end.outcome().equals("Crashed")) {
                assertThat(pulled).as("every fate is of a pulled item").containsAll(fates);
            } else {
                assertThat(new HashSet<>(fates)).as("every pulled item has a fate").isEqualTo(pulled);
                assertThat((long) o.results().size()).as("results delivered").isEqualTo(end.succeeded());
            }
            if (w.ending() == Ending.WRONG_THREAD) {
                assertThat(o.wrongThreadCalls()).as("calls from another thread")
                        .containsExactly("close(): WrongThreadException", "hasNext(): WrongThreadException");
                if (w.fault() != Fault.SETTLER_THROWS_FATAL) { // that fault crashes the run itself (WP-22)
                    assertThat(end.outcome()).isNotIn("Abandoned", "Aborted", "Crashed");
                }
            }
        });
    }

    /** WP-3, WP-4, WP-18: every run ends within a bound, whatever its callbacks throw or swallow. */
    @Test
    void everyRunEndsWithinABound(Evidence evidence) {
        evidence.property("Every run ends, and its results close, within " + PoolRunner.RUN_BOUND + " (the slowest "
                + "workload needs well under a second), whatever its callbacks throw or swallow.", "WP-3", "WP-4", "WP-18",
                "WP-24");
        forAllWorkloads(evidence, (w, o) -> {
            assertThat(o.hung()).as("the run hung (took %s)", o.took()).isFalse();
            assertThat(o.took()).isLessThan(PoolRunner.RUN_BOUND);
            assertThat(o.endThrew()).as("what the owner saw at the end").doesNotStartWith("the owner threw");
        });
    }

    /**
     * WP-10: no thread is left: when the iteration ends, the pool counts none of its threads,
     * and no live thread of the JVM is new since the run began, but for the threads a
     * handler deliberately leaked.
     */
    @Test
    void noThreadIsLeft(Evidence evidence) {
        evidence.property("When the iteration ends the pool counts no thread of its own, and no thread of the JVM "
                + "(a JSON thread dump, virtual threads included) that was not alive before the run is alive after "
                + "it, except exactly the threads a handler leaked on purpose.", "WP-10");
        forAllWorkloads(evidence, (w, o) -> {
            if (!consumerGaveUp(w) && !o.end().outcome().equals("Crashed")) {
                assertThat(o.liveThreadsAtEnd()).as("the pool's threads when the iteration ended").isZero();
            }
            assertThat(o.newThreadsAlive()).as("threads of the JVM alive after the run that were not before it")
                    .isEqualTo(o.leakedByHandlers());
        });
    }

    /** WP-1: the source is never more than queueSize + workers + 1 items ahead of settled work. */
    @Test
    void leadIsBounded(Evidence evidence) {
        evidence.property("The source is never more than queueSize + workers + 1 items ahead of settled work (workers "
                + "more when retries wait in the retry room).", "WP-1", "WP-28");
        forAllWorkloads(evidence, (w, o) -> assertThat(o.end().maxLead()).isLessThanOrEqualTo(w.leadBound()));
    }

    /** WP-9: every attempt, and every subtask a handler forks, sees its own item's context and no other attempt's ThreadLocal. */
    @Test
    void contextsNeverCross(Evidence evidence) {
        evidence.property("Every attempt, and every subtask a handler forks, sees its own ItemContext (item and "
                + "attempt number) and no ThreadLocal value set by any other attempt.", "WP-9");
        forAllWorkloads(evidence, (w, o) -> assertThat(o.crossings()).isEmpty());
    }

    /** WP-17, WP-9: the caller's ScopedValue binding reaches every handler, every subtask a handler forks, and the sink. */
    @Test
    void callersBindingsAreInherited(Evidence evidence) {
        evidence.property("A ScopedValue the caller binds around run() is seen by every handler, every subtask a "
                + "handler forks, the metrics sink and the settler.", "WP-17", "WP-9");
        forAllWorkloads(evidence, (w, o) -> assertThat(o.bindingMisses()).isEmpty());
    }

    /** WP-16: the source is closed exactly once, whichever way the run ends. */
    @Test
    void sourceIsClosedExactlyOnce(Evidence evidence) {
        evidence.property("The Stream source is closed exactly once, whichever way the run ends.", "WP-16");
        forAllWorkloads(evidence, (w, o) -> assertThat(o.sourceCloses()).isOne());
    }

    /** WP-21: at no moment do more than {@code workers} handlers run, whatever the fault and the ending. */
    @Test
    void atMostWorkersHandlersRunAtOnce(Evidence evidence) {
        evidence.property("At no moment do more handlers run than the pool has workers, on every ending (a stop "
                + "with an item held by the producer included).", "WP-21");
        forAllWorkloads(evidence, (w, o) -> assertThat(o.mostHandlersAtOnce()).isLessThanOrEqualTo(w.workers()));
    }

    /**
     * WP-22: every pulled item is settled exactly once with the fate its books recorded, on every
     * ending; only a failing store leaves settlements unsettled, and after a fatal error the store
     * is not called again.
     */
    @Test
    void everyFateIsSettledOnce(Evidence evidence) {
        evidence.property("Every pulled item is settled exactly once, with the fate its books recorded (succeeded "
                + "acknowledged, failures dead-lettered, discarded and cancelled items released, a retry's due time only on an "
                + "item given up while it waited), whichever way the run "
                + "ends; only a store that throws leaves settlements unsettled, exactly those it was given in the calls "
                + "that threw and, after a fatal error, every later one, without another call.", "WP-22");
        forAllWorkloads(evidence, (w, o) -> {
            PoolApi.End end = o.end();
            assertThat(o.hung()).as("the run hung").isFalse();
            List<Settlement<Integer>> every = new ArrayList<>(o.offered());
            for (Settlement<Integer> s : end.unsettled()) {
                if (!every.contains(s)) {
                    every.add(s); // never given to the store: after its fatal error
                }
            }
            assertThat((long) every.size()).as("settlements, one per item pulled").isEqualTo(end.pulled());
            assertThat(every.stream().map(Settlement::item).collect(java.util.stream.Collectors.toSet()))
                    .as("each pulled item settled once").hasSize(every.size());
            assertThat(every.stream().filter(s -> s instanceof Settlement.Succeeded<Integer>).count())
                    .as("acknowledged as succeeded").isEqualTo(end.succeeded());
            assertThat(itemsOf(every, Settlement.Failed.class)).as("dead letters")
                    .containsExactlyInAnyOrderElementsOf(end.failed());
            assertThat(released(every, Settlement.Why.DISCARDED)).as("released as discarded")
                    .containsExactlyInAnyOrderElementsOf(end.discarded());
            assertThat(released(every, Settlement.Why.CANCELLED)).as("released as cancelled")
                    .containsExactlyInAnyOrderElementsOf(end.cancelled());
            assertThat(every).as("released with a retry's due time: only cancelled items, only with a backoff (WP-28)")
                    .filteredOn(s -> s instanceof Settlement.Released<Integer> r && r.retryAt() != null)
                    .allMatch(s -> ((Settlement.Released<Integer>) s).why() == Settlement.Why.CANCELLED && w.parksRetries());
            int failingCall = w.faultAt() % 3 + 1;
            boolean storeFailed = w.fault().where == Where.SETTLER && o.settlerCalls() >= failingCall;
            if (!storeFailed) {
                assertThat(end.unsettled()).as("unsettled, with a store that never failed").isEmpty();
            } else {
                assertThat(end.unsettled()).as("unsettled after call %d threw", failingCall).isNotEmpty();
                if (w.fault() == Fault.SETTLER_THROWS) {
                    assertThat(o.offered()).as("every unsettled settlement was given to the store")
                            .containsAll(end.unsettled());
                } else {
                    assertThat(o.settlerCalls()).as("calls to a store after its fatal error").isEqualTo(failingCall);
                    assertThat(end.outcome()).isEqualTo("Crashed");
                }
            }
        });
    }

    /**
     * WP-23: a run that goes on past its permanent failures never ends {@code Failed}, and one whose
     * only fault is in its handler and that ends by itself pulls every item of its source.
     */
    @Test
    void aContinuingRunOutlivesItsFailures(Evidence evidence) {
        evidence.property("A run that goes on past its permanent failures never ends Failed; one whose only fault is in "
                + "its handler, and that ends by itself, pulls every item of its source, however many failed.", "WP-23");
        forAllWorkloads(evidence, (w, o) -> {
            if (w.continuing()) {
                assertThat(o.end().outcome()).as("the outcome").isNotEqualTo("Failed");
                if (w.ending() == Ending.NATURALLY && w.fault().where == Where.HANDLER) {
                    assertThat(o.end().pulled()).as("items pulled, of %s", w.items()).isEqualTo(w.items());
                }
            }
        });
    }

    /**
     * WP-24: a stop with a deadline ends the run within the deadline's bound, as {@code Completed}
     * (its work drained in time) or {@code Aborted} at the deadline, unless a fault ended it first.
     */
    @Test
    void aStopWithADeadlineDrainsOrAbortsAtIt(Evidence evidence) {
        evidence.property("A stop with a deadline ends the run as Completed (it drained in time) or Aborted at the "
                + "deadline, unless a fault of the handler, the source or the store ended it its own way first.", "WP-24");
        forAllWorkloads(evidence, (w, o) -> {
            if (w.ending() == Ending.STOP_WITH_DEADLINE && w.fault().where != Where.SOURCE
                    && w.fault().where != Where.SETTLER && !(w.fault().where == Where.HANDLER && !w.continuing())) {
                assertThat(o.end().outcome()).as("the outcome").isIn("Completed", "Aborted");
                assertThat(o.end().outcome().equals("Aborted")).as("aborted only at the deadline")
                        .isEqualTo(o.end().deadlinePassed());
            }
        });
    }

    /** WP-22: the items of {@code settlements} released for {@code why}, in order. */
    static List<Integer> released(List<Settlement<Integer>> settlements, Settlement.Why why) {
        return settlements.stream().<Integer>mapMulti((s, out) -> {
            if (s instanceof Settlement.Released<Integer> r && r.why() == why) {
                out.accept(r.item());
            }
        }).toList();
    }

    private static List<Integer> itemsOf(List<Settlement<Integer>> settlements, Class<?> kind) {
        return settlements.stream().filter(kind::isInstance).map(Settlement::item).toList();
    }

    /** WP-8: the sink receives each item's events in the order they happened: item.accepted first, nothing after the item is settled. */
    @Test
    void eachItemsEventsArriveInOrder(Evidence evidence) {
        evidence.property("For each item, the sink receives item.accepted before any other event of the item, and "
                + "no event of the item after its discard, cancellation or permanent failure.", "WP-8");
        forAllWorkloads(evidence, (w, o) -> assertThat(o.outOfOrder()).isEmpty());
    }
}
