package dev.drain.queue;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;
import static org.quicktheories.QuickTheory.qt;
import static org.quicktheories.generators.SourceDSL.lists;

import dev.drain.support.Bounds;
import dev.drain.support.Call;
import dev.drain.support.Evidence;
import dev.drain.support.PropertyReport;
import dev.drain.support.Spawner;
import dev.drain.support.ThreadKind;
import dev.drain.support.Waits;
import java.time.Duration;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.quicktheories.QuickTheory;
import org.quicktheories.core.Gen;
import org.quicktheories.generators.Generate;

/**
 * Model-based properties: random sequences of the non-blocking operations, on all three orders and
 * maxsize -1 to 4, run against {@link QueueModel} and the real queue, which must agree on every
 * outcome and every observable after every step; bookkeeping invariants after every step; and
 * exactly-once delivery when producers, consumers and a shutdown run concurrently.
 *
 * <p>QuickTheories generates the cases from a fixed seed, so the build is reproducible:
 * {@code -Dqt.seed=N} picks another seed and {@code -Dqt.examples=N} another number of cases
 * (for every property here). A falsified property is shrunk, and the failure names the smallest
 * case found, one operation at a time, and the seed.
 */
@ExtendWith(PropertyReport.class)
class ShutdownQueueProperties {

    /** The seed every property here starts from; {@code -Dqt.seed=N} overrides it. */
    static final long SEED = Long.getLong("qt.seed", 20_240_311L);

    /** The number of cases, {@code -Dqt.examples=N} if given, else {@code byDefault}. */
    static int examples(int byDefault) {
        return Integer.getInteger("qt.examples", byDefault);
    }

    /**
     * How many shrink attempts a falsified sequence gets: QuickTheories' default is 100 per example,
     * far more than a sequence of at most 40 operations needs to reach its smallest form.
     */
    static final int SHRINK_CYCLES = 3_000;

    static QuickTheory quickTheory(int examples) {
        return qt().withFixedSeed(SEED).withExamples(examples).withShrinkCycles(SHRINK_CYCLES);
    }

    /** Why a QuickTheories property may run fewer tries than it asks for. */
    static final String QT_SKIPS_REPEATS = "QuickTheories does not run a generated case it has already tried";

    /** The same, and records in {@code evidence} what it asks for and what reruns it. */
    static QuickTheory quickTheory(Evidence evidence, int examples) {
        evidence.seed(SEED).requested(examples).rerunWith("qt.seed", SEED).rerunWith("qt.examples", examples)
                .fewerBecause(QT_SKIPS_REPEATS);
        return quickTheory(examples);
    }

    // ---- operations and sequences ------------------------------------------------------------

    /**
     * The operations a single thread can make without blocking, with the weight each gets in a
     * generated sequence. {@code SKIP} is what shrinking turns an operation into when it does not
     * matter to the failure; it is dropped from the sequence, so shrunk sequences get shorter.
     */
    enum Name {
        SKIP(4),
        PUT_NOWAIT(20),
        PUT_TIMED(10),
        GET_NOWAIT(14),
        GET_TIMED(8),
        TASK_DONE(14),
        JOIN_TIMED(6),
        SHUTDOWN_GRACEFUL(2),
        SHUTDOWN_IMMEDIATE(2),
        QSIZE(4),
        EMPTY(3),
        FULL(3),
        UNFINISHED_TASKS(4),
        IS_SHUTDOWN(4);

        final int weight;

        Name(int weight) {
            this.weight = weight;
        }

        static final int TOTAL_WEIGHT = Arrays.stream(values()).mapToInt(n -> n.weight).sum();

        /** The name whose share of {@code [0, TOTAL_WEIGHT)} holds {@code ticket}; 0 is SKIP. */
        static Name byTicket(int ticket) {
            int rest = ticket;
            for (Name name : values()) {
                if (rest < name.weight) {
                    return name;
                }
                rest -= name.weight;
            }
            throw new IllegalArgumentException("ticket " + ticket + " is not below " + TOTAL_WEIGHT);
        }
    }

    /**
     * The timeouts of the timed forms: only those that never wait (SQ-15), zero seven times in ten.
     * Drawn by index, so that a timeout shrinks toward zero.
     */
    static final List<Duration> TIMEOUTS = List.of(Duration.ZERO, Duration.ZERO, Duration.ZERO, Duration.ZERO,
            Duration.ZERO, Duration.ZERO, Duration.ZERO, Duration.ofNanos(-1), Duration.ofNanos(-1),
            Duration.ofSeconds(-1));

    /** One operation; {@code item} is used by the puts only, {@code timeout} by the timed forms only. */
    record Op(Name name, int item, Duration timeout) {
        @Nullable Object on(QueueUnderTest<Integer> q) throws Exception {
            return switch (name) {
                case SKIP -> throw new IllegalStateException("SKIP is never run");
                case PUT_NOWAIT -> { q.putNowait(item); yield null; }
                case PUT_TIMED -> { q.put(item, timeout); yield null; }
                case GET_NOWAIT -> q.getNowait();
                case GET_TIMED -> q.get(timeout);
                case TASK_DONE -> { q.taskDone(); yield null; }
                case JOIN_TIMED -> q.join(timeout);
                case SHUTDOWN_GRACEFUL -> q.shutdown(false);
                case SHUTDOWN_IMMEDIATE -> q.shutdown(true);
                case QSIZE -> q.qsize();
                case EMPTY -> q.empty();
                case FULL -> q.full();
                case UNFINISHED_TASKS -> q.unfinishedTasks();
                case IS_SHUTDOWN -> q.isShutdown();
            };
        }

        @Nullable Object on(QueueModel m) throws Exception {
            return switch (name) {
                case SKIP -> throw new IllegalStateException("SKIP is never run");
                case PUT_NOWAIT -> { m.putNowait(item); yield null; }
                case PUT_TIMED -> { m.put(item, timeout); yield null; }
                case GET_NOWAIT -> m.getNowait();
                case GET_TIMED -> m.get(timeout);
                case TASK_DONE -> { m.taskDone(); yield null; }
                case JOIN_TIMED -> m.join(timeout);
                case SHUTDOWN_GRACEFUL -> m.shutdown(false);
                case SHUTDOWN_IMMEDIATE -> m.shutdown(true);
                case QSIZE -> m.qsize();
                case EMPTY -> m.empty();
                case FULL -> m.full();
                case UNFINISHED_TASKS -> m.unfinishedTasks();
                case IS_SHUTDOWN -> m.isShutdown();
            };
        }

        boolean isPut() {
            return name == Name.PUT_NOWAIT || name == Name.PUT_TIMED;
        }

        boolean isGet() {
            return name == Name.GET_NOWAIT || name == Name.GET_TIMED;
        }

        /** As the call reads in Java, for example {@code put(3, -1ns)} or {@code shutdown(true)}. */
        @Override
        public String toString() {
            String t = timeout.isZero() ? "ZERO" : timeout.equals(Duration.ofNanos(-1)) ? "-1ns" : timeout.toSeconds() + "s";
            return switch (name) {
                case SKIP -> "skip";
                case PUT_NOWAIT -> "putNowait(" + item + ")";
                case PUT_TIMED -> "put(" + item + ", " + t + ")";
                case GET_NOWAIT -> "getNowait()";
                case GET_TIMED -> "get(" + t + ")";
                case TASK_DONE -> "taskDone()";
                case JOIN_TIMED -> "join(" + t + ")";
                case SHUTDOWN_GRACEFUL -> "shutdown(false)";
                case SHUTDOWN_IMMEDIATE -> "shutdown(true)";
                case QSIZE -> "qsize()";
                case EMPTY -> "empty()";
                case FULL -> "full()";
                case UNFINISHED_TASKS -> "unfinishedTasks()";
                case IS_SHUTDOWN -> "isShutdown()";
            };
        }
    }

    /** A queue's order and bound, and the operations to make on it, in order. */
    record Scenario(QueueKind kind, int maxsize, List<Op> ops) {
        /** For example {@code FIFO maxsize=0, 2 ops: putNowait(0); shutdown(true)}. */
        @Override
        public String toString() {
            return kind + " maxsize=" + maxsize + ", " + ops.size() + " ops: "
                    + ops.stream().map(Op::toString).collect(Collectors.joining("; "));
        }
    }

    /**
     * Every draw of an operation takes the same three values (which operation, an item, a
     * timeout), so that shrinking one operation does not shift the meaning of the next. Each value
     * shrinks toward zero: toward SKIP, item 0, and a zero timeout.
     */
    static Gen<Op> ops() {
        return Generate.range(0, Name.TOTAL_WEIGHT - 1)
                .zip(Generate.range(0, 9), Generate.range(0, TIMEOUTS.size() - 1),
                        (ticket, item, timeout) -> new Op(Name.byTicket(ticket), item, TIMEOUTS.get(timeout)));
    }

    /** Sequences of up to 40 operations on a queue of one of {@code kinds}, maxsize -1 to 4. */
    static Gen<Scenario> scenarios(Gen<QueueKind> kinds) {
        return kinds.zip(Generate.range(-1, 4), lists().of(ops()).ofSizeBetween(0, 40),
                        (kind, maxsize, ops) -> new Scenario(kind, maxsize,
                                ops.stream().filter(op -> op.name() != Name.SKIP).toList()))
                .describedAs(Scenario::toString);
    }

    // ---- running one sequence ----------------------------------------------------------------

    /** How a call ended: returned a value ({@code null} for {@code void}), or threw. */
    sealed interface Result {
        record Returned(@Nullable Object value) implements Result {}

        record Threw(Class<? extends Exception> type) implements Result {}
    }

    @FunctionalInterface
    interface Body {
        @Nullable Object call() throws Exception;
    }

    static Result outcome(Body body) {
        try {
            return new Result.Returned(body.call());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("no operation here waits, so none can be interrupted", e);
        } catch (Exception e) {
            return new Result.Threw(e.getClass());
        }
    }

    /** {@return a new real queue of the scenario's order and bound, as the layer sees it} */
    static QueueUnderTest<Integer> realQueue(Scenario scenario) {
        return QueueUnderTest.of(scenario.kind().<Integer>create(scenario.maxsize()));
    }

    /** What can be observed of a queue between operations (SQ-17). */
    record Observed(int qsize, boolean empty, boolean full, int unfinishedTasks, boolean isShutdown,
                    List<Integer> itemsInGetOrder, String string) {
        static Observed of(QueueUnderTest<Integer> q) {
            return new Observed(q.qsize(), q.empty(), q.full(), q.unfinishedTasks(), q.isShutdown(),
                    q.itemsInGetOrder(), q.repr());
        }

        static Observed of(QueueModel m) {
            return new Observed(m.qsize(), m.empty(), m.full(), m.unfinishedTasks(), m.isShutdown(),
                    m.itemsInGetOrder(), m.toString());
        }
    }

    /** One step as the model predicted it: for the statistics. */
    record Step(Op op, boolean onShutDownQueue, int unfinishedBefore, Result result) {}

    /**
     * Runs {@code scenario} on {@code queue} and on a fresh model, asserting after every step that
     * both ended the call the same way and look the same.
     */
    static List<Step> agreeWithModel(Scenario scenario, QueueUnderTest<Integer> queue) {
        QueueModel model = new QueueModel(scenario.kind(), scenario.maxsize());
        List<Step> steps = new ArrayList<>();
        for (int i = 0; i < scenario.ops().size(); i++) {
            Op op = scenario.ops().get(i);
            boolean shutDown = model.isShutdown();
            int unfinished = model.unfinishedTasks();
            Result expected = outcome(() -> op.on(model));
            Result actual = outcome(() -> op.on(queue));
            String where = "step " + (i + 1) + ", " + op + ", of " + scenario;
            assertThat(actual).as("how %s ended", where).isEqualTo(expected);
            assertThat(Observed.of(queue)).as("the queue after %s", where).isEqualTo(Observed.of(model));
            steps.add(new Step(op, shutDown, unfinished, expected));
        }
        return steps;
    }

    static void countStatistics(Evidence evidence, Scenario scenario, List<Step> steps) {
        evidence.tries(1).count("sequences on " + scenario.kind() + " queues", 1)
                .count(scenario.maxsize() > 0 ? "sequences on bounded queues" : "sequences on unbounded queues", 1)
                .count("operations run", steps.size());
        boolean graceful = false;
        boolean immediate = false;
        boolean gracefulThenImmediate = false;
        for (Step step : steps) {
            if (step.onShutDownQueue()) {
                evidence.count("operations on a shut-down queue", 1);
            }
            switch (step.result()) {
                case Result.Threw(Class<? extends Exception> type) -> evidence.count("calls throwing " + type.getSimpleName(), 1);
                case Result.Returned(List<?> drained) when step.op().name() == Name.SHUTDOWN_IMMEDIATE -> {
                    evidence.count("items dropped by immediate shutdowns", drained.size());
                    if (drained.size() > step.unfinishedBefore()) {
                        evidence.count("immediate shutdowns whose count was clamped at zero", 1);
                    }
                }
                case Result.Returned(Boolean joined) when step.op().name() == Name.JOIN_TIMED ->
                        evidence.count(joined ? "join(ZERO) returning true" : "join(ZERO) returning false", 1);
                case Result.Returned r -> { }
            }
            if (step.op().name() == Name.SHUTDOWN_GRACEFUL) {
                graceful = true;
            } else if (step.op().name() == Name.SHUTDOWN_IMMEDIATE) {
                gracefulThenImmediate |= graceful && !immediate;
                immediate = true;
            }
        }
        if (immediate) {
            evidence.count("sequences with an immediate shutdown", 1);
        }
        if (graceful) {
            evidence.count("sequences with a graceful shutdown", 1);
        }
        if (gracefulThenImmediate) {
            evidence.count("sequences with a graceful, then an immediate shutdown", 1);
        }
        if (!graceful && !immediate) {
            evidence.count("sequences with no shutdown", 1);
        }
    }

    static final String[] MODEL_CLAUSES = {"SQ-01", "SQ-02", "SQ-03", "SQ-04", "SQ-05", "SQ-07", "SQ-08",
        "SQ-09", "SQ-10", "SQ-11", "SQ-15", "SQ-17"};

    /**
     * SQ-01 … SQ-05, SQ-07 … SQ-11, SQ-15, SQ-17: on every order and bound, every random sequence of
     * non-blocking operations ends every call as the model does and leaves the queue looking as the
     * model does after every step.
     */
    @Test
    void queueAgreesWithTheModelAfterEveryStep(Evidence evidence) {
        int examples = examples(1_000);
        evidence.property("On every order and maxsize -1 to 4, every random sequence of non-blocking operations "
                + "ends each call as the sequential model does (value or exception type) and leaves qsize, empty, "
                + "full, unfinishedTasks, isShutdown, the items in get order and toString as the model has them.",
                MODEL_CLAUSES).seed(SEED);
        quickTheory(evidence, examples).forAll(scenarios(Generate.enumValues(QueueKind.class))).checkAssert(scenario ->
                countStatistics(evidence, scenario,
                        agreeWithModel(scenario, realQueue(scenario))));
    }

    /**
     * SQ-08: the model property catches the broken queue whose immediate shutdown forgets to subtract
     * the drained items from the unfinished count, and shrinks the counterexample to a few steps.
     */
    @Test
    void modelPropertyCatchesTheDrainThatForgetsItsCount(Evidence evidence) {
        evidence.property("The model property, run against a queue whose immediate shutdown drains without "
                + "subtracting from the unfinished count, is falsified and shrinks to a sequence of at most 3 "
                + "operations ending in shutdown(true).", "SQ-08");
        AtomicInteger runs = new AtomicInteger();
        Throwable failure = catchThrowable(() ->
                quickTheory(evidence, examples(1_000))
                        .forAll(scenarios(Generate.constant(QueueKind.FIFO))).checkAssert(s -> {
                    runs.incrementAndGet();
                    agreeWithModel(s, BrokenQueues.Variant.DRAIN_FORGETS_COUNT.create(s.maxsize()));
                }));
        evidence.tries(runs.get())
                .fewerBecause("it stops at the broken queue's first failure and shrinks it, which is its point");
        assertThat(failure).as("QuickTheories reports the falsified property").isInstanceOf(AssertionError.class);
        String smallest = smallestCounterexample(String.valueOf(failure.getMessage()));
        Matcher count = Pattern.compile(" (\\d+) ops: ").matcher(smallest);
        assertThat(count.find()).as("a scenario in %s", smallest).isTrue();
        int ops = Integer.parseInt(count.group(1));
        evidence.count("operations in the shrunk counterexample", ops)
                .count("shrunk counterexample: " + smallest, 1);
        assertThat(smallest).as("the shrunk counterexample").endsWith("shutdown(true)");
        assertThat(ops).as("operations in the shrunk counterexample %s", smallest).isBetween(2, 3);
    }

    /**
     * SQ-16: whatever state a random sequence leaves the queue in, every method given a null item
     * or timeout throws NullPointerException and leaves the queue as it was.
     */
    @Test
    @SuppressWarnings("NullAway") // nulls on purpose
    void nullsAreRejectedInEveryState(Evidence evidence) {
        evidence.property("Whatever state a random sequence leaves the queue in (open, shut down, drained, full, "
                + "empty), put, putNowait, the timed forms and join given a null item or timeout throw "
                + "NullPointerException and change nothing.", "SQ-16").seed(SEED);
        quickTheory(evidence, examples(300)).forAll(scenarios(Generate.enumValues(QueueKind.class))).checkAssert(scenario -> {
            ShutdownQueue<Integer> q = scenario.kind().create(scenario.maxsize());
            agreeWithModel(scenario, QueueUnderTest.of(q));
            String before = q.toString();
            List<ThrowingCallable> calls = List.of(() -> q.putNowait(null), () -> q.put(null),
                    () -> q.put(1, null), () -> q.put(null, Duration.ZERO), () -> q.get(null), () -> q.join(null));
            for (ThrowingCallable call : calls) {
                assertThatThrownBy(call).isInstanceOf(NullPointerException.class);
            }
            assertThat(q).hasToString(before);
            evidence.tries(1).count("null calls rejected", calls.size())
                    .count(q.isShutdown() ? "states shut down" : "states open", 1);
        });
    }

    /**
     * SQ-19: in every random sequence, on every order and bound, each QueueShutDown, QueueEmpty and
     * QueueFull the queue throws carries no stack trace.
     */
    @Test
    void outcomeExceptionsCarryNoStackTrace(Evidence evidence) {
        evidence.property("In every random sequence of non-blocking operations, on every order and bound, each "
                + "QueueShutDown, QueueEmpty and QueueFull the queue throws has an empty stack trace.", "SQ-19")
                .seed(SEED);
        quickTheory(evidence, examples(300)).forAll(scenarios(Generate.enumValues(QueueKind.class))).checkAssert(scenario -> {
            QueueUnderTest<Integer> q = realQueue(scenario);
            for (Op op : scenario.ops()) {
                try {
                    op.on(q);
                } catch (QueueShutDown | QueueEmpty | QueueFull e) {
                    assertThat(e.getStackTrace()).as("the stack trace of %s from %s in %s", e, op, scenario).isEmpty();
                    evidence.count(e.getClass().getSimpleName() + " thrown", 1);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new AssertionError("no operation here waits, so none can be interrupted", e);
                } catch (Exception e) {
                    // taskDone() beyond the count, a negative timeout: faults, which keep their stack traces
                    assertThat(e).isInstanceOfAny(IllegalStateException.class, IllegalArgumentException.class);
                }
            }
            evidence.tries(1);
        });
    }

    /** The line after QuickTheories' "Smallest found falsifying value(s) :-". */
    static String smallestCounterexample(String report) {
        List<String> lines = report.lines().toList();
        for (int i = 0; i + 1 < lines.size(); i++) {
            if (lines.get(i).startsWith("Smallest found falsifying value")) {
                return lines.get(i + 1);
            }
        }
        throw new AssertionError("no smallest counterexample in QuickTheories' report:\n" + report);
    }

    // ---- bookkeeping invariants ----------------------------------------------------------------

    /**
     * What the items and tasks add up to, counted from the outcomes the real queue gave: every
     * item put is got, dropped by a drain, or still queued; and the unfinished count is what was
     * got and not yet done, plus what is queued, plus the drained items the clamp did not count.
     */
    static final class Ledger {
        final Map<Integer, Integer> put = new HashMap<>();
        final Map<Integer, Integer> accountedFor = new HashMap<>();
        int got;
        int done;
        int clamped;

        static void add(Map<Integer, Integer> multiset, Collection<Integer> items) {
            items.forEach(item -> multiset.merge(item, 1, Integer::sum));
        }
    }

    /**
     * SQ-01, SQ-02, SQ-03, SQ-08, SQ-10: after every step of a random sequence, 0 <= qsize <= maxsize
     * when bounded, the unfinished count is never negative, the items put are exactly those got,
     * dropped and still queued, the unfinished count equals gets minus dones plus queued plus
     * clamped drains, and taskDone fails exactly when that count is zero.
     */
    @Test
    void bookkeepingInvariantsHoldAfterEveryStep(Evidence evidence) {
        evidence.property("After every step of a random sequence: 0 <= qsize <= maxsize when bounded; unfinished "
                + "never negative; items put = items got + items dropped + items queued (as multisets); unfinished "
                + "= gets - dones + queued + drained items the clamp did not count; and taskDone fails exactly when "
                + "that is zero, i.e. never while a get is un-done.", "SQ-01", "SQ-02", "SQ-03", "SQ-08", "SQ-10")
                .seed(SEED);
        quickTheory(evidence, examples(1_000)).forAll(scenarios(Generate.enumValues(QueueKind.class))).checkAssert(scenario -> {
            evidence.tries(1);
            checkInvariants(scenario, realQueue(scenario), evidence);
        });
    }

    static void checkInvariants(Scenario scenario, QueueUnderTest<Integer> q, Evidence evidence) {
        Ledger ledger = new Ledger();
        boolean wasShutDown = false;
        for (int i = 0; i < scenario.ops().size(); i++) {
            Op op = scenario.ops().get(i);
            String where = "step " + (i + 1) + ", " + op + ", of " + scenario;
            int unfinishedBefore = q.unfinishedTasks();
            int outstanding = ledger.got - ledger.done + q.qsize() + ledger.clamped;
            Result result = outcome(() -> op.on(q));
            if (result instanceof Result.Returned(var value)) {
                if (op.isPut()) {
                    Ledger.add(ledger.put, List.of(op.item()));
                } else if (op.isGet()) {
                    ledger.got++;
                    Ledger.add(ledger.accountedFor, List.of((Integer) Objects.requireNonNull(value)));
                } else if (op.name() == Name.TASK_DONE) {
                    ledger.done++;
                } else if (value instanceof List<?> drained) {
                    @SuppressWarnings("unchecked") // shutdown returns the queue's items
                    List<Integer> items = (List<Integer>) drained;
                    Ledger.add(ledger.accountedFor, items);
                    ledger.clamped += Math.max(0, items.size() - unfinishedBefore);
                    evidence.count("items dropped by immediate shutdowns", items.size());
                }
            }
            if (op.name() == Name.TASK_DONE) {
                assertThat(result instanceof Result.Threw)
                        .as("whether taskDone failed at %s, with %d outstanding", where, outstanding)
                        .isEqualTo(outstanding == 0);
                evidence.count(outstanding == 0 ? "taskDone with nothing outstanding (refused)" : "taskDone accepted", 1);
            }
            int qsize = q.qsize();
            assertThat(qsize).as("qsize after %s", where).isNotNegative();
            if (scenario.maxsize() > 0) {
                assertThat(qsize).as("qsize after %s", where).isLessThanOrEqualTo(scenario.maxsize());
            }
            assertThat(q.unfinishedTasks()).as("unfinished after %s", where).isNotNegative()
                    .isEqualTo(ledger.got - ledger.done + qsize + ledger.clamped);
            Map<Integer, Integer> seen = new HashMap<>(ledger.accountedFor);
            Ledger.add(seen, q.itemsInGetOrder());
            assertThat(seen).as("items got, dropped and queued after %s", where).isEqualTo(ledger.put);
            if (op.name() == Name.SHUTDOWN_IMMEDIATE) {
                assertThat(qsize).as("qsize after %s", where).isZero();
            }
            wasShutDown |= op.name() == Name.SHUTDOWN_GRACEFUL || op.name() == Name.SHUTDOWN_IMMEDIATE;
            assertThat(q.isShutdown()).as("isShutdown after %s", where).isEqualTo(wasShutDown);
        }
        if (ledger.clamped > 0) {
            evidence.count("sequences where the drain's clamp absorbed taskDone misuse", 1);
        }
    }

    // ---- exactly once, under concurrency --------------------------------------------------------

    /** One concurrent run: the queue, the workers, and when and how the shutdown comes. */
    record Setting(QueueKind kind, int maxsize, boolean immediate, int consumersStartAtPercent, int producers,
                   int consumers, int itemsPerProducer, int shutdownAtPercent) {
        int items() {
            return producers * itemsPerProducer;
        }

        /** The shutdown comes once this many puts have succeeded, or once every producer has ended. */
        int shutdownPoint() {
            return items() * shutdownAtPercent / 100;
        }

        /**
         * The consumers start once this many puts have succeeded, or once the queue is full or every
         * producer has ended (so that a late start leaves items queued for the shutdown to find).
         */
        int consumersStartPoint() {
            return items() * consumersStartAtPercent / 100;
        }

        @Override
        public String toString() {
            return kind + " maxsize=" + maxsize + ", " + producers + " producers x " + itemsPerProducer + " items, "
                    + consumers + " consumers starting after " + consumersStartPoint() + " puts, "
                    + (immediate ? "shutdown(true)" : "shutdown(false)") + " after " + shutdownPoint() + " puts";
        }
    }

    /** Settings for {@code threads}: fewer and smaller with platform threads. */
    static Gen<Setting> settings(ThreadKind threads) {
        int most = threads == ThreadKind.VIRTUAL ? 6 : 3;
        int items = threads == ThreadKind.VIRTUAL ? 60 : 30;
        record Shape(QueueKind kind, int maxsize, boolean immediate, int consumersStartAtPercent) {}
        Gen<Shape> shapes = Generate.enumValues(QueueKind.class)
                .zip(Generate.range(-1, 4), Generate.booleans(), Generate.range(0, 100), Shape::new);
        return shapes.zip(Generate.range(1, most), Generate.range(1, most), Generate.range(0, items),
                        Generate.range(0, 100),
                        (shape, producers, consumers, perProducer, percent) -> new Setting(shape.kind(),
                                shape.maxsize(), shape.immediate(), shape.consumersStartAtPercent(), producers,
                                consumers, perProducer, percent))
                .describedAs(Setting::toString);
    }

    /** Blocked callers when the shutdown came, and what it drained: read under the queue's lock. */
    record AtShutdown(int getters, int putters, List<Integer> drained) {}

    /** The task the test thread holds un-done for the whole run, so that no join may return early. */
    static final int HELD = -1;

    /**
     * SQ-04, SQ-05, SQ-07, SQ-08, SQ-11, SQ-18: with producers and consumers running and a shutdown
     * at a random point, every item put successfully is received exactly once or drained exactly
     * once, never both and never neither; refused puts are never received; every thread ends; and
     * join() returns only once every received item is done and the drain subtracted the rest.
     */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void everyItemPutIsReceivedOrDrainedExactlyOnce(ThreadKind threads, Evidence evidence) {
        evidence.property("With producers and consumers running and a shutdown (graceful or immediate) at a random "
                + "point, every item put successfully is received by exactly one consumer or returned by "
                + "shutdown(true), never both and never neither; no item whose put threw QueueShutDown is ever "
                + "received; every producer, consumer and joiner ends; and join() stays blocked while a received "
                + "item is un-done, and returns once every received item is done and the drain subtracted the rest "
                + "(platform threads run smaller settings).", "SQ-04", "SQ-05", "SQ-07", "SQ-08", "SQ-11", "SQ-18")
                .seed(SEED);
        int examples = examples(threads == ThreadKind.VIRTUAL ? 300 : 100);
        // A failing run is repeated for every shrink attempt, and a hang costs a bounded wait each time.
        quickTheory(evidence, examples).withShrinkCycles(50).forAll(settings(threads))
                .checkAssert(setting -> runConcurrently(setting, threads, evidence));
    }

    static void runConcurrently(Setting s, ThreadKind threads, Evidence evidence) {
        ShutdownQueue<Integer> q = s.kind().create(s.maxsize());
        List<Call<?>> calls = new ArrayList<>();
        Spawner spawn = new Spawner().use(threads);
        try {
            // The test thread takes one task and holds it un-done until every other thread has ended.
            q.putNowait(HELD);
            assertThat(q.getNowait()).isEqualTo(HELD);

            Call<Void> earlyJoiner = spawn.run("joiner-from-the-start", q::join);
            calls.add(earlyJoiner);

            AtomicInteger accepted = new AtomicInteger();
            AtomicInteger producersEnded = new AtomicInteger();
            Set<Integer> acceptedItems = ConcurrentHashMap.newKeySet();
            Set<Integer> refusedItems = ConcurrentHashMap.newKeySet();
            List<Call<Void>> producers = new ArrayList<>();
            for (int p = 0; p < s.producers(); p++) {
                int first = p * s.itemsPerProducer();
                producers.add(spawn.run("producer-" + p, () -> {
                    try {
                        for (int item = first; item < first + s.itemsPerProducer(); item++) {
                            try {
                                q.put(item);
                            } catch (QueueShutDown e) {
                                refusedItems.add(item);
                                return; // SQ-04: every later put would be refused as well
                            }
                            acceptedItems.add(item);
                            accepted.incrementAndGet();
                        }
                    } finally {
                        producersEnded.incrementAndGet();
                    }
                }));
            }
            calls.addAll(producers);

            CountDownLatch consumersStart = new CountDownLatch(1);
            Call<Void> gate = spawn.run("consumers-gate", () -> {
                Waits.until("the consumers' start point of " + s, () -> accepted.get() >= s.consumersStartPoint()
                        || q.full() || producersEnded.get() == s.producers());
                consumersStart.countDown();
            });
            calls.add(gate);
            List<Call<List<Integer>>> consumers = new ArrayList<>();
            for (int c = 0; c < s.consumers(); c++) {
                consumers.add(spawn.call("consumer-" + c, () -> {
                    if (!consumersStart.await(Bounds.WAIT.toNanos(), TimeUnit.NANOSECONDS)) {
                        throw new AssertionError("the consumers' gate did not open within " + Bounds.WAIT);
                    }
                    List<Integer> received = new ArrayList<>();
                    while (true) {
                        int item;
                        try {
                            item = q.get();
                        } catch (QueueShutDown e) {
                            return received; // SQ-05, SQ-07: shut down and empty
                        }
                        received.add(item);
                        q.taskDone();
                    }
                }));
            }
            calls.addAll(consumers);

            Call<AtShutdown> shutdown = spawn.call("shutdown", () -> {
                Waits.until("the shutdown point of " + s, () ->
                        accepted.get() >= s.shutdownPoint() || producersEnded.get() == s.producers());
                List<AtShutdown> at = new ArrayList<>(1);
                q.runLocked(() -> at.add(new AtShutdown(q.waitingGetters(), q.waitingPutters(), q.shutdown(s.immediate()))));
                return at.getFirst();
            });
            calls.add(shutdown);
            AtShutdown atShutdown = Objects.requireNonNull(shutdown.value());

            Call<Void> lateJoiner = spawn.run("joiner-after-the-shutdown", q::join);
            calls.add(lateJoiner);

            producers.forEach(Call::value);
            gate.value();
            List<Integer> received = new ArrayList<>();
            consumers.forEach(consumer -> received.addAll(Objects.requireNonNull(consumer.value())));

            // Exactly once: received or drained, never both, never twice, never neither.
            List<Integer> seen = new ArrayList<>(received);
            seen.addAll(atShutdown.drained());
            assertThat(seen).as("items received and drained in %s", s).doesNotHaveDuplicates();
            assertThat(new HashSet<>(seen)).as("items received or drained in %s", s).isEqualTo(acceptedItems);
            Set<Integer> refusedButSeen = new HashSet<>(refusedItems);
            refusedButSeen.retainAll(seen);
            assertThat(refusedButSeen).as("items refused by the shutdown but received or drained in %s", s).isEmpty();
            assertThat(refusedItems).as("refused puts (one at most per producer) in %s", s)
                    .hasSizeLessThanOrEqualTo(s.producers());
            if (!s.immediate()) {
                assertThat(atShutdown.drained()).as("what a graceful shutdown drains").isEmpty();
            }
            assertThat(q.qsize()).as("items left in %s", s).isZero();

            // join(): everything but the held task is accounted for, and both joiners still wait for it.
            int outstanding = 1 + acceptedItems.size() - received.size() - atShutdown.drained().size();
            assertThat(q.unfinishedTasks()).as("unfinished tasks after %s", s).isEqualTo(outstanding).isEqualTo(1);
            Waits.until("both joiners wait for the held task in " + s, () -> q.waitingJoiners() == 2);
            assertThat(earlyJoiner.isDone() || lateJoiner.isDone()).as("a joiner returned early in %s", s).isFalse();
            q.taskDone();
            earlyJoiner.value();
            lateJoiner.value();
            assertThat(q.unfinishedTasks()).isZero();

            evidence.tries(1).count(s.immediate() ? "runs with an immediate shutdown" : "runs with a graceful shutdown", 1)
                    .observed("items put", acceptedItems.size())
                    .observed("items received by consumers", received.size())
                    .observed("items dropped by drains", atShutdown.drained().size())
                    .observed("puts refused by the shutdown", refusedItems.size())
                    .observed("consumers blocked in get() when the shutdown came", atShutdown.getters())
                    .observed("producers blocked in put() when the shutdown came", atShutdown.putters());
            if (atShutdown.getters() > 0) {
                evidence.observed("runs with a consumer blocked when the shutdown came", 1);
            }
        } catch (QueueShutDown | QueueFull | QueueEmpty e) {
            throw new AssertionError("the held task could not be set up", e);
        } finally {
            endAll(calls);
        }
    }

    /** Interrupts any call still running (a failed run), then waits, bounded, for every call to end. */
    static void endAll(List<Call<?>> calls) {
        for (Call<?> call : calls) {
            if (!call.isDone()) {
                call.thread().interrupt();
            }
        }
        calls.forEach(Call::outcome);
    }
}
