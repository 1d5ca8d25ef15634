package dev.drain.queue;

import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.drain.support.Evidence;
import dev.drain.support.PropertyReport;
import java.lang.reflect.Method;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.List;
import org.jetbrains.kotlinx.lincheck.Actor;
import org.jetbrains.kotlinx.lincheck.execution.ExecutionScenario;
import org.jetbrains.lincheck.LincheckAssertionError;
import org.jetbrains.lincheck.datastructures.IntGen;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Options;
import org.jetbrains.lincheck.datastructures.Param;
import org.jetbrains.lincheck.datastructures.StressOptions;
import org.jetbrains.lincheck.datastructures.Validate;
import org.jetbrains.lincheck.util.LoggingLevel;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Linearizability (SQ-18), checked with Lincheck: every concurrent run of a small scenario gives
 * the results of some one-at-a-time order of the same calls on {@link Model}, an independent
 * sequential model of a first-in-first-out queue of {@value #MAXSIZE} items written in this file.
 *
 * <h2>What runs</h2>
 * <ul>
 *   <li>The operations that never park: {@code putNowait} (items 1 to 3), {@code getNowait},
 *       {@code taskDone}, {@code shutdown(false)}, {@code shutdown(true)} (its drained list is a
 *       result), {@code qsize}, {@code unfinishedTasks}, {@code isShutdown}, {@code full} and
 *       {@code join(Duration.ZERO)}. By model checking (Lincheck runs the threads one at a time
 *       and explores switches between them at shared accesses and lock operations): first
 *       hand-written races, one per clause that a race can break ({@link #nonBlockingRaces}), then
 *       random scenarios from Lincheck's generator (fixed seed). By stress (real threads): random
 *       scenarios. {@code join(Duration.ZERO)} belongs here because it answers without parking;
 *       had it parked, model checking would report a hang.</li>
 *   <li>The blocking {@code put}, {@code get} and {@code join}, in hand-written scenarios
 *       ({@link #blockingScenarios}), by model checking. Lincheck can only judge runs in which
 *       every call returns; random scenarios with blocking calls contain calls that wait forever
 *       (a {@code get} with nobody left to put), which it reports as a hung execution, not as a
 *       verdict. Each scenario here is one in which every call returns in every interleaving: a
 *       blocked call is always released by another thread's put, get, taskDone or shutdown.</li>
 *   <li>The same model-checking run against the broken variants of {@link BrokenQueues}, which
 *       must fail: a suite that passes on them proves nothing.</li>
 * </ul>
 * A {@link Validate} step after every run checks that nobody is left waiting in any line.
 * {@code -Dlincheck.factor=N} multiplies both the number of random scenarios and the invocations
 * (interleavings or repetitions) of every scenario.
 *
 * <h2>Why an independent model</h2>
 * Lincheck compares against a sequential specification. {@code ShutdownQueue} is sequentially
 * correct and could serve as its own, but then the check would be circular: a sequential bug
 * (such as {@link BrokenQueues.Variant#DRAIN_FORGETS_COUNT}) would be in the specification too, and
 * pass. {@link Model} transcribes the clauses (SQ-02 to SQ-05, SQ-07 to SQ-11) in a few lines that
 * share no code with the queue. It never parks: a call that would have to wait throws a private
 * {@code WouldBlock}, which the queue never throws, so every order that puts a blocking call
 * where it would wait is rejected. (A specification that parks hangs the verifier.) {@code join}
 * takes effect at an instant when the count is zero, which may come before it returns (SQ-11).
 *
 * <h2>What cannot be expressed</h2>
 * <ul>
 *   <li>Random scenarios with {@code put}, {@code get} or {@code join}: they contain calls that
 *       never return (above), which Lincheck reports as a hang after about a second of model
 *       checking or two minutes of stress.</li>
 *   <li>SQ-11's "once": a {@code join} released when the count reaches zero returns even if a put
 *       raises the count again before it runs. The scenario that tells this apart from
 *       {@code queue.Queue}'s loop ({@code join} ∥ {@code taskDone; putNowait}) also has an
 *       interleaving in which {@code join} starts after the put and waits forever, so Lincheck
 *       cannot run it; and in every scenario where all calls return, both semantics have the same
 *       linearizations.</li>
 *   <li>SQ-06 (who is woken, in which order, barging) and the waiter counts of SQ-17: a sequential
 *       specification has no blocked callers, so there is nothing to compare them with. Only the
 *       end state is checked: every line is empty once all calls have returned.</li>
 *   <li>SQ-13 and SQ-14, interruption: Lincheck has no operation that interrupts another thread of
 *       the scenario (its cancellation is for Kotlin coroutines), and whether a call throws
 *       {@code InterruptedException} depends on when the interrupt arrives, not on the queue's
 *       state, so no sequential specification can give it.</li>
 *   <li>SQ-15 with a positive timeout: model checking treats {@code System.nanoTime()} as
 *       constant, so a timed wait cannot be explored faithfully. Only {@code join(Duration.ZERO)}
 *       runs here.</li>
 *   <li>SQ-18's memory-consistency effects (a put happens-before the get that takes the item):
 *       Lincheck's model checking explores sequentially consistent interleavings only, and the
 *       items are immutable integers.</li>
 *   <li>SQ-01's other orders: only the first-in-first-out queue is checked.</li>
 * </ul>
 */
@ExtendWith(PropertyReport.class)
class ShutdownQueueLincheckTest {
    /** The bound of every queue here: small, so that {@code QueueFull} and a full drain happen. */
    static final int MAXSIZE = 2;

    /**
     * Scales every run: {@code -Dlincheck.factor=N} multiplies the random scenarios and the
     * invocations per scenario (so a random run costs about N² times as much, a hand-written one N
     * times). Lincheck's scenario generator has a fixed seed (0), so the scenarios are the same on
     * every run; the interleavings of a stress run are not.
     */
    static final int FACTOR = Math.max(1, Integer.getInteger("lincheck.factor", 1));

    // Sizes at factor 1, chosen so that the class runs in well under a minute on two cores.
    static final int MC_SCENARIOS = 5;
    static final int MC_INVOCATIONS = 50;
    static final int STRESS_SCENARIOS = 8;
    static final int STRESS_INVOCATIONS = 400;
    static final int BLOCKING_INVOCATIONS = 30;
    static final int THREADS = 2;
    static final int ACTORS_PER_THREAD = 3;
    static final int ACTORS_BEFORE = 2;
    static final int ACTORS_AFTER = 2;

    /** The clauses the random scenarios over the non-blocking operations check. */
    static final String[] NON_BLOCKING_CLAUSES =
        {"SQ-18", "SQ-02", "SQ-03", "SQ-07", "SQ-08", "SQ-09", "SQ-10", "SQ-17"};

    // ---- the sequential specification ---------------------------------------------------------

    /**
     * The sequential specification: a FIFO queue of {@value #MAXSIZE} items, its unfinished count
     * and its shutdown flag, written from the clauses. Lincheck matches its methods to the
     * operations by name and parameter types; it creates one per run (public no-arg constructor).
     */
    public static final class Model {
        /** A call that would block here: the queue never throws it, so this order is rejected. */
        private static final class WouldBlock extends RuntimeException {
            private static final long serialVersionUID = 1L;

            WouldBlock() {
                super(null, null, false, false);
            }
        }

        private final ArrayDeque<Integer> items = new ArrayDeque<>();
        private int unfinished;
        private boolean shutdown;

        /** SQ-02: shutdown before room. */
        public void putNowait(int item) throws QueueShutDown, QueueFull {
            if (shutdown) {
                throw new QueueShutDown();
            }
            if (items.size() >= MAXSIZE) {
                throw new QueueFull();
            }
            items.addLast(item);
            unfinished++;
        }

        /** SQ-03: an item before shutdown. */
        public int getNowait() throws QueueShutDown, QueueEmpty {
            Integer item = items.pollFirst();
            if (item != null) {
                return item;
            }
            if (shutdown) {
                throw new QueueShutDown();
            }
            throw new QueueEmpty();
        }

        /** SQ-10. */
        public void taskDone() {
            if (unfinished == 0) {
                throw new IllegalStateException("taskDone() called too many times");
            }
            unfinished--;
        }

        /** SQ-15 with a zero timeout: whether the count is zero now. */
        public boolean joinWithZeroTimeout() {
            return unfinished == 0;
        }

        /** SQ-07, SQ-08, SQ-09: sticky; an immediate one drains, one task per item, clamped at zero. */
        public List<Integer> shutdown(boolean immediate) {
            shutdown = true;
            if (!immediate) {
                return List.of();
            }
            List<Integer> drained = List.copyOf(items);
            items.clear();
            unfinished = Math.max(0, unfinished - drained.size());
            return drained;
        }

        public int qsize() {
            return items.size();
        }

        public int unfinishedTasks() {
            return unfinished;
        }

        public boolean isShutdown() {
            return shutdown;
        }

        public boolean full() {
            return items.size() >= MAXSIZE;
        }

        /** SQ-04: a put that would wait for room is not an order the queue can show. */
        public void put(int item) throws QueueShutDown {
            if (shutdown) {
                throw new QueueShutDown();
            }
            if (items.size() >= MAXSIZE) {
                throw new WouldBlock();
            }
            items.addLast(item);
            unfinished++;
        }

        /** SQ-05: a get that would wait for an item is not an order the queue can show. */
        public int get() throws QueueShutDown {
            Integer item = items.pollFirst();
            if (item != null) {
                return item;
            }
            if (shutdown) {
                throw new QueueShutDown();
            }
            throw new WouldBlock();
        }

        /** SQ-11: {@code join} takes effect at an instant when the count is zero. */
        public void join() {
            if (unfinished != 0) {
                throw new WouldBlock();
            }
        }
    }

    // ---- the operations under test --------------------------------------------------------------

    /**
     * The operations Lincheck calls on the queue under test; a subclass chooses the queue (the real
     * one, or a broken variant). Lincheck makes a new instance of the subclass for every run, so
     * every run starts from an empty queue.
     */
    public abstract static class NonBlockingOps {
        final QueueUnderTest<Integer> queue;

        NonBlockingOps(QueueUnderTest<Integer> queue) {
            this.queue = queue;
        }

        @Operation
        public void putNowait(@Param(gen = IntGen.class, conf = "1:3") int item) throws QueueShutDown, QueueFull {
            queue.putNowait(item);
        }

        @Operation
        public int getNowait() throws QueueShutDown, QueueEmpty {
            return queue.getNowait();
        }

        @Operation
        public void taskDone() {
            queue.taskDone();
        }

        @Operation
        public boolean joinWithZeroTimeout() throws InterruptedException {
            return queue.join(Duration.ZERO);
        }

        @Operation
        public List<Integer> shutdown(boolean immediate) {
            return queue.shutdown(immediate);
        }

        @Operation
        public int qsize() {
            return queue.qsize();
        }

        @Operation
        public int unfinishedTasks() {
            return queue.unfinishedTasks();
        }

        @Operation
        public boolean isShutdown() {
            return queue.isShutdown();
        }

        @Operation
        public boolean full() {
            return queue.full();
        }

        /** After every run: all calls have returned, so nobody may be left in a line. */
        @Validate
        public void nobodyIsLeftWaiting() {
            if (queue.waitingGetters() != 0 || queue.waitingPutters() != 0 || queue.waitingJoiners() != 0) {
                throw new IllegalStateException("a waiter is left in line: " + queue.repr());
            }
        }
    }

    /** The operations on a correct queue. */
    public static final class OnShutdownQueue extends NonBlockingOps {
        public OnShutdownQueue() {
            super(QueueUnderTest.of(new ShutdownQueue<>(MAXSIZE)));
        }
    }

    /** The operations on {@link BrokenQueues.Variant#SPLIT_CHECK_GET_NOWAIT}. */
    public static final class OnSplitCheckGetNowait extends NonBlockingOps {
        public OnSplitCheckGetNowait() {
            super(BrokenQueues.Variant.SPLIT_CHECK_GET_NOWAIT.create(MAXSIZE));
        }
    }

    /** The operations on {@link BrokenQueues.Variant#DRAIN_FORGETS_COUNT}. */
    public static final class OnDrainForgetsCount extends NonBlockingOps {
        public OnDrainForgetsCount() {
            super(BrokenQueues.Variant.DRAIN_FORGETS_COUNT.create(MAXSIZE));
        }
    }

    /** The non-blocking operations plus the blocking ones, on a correct queue; hand-written scenarios only. */
    public static final class BlockingOps extends NonBlockingOps {
        public BlockingOps() {
            super(QueueUnderTest.of(new ShutdownQueue<>(MAXSIZE)));
        }

        @Operation(blocking = true)
        public void put(int item) throws InterruptedException, QueueShutDown {
            queue.put(item);
        }

        @Operation(blocking = true)
        public int get() throws InterruptedException, QueueShutDown {
            return queue.get();
        }

        @Operation(blocking = true)
        public void join() throws InterruptedException {
            queue.join();
        }
    }

    // ---- configurations -------------------------------------------------------------------------

    /** A call of an operation of {@link BlockingOps} (which has every operation of this file). */
    private static Actor call(String operation, Object... arguments) {
        Method method = Arrays.stream(BlockingOps.class.getMethods())
                .filter(m -> m.getName().equals(operation) && m.isAnnotationPresent(Operation.class))
                .findFirst().orElseThrow(() -> new IllegalArgumentException("no operation " + operation));
        return new Actor(method, List.of(arguments), false, method.getAnnotation(Operation.class).blocking());
    }

    private static ExecutionScenario scenario(List<Actor> before, List<List<Actor>> threads, List<Actor> after) {
        return new ExecutionScenario(before, threads, after, null);
    }

    /**
     * Hand-written races of the non-blocking operations, one per clause that a race can break; every
     * model-checking run starts with these, then goes on with random scenarios. Random scenarios of
     * nine operations rarely hold a given race: on their own they missed
     * {@link BrokenQueues.Variant#SPLIT_CHECK_GET_NOWAIT} in 60 scenarios of 50 invocations, and
     * found it within 300 scenarios of 30.
     */
    static List<ExecutionScenario> nonBlockingRaces() {
        return List.of(
            // SQ-03: getNowait ∥ a put and a graceful shutdown: an item before shutdown.
            scenario(List.of(),
                List.of(List.of(call("getNowait")), List.of(call("putNowait", 1), call("shutdown", false))),
                List.of(call("qsize"))),
            // SQ-02: putNowait on a full queue ∥ a get and a graceful shutdown: shutdown before room.
            scenario(List.of(call("putNowait", 1), call("putNowait", 2)),
                List.of(List.of(call("putNowait", 3)), List.of(call("getNowait"), call("shutdown", false))),
                List.of(call("qsize"))),
            // SQ-08, SQ-18: gets ∥ an immediate shutdown: every item goes to exactly one of them.
            scenario(List.of(call("putNowait", 1), call("putNowait", 2)),
                List.of(List.of(call("getNowait"), call("getNowait")), List.of(call("shutdown", true))),
                List.of(call("unfinishedTasks"), call("qsize"))),
            // SQ-08 (the clamp), SQ-10: taskDone ∥ an immediate shutdown that drains more than is left.
            scenario(List.of(call("putNowait", 1), call("putNowait", 2), call("taskDone")),
                List.of(List.of(call("joinWithZeroTimeout"), call("taskDone")),
                    List.of(call("shutdown", true), call("unfinishedTasks"))),
                List.of(call("unfinishedTasks"))),
            // SQ-09: mixed shutdowns.
            scenario(List.of(call("putNowait", 1)),
                List.of(List.of(call("shutdown", false), call("getNowait")),
                    List.of(call("shutdown", true), call("isShutdown"))),
                List.of(call("qsize"))),
            // SQ-17: the observers see a drain as one step.
            scenario(List.of(call("putNowait", 1), call("putNowait", 2)),
                List.of(List.of(call("shutdown", true)),
                    List.of(call("full"), call("qsize"), call("unfinishedTasks"))),
                List.of()));
    }

    /** The model-checking run: the hand-written races, then random scenarios of the non-blocking operations. */
    static ModelCheckingOptions modelChecking() {
        ModelCheckingOptions options = randomScenarios(new ModelCheckingOptions(), MC_SCENARIOS * FACTOR,
                MC_INVOCATIONS * FACTOR);
        nonBlockingRaces().forEach(options::addCustomScenario);
        return options;
    }

    /** The stress run: random scenarios of the non-blocking operations. */
    static StressOptions stress() {
        return randomScenarios(new StressOptions(), STRESS_SCENARIOS * FACTOR, STRESS_INVOCATIONS * FACTOR);
    }

    private static <O extends Options<O, ?>> O randomScenarios(O options, int scenarios, int invocations) {
        return options.iterations(scenarios).invocationsPerIteration(invocations)
                .threads(THREADS).actorsPerThread(ACTORS_PER_THREAD)
                .actorsBefore(ACTORS_BEFORE).actorsAfter(ACTORS_AFTER)
                .sequentialSpecification(Model.class)
                .logLevel(LoggingLevel.OFF);
    }

    /** Records the configuration of a run over the non-blocking operations. */
    private static void record(Evidence evidence, String mode, int races, int scenarios, int invocations) {
        if (races > 0) {
            evidence.count(mode + ": hand-written races", races);
        }
        evidence.count(mode + ": random scenarios", scenarios)
                .count(mode + ": invocations per scenario", invocations)
                .count(mode + ": threads", THREADS)
                .count(mode + ": actors per thread", ACTORS_PER_THREAD)
                .count(mode + ": actors before", ACTORS_BEFORE)
                .count(mode + ": actors after", ACTORS_AFTER);
    }

    // ---- the non-blocking operations ----------------------------------------------------------

    /** SQ-18 (SQ-02, SQ-03, SQ-07 to SQ-10, SQ-17): under model checking, the non-blocking operations and both shutdowns are linearizable. */
    @Test
    @Timeout(value = 300, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void nonBlockingOperationsAreLinearizableUnderModelChecking(Evidence evidence) {
        evidence.rerunWith("lincheck.factor", FACTOR).property("Under model checking, every interleaving explored of hand-written races and random "
                + "scenarios of putNowait, getNowait, taskDone, join(0), shutdown(false|true) and the observers on a "
                + "FIFO queue of 2 agrees with some sequential order on an independent model.", NON_BLOCKING_CLAUSES)
                .seed(0);
        int races = nonBlockingRaces().size();
        record(evidence, "model checking", races, MC_SCENARIOS * FACTOR, MC_INVOCATIONS * FACTOR);
        evidence.tries((long) (races + MC_SCENARIOS * FACTOR) * MC_INVOCATIONS * FACTOR);
        modelChecking().check(OnShutdownQueue.class);
    }

    /** SQ-18 (SQ-02, SQ-03, SQ-07 to SQ-10, SQ-17): on real threads, the non-blocking operations and both shutdowns are linearizable. */
    @Test
    @Timeout(value = 300, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void nonBlockingOperationsAreLinearizableUnderStress(Evidence evidence) {
        evidence.rerunWith("lincheck.factor", FACTOR).property("On real threads, every run of random scenarios of putNowait, getNowait, taskDone, "
                + "join(0), shutdown(false|true) and the observers on a FIFO queue of 2 agrees with some "
                + "sequential order on an independent model.", NON_BLOCKING_CLAUSES);
        record(evidence, "stress", 0, STRESS_SCENARIOS * FACTOR, STRESS_INVOCATIONS * FACTOR);
        evidence.tries((long) STRESS_SCENARIOS * FACTOR * STRESS_INVOCATIONS * FACTOR);
        stress().check(OnShutdownQueue.class);
    }

    // ---- the blocking operations --------------------------------------------------------------

    /** The hand-written scenarios with blocking calls: every call in them returns, whatever the interleaving. */
    static List<ExecutionScenario> blockingScenarios() {
        return List.of(
            // SQ-05: get waits for the put.
            scenario(List.of(),
                List.of(List.of(call("get")), List.of(call("put", 1))),
                List.of(call("qsize"), call("unfinishedTasks"))),
            // SQ-04, SQ-05: two getters and two putters, each may wait for the other.
            scenario(List.of(),
                List.of(List.of(call("get"), call("get")), List.of(call("put", 1), call("put", 2))),
                List.of(call("qsize"))),
            // SQ-04: put on a full queue waits for a get.
            scenario(List.of(call("putNowait", 1), call("putNowait", 2)),
                List.of(List.of(call("put", 3)), List.of(call("getNowait"))),
                List.of(call("getNowait"), call("getNowait"), call("qsize"))),
            // SQ-04, SQ-07: put on a full queue ∥ graceful shutdown: the put throws, nothing is added.
            scenario(List.of(call("putNowait", 1), call("putNowait", 2)),
                List.of(List.of(call("put", 3)), List.of(call("shutdown", false))),
                List.of(call("qsize"), call("getNowait"))),
            // SQ-07: a graceful shutdown wakes every getter, not one (gh-117531); both throw.
            scenario(List.of(),
                List.of(List.of(call("get")), List.of(call("get")), List.of(call("shutdown", false))),
                List.of(call("qsize"))),
            // SQ-08: gets ∥ immediate shutdown with an item: exactly one of them has it.
            scenario(List.of(call("putNowait", 1)),
                List.of(List.of(call("get"), call("get")), List.of(call("shutdown", true))),
                List.of(call("qsize"), call("unfinishedTasks"))),
            // SQ-12 (C3, C4): a getter woken by a put ∥ either shutdown.
            scenario(List.of(),
                List.of(List.of(call("get")), List.of(call("put", 1)), List.of(call("shutdown", true))),
                List.of(call("qsize"), call("unfinishedTasks"))),
            scenario(List.of(),
                List.of(List.of(call("get")), List.of(call("put", 1)), List.of(call("shutdown", false))),
                List.of(call("qsize"), call("unfinishedTasks"))),
            // SQ-12 (C5): a putter woken by a get ∥ immediate shutdown: the freed slot stays empty.
            scenario(List.of(call("putNowait", 1), call("putNowait", 2)),
                List.of(List.of(call("put", 3)), List.of(call("get")), List.of(call("shutdown", true))),
                List.of(call("qsize"), call("unfinishedTasks"))),
            // SQ-10, SQ-11: join ∥ taskDone.
            scenario(List.of(call("putNowait", 1), call("getNowait")),
                List.of(List.of(call("join")), List.of(call("taskDone"))),
                List.of(call("unfinishedTasks"))),
            // SQ-08, SQ-11: join ∥ an immediate shutdown that brings the count to zero.
            scenario(List.of(call("putNowait", 1), call("putNowait", 2)),
                List.of(List.of(call("join")), List.of(call("shutdown", true))),
                List.of(call("unfinishedTasks"))),
            // SQ-08 (the clamp), SQ-10, SQ-11: join ∥ a consumer ∥ an immediate shutdown.
            scenario(List.of(call("putNowait", 1), call("putNowait", 2)),
                List.of(List.of(call("join")), List.of(call("getNowait"), call("taskDone")),
                    List.of(call("shutdown", true))),
                List.of(call("unfinishedTasks"), call("qsize"))));
    }

    /** SQ-18 (SQ-04, SQ-05, SQ-07, SQ-08, SQ-10 to SQ-12): under model checking, hand-written scenarios with blocking put, get and join are linearizable. */
    @Test
    @Timeout(value = 300, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void blockingOperationsAreLinearizableUnderModelChecking(Evidence evidence) {
        evidence.rerunWith("lincheck.factor", FACTOR).property("Under model checking, every interleaving explored of hand-written scenarios with "
                + "blocking put, get and join (each released by another thread's put, get, taskDone or "
                + "shutdown) agrees with some sequential order on the model, and leaves nobody waiting.",
                "SQ-18", "SQ-04", "SQ-05", "SQ-07", "SQ-08", "SQ-10", "SQ-11", "SQ-12");
        ModelCheckingOptions options = new ModelCheckingOptions().iterations(0)
                .invocationsPerIteration(BLOCKING_INVOCATIONS * FACTOR)
                .sequentialSpecification(Model.class)
                .logLevel(LoggingLevel.OFF);
        List<ExecutionScenario> scenarios = blockingScenarios();
        for (ExecutionScenario s : scenarios) {
            options.addCustomScenario(s);
            evidence.count("model checking: hand-written scenarios with " + s.getNThreads() + " threads", 1);
        }
        evidence.tries((long) scenarios.size() * BLOCKING_INVOCATIONS * FACTOR)
                .count("model checking: invocations per scenario", (long) BLOCKING_INVOCATIONS * FACTOR);
        options.check(BlockingOps.class);
    }

    // ---- the broken variants are caught -------------------------------------------------------

    /**
     * The model-checking run against a broken queue, which must fail. The failing scenario is not
     * minimized: that changes only the report, not the verdict, and saves most of the time.
     */
    private static void assertModelCheckingFails(Class<? extends NonBlockingOps> brokenQueue, Evidence evidence,
                                                 String expectedResult) {
        record(evidence, "model checking", nonBlockingRaces().size(), MC_SCENARIOS * FACTOR, MC_INVOCATIONS * FACTOR);
        evidence.tries(1).count("model checking: checks expected to fail", 1);
        assertThatThrownBy(() -> modelChecking().minimizeFailedScenario(false).check(brokenQueue))
                .isInstanceOf(LincheckAssertionError.class)
                .hasMessageContaining("= Invalid execution results =")
                .hasMessageContaining(expectedResult);
    }

    /** SQ-03, SQ-18: the model-checking run catches a getNowait that checks "empty" and "shut down" in two steps. */
    @Test
    @Timeout(value = 300, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void modelCheckingCatchesASplitCheckInGetNowait(Evidence evidence) {
        evidence.rerunWith("lincheck.factor", FACTOR).property("The model-checking run fails on a queue whose getNowait decides \"empty\" and "
                + "\"shut down\" in two critical sections (a bug no single thread can see).", "SQ-03", "SQ-18")
                .seed(0);
        assertModelCheckingFails(OnSplitCheckGetNowait.class, evidence, "getNowait(): QueueShutDown");
    }

    /** SQ-08, SQ-18: the model-checking run catches an immediate shutdown that forgets the unfinished count. */
    @Test
    @Timeout(value = 300, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void modelCheckingCatchesADrainThatForgetsTheCount(Evidence evidence) {
        evidence.rerunWith("lincheck.factor", FACTOR).property("The model-checking run fails on a queue whose immediate shutdown drains the items but "
                + "leaves the unfinished count as it was.", "SQ-08", "SQ-18").seed(0);
        assertModelCheckingFails(OnDrainForgetsCount.class, evidence, "unfinishedTasks(): 2");
    }
}
