package dev.drain.queue;

import static org.assertj.core.api.Assertions.assertThat;

import dev.drain.support.Bounds;
import dev.drain.support.Call;
import dev.drain.support.Evidence;
import dev.drain.support.PropertyReport;
import dev.drain.support.Spawner;
import dev.drain.support.ThreadKind;
import dev.drain.support.Waits;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Concurrency stress with bookkeeping invariants: many producers and consumers on one queue, with
 * blocking, timed and non-blocking calls, interrupts at random moments, and a graceful or
 * immediate shutdown (sometimes a second one) at a random moment. Each round checks, afterwards,
 * that nothing was lost or duplicated and that the task count balances.
 *
 * <p>Scaled by {@code -Dstress.factor=N} (default 1: a few seconds in all); the rounds' choices come
 * from {@code -Dstress.seed=N} (default fixed; the thread interleavings are never reproducible).
 */
@ExtendWith(PropertyReport.class)
class ShutdownQueueStressTest {
    static final int FACTOR = Integer.getInteger("stress.factor", 1);
    static final long SEED = Long.getLong("stress.seed", 20_240_311L);

    /** Rounds per test method and thread kind at factor 1. */
    static int rounds(ThreadKind threads) {
        return FACTOR * (threads == ThreadKind.VIRTUAL ? 120 : 50);
    }

    static final List<Integer> MAXSIZES = List.of(-1, 0, 1, 2, 3, 8, 32);
    static final List<QueueKind> KINDS = List.of(QueueKind.values());

    /** A different stream of rounds for each test method and thread kind. */
    static SplittableRandom random(int method, ThreadKind threads) {
        return new SplittableRandom(SEED + 2L * method + (threads == ThreadKind.VIRTUAL ? 0 : 1));
    }

    /** One round's shape, drawn from the seed. */
    record Setting(QueueKind kind, int maxsize, int producers, int consumers, int itemsPerProducer,
                   double consumersStartAt, double shutdownAt, boolean immediate, boolean secondShutdown,
                   boolean secondImmediate, int deferOneIn, boolean interrupts, double joinerStartsAt) {
        static Setting draw(SplittableRandom random, ThreadKind threads) {
            int most = threads == ThreadKind.VIRTUAL ? 16 : 6;
            return new Setting(
                    KINDS.get(random.nextInt(KINDS.size())),
                    MAXSIZES.get(random.nextInt(MAXSIZES.size())),
                    random.nextInt(1, most + 1),
                    random.nextInt(1, most + 1),
                    random.nextInt(20, threads == ThreadKind.VIRTUAL ? 400 : 200),
                    random.nextInt(2) == 0 ? 0 : random.nextDouble(0, 1), // a late start leaves items queued
                    random.nextDouble(0, 1.2), // past 1: once every producer has ended
                    random.nextBoolean(),
                    random.nextInt(3) == 0,
                    random.nextBoolean(),
                    random.nextInt(5, 40),
                    random.nextInt(4) != 0,
                    random.nextDouble(0, 1));
        }

        /** The shutdown comes once this many puts have returned or thrown, or once every producer has ended. */
        int shutdownPoint() {
            return (int) (producers * itemsPerProducer * shutdownAt);
        }

        /** The joiner starts once this many puts have returned or thrown, or once every producer has ended. */
        int joinerStartPoint() {
            return (int) (producers * itemsPerProducer * joinerStartsAt);
        }

        /** The consumers start once this many puts have returned or thrown, the queue is full, or every producer has ended. */
        int consumersStartPoint() {
            return (int) (producers * itemsPerProducer * consumersStartAt);
        }
    }

    /** What a round counted, for the report. */
    static final class Counters {
        final LongAdder putsAccepted = new LongAdder();
        final LongAdder putsFull = new LongAdder();
        final LongAdder putsShutDown = new LongAdder();
        final LongAdder putsInterrupted = new LongAdder();
        final LongAdder getsEmpty = new LongAdder();
        final LongAdder getsInterrupted = new LongAdder();
        final LongAdder timedCalls = new LongAdder();
        final LongAdder interruptsSent = new LongAdder();

        void report(Evidence evidence) {
            evidence.observed("puts accepted", putsAccepted.sum())
                    .observed("puts refused: QueueFull (putNowait, timed put)", putsFull.sum())
                    .observed("puts refused: QueueShutDown", putsShutDown.sum())
                    .observed("puts refused: InterruptedException", putsInterrupted.sum())
                    .observed("gets refused: QueueEmpty (getNowait, timed get)", getsEmpty.sum())
                    .observed("gets interrupted", getsInterrupted.sum())
                    .observed("timed calls", timedCalls.sum())
                    .observed("interrupts sent to workers", interruptsSent.sum());
        }
    }

    /** What the queue and the workers report at the end of a round. */
    record Ledger(Setting setting, Set<Integer> accepted, Set<Integer> refused, List<Integer> received,
                  List<Integer> drained, int deferred, int unfinishedAfterRun,
                  int qsizeAfterRun, int waitersAfterRun, boolean joinedAtOnce, boolean joinedAfterAcks,
                  boolean joinerReturned) {}

    /**
     * SQ-04, SQ-05, SQ-07, SQ-08, SQ-09, SQ-13, SQ-14, SQ-15, SQ-18: under random interrupts, short
     * timeouts and random shutdowns, every item whose put returned is received or drained exactly
     * once, no item whose put threw is ever seen, and every thread ends.
     */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void everyItemIsReceivedOrDrainedExactlyOnceAndEveryThreadEnds(ThreadKind threads, Evidence evidence) {
        evidence.rerunWith("stress.seed", SEED).rerunWith("stress.factor", FACTOR).property("With many producers and consumers mixing blocking, timed (short timeouts) and "
                + "non-blocking calls, random interrupts and a graceful or immediate shutdown (sometimes a second) "
                + "at a random moment, every item whose put returned is received or drained exactly once, no item "
                + "whose put threw (QueueFull, QueueShutDown, InterruptedException) is ever seen, the queue ends "
                + "empty with nobody waiting, and every thread ends.",
                "SQ-04", "SQ-05", "SQ-07", "SQ-08", "SQ-09", "SQ-13", "SQ-14", "SQ-15", "SQ-18").seed(SEED).requested(rounds(threads));
        SplittableRandom random = random(0, threads);
        for (int round = 0; round < rounds(threads); round++) {
            Ledger ledger = runRound(Setting.draw(random, threads), threads, random.split(), evidence);
            Setting s = ledger.setting();
            List<Integer> seen = new ArrayList<>(ledger.received());
            seen.addAll(ledger.drained());
            assertThat(seen).as("items received and drained in %s", s).doesNotHaveDuplicates();
            assertThat(new HashSet<>(seen)).as("items received or drained in %s", s).isEqualTo(ledger.accepted());
            Set<Integer> refusedButSeen = new HashSet<>(ledger.refused());
            refusedButSeen.retainAll(seen);
            assertThat(refusedButSeen).as("items whose put threw, yet received or drained, in %s", s).isEmpty();
            assertThat(ledger.qsizeAfterRun()).as("items left in %s", s).isZero();
            assertThat(ledger.waitersAfterRun()).as("getters and putters left waiting in %s", s).isZero();
        }
    }

    /**
     * SQ-08, SQ-10, SQ-11: after a stress round the unfinished count equals the items received but
     * not yet done, and join returns once they are done.
     */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void taskCountBalancesAndJoinReturnsOnceEveryItemIsDone(ThreadKind threads, Evidence evidence) {
        evidence.rerunWith("stress.seed", SEED).rerunWith("stress.factor", FACTOR).property("After a stress round in which consumers call taskDone for most items they receive and "
                + "defer the rest, unfinishedTasks() equals the items received but not yet done, join(ZERO) is "
                + "false while any is outstanding, and once they are done join returns true, as does a joiner "
                + "started at a random moment of the round.", "SQ-08", "SQ-10", "SQ-11").seed(SEED).requested(rounds(threads));
        SplittableRandom random = random(1, threads);
        for (int round = 0; round < rounds(threads); round++) {
            Ledger ledger = runRound(Setting.draw(random, threads), threads, random.split(), evidence);
            Setting s = ledger.setting();
            assertThat(ledger.unfinishedAfterRun()).as("unfinished tasks after %s", s).isEqualTo(ledger.deferred());
            assertThat(ledger.joinedAtOnce()).as("join(ZERO) with %d deferred in %s", ledger.deferred(), s)
                    .isEqualTo(ledger.deferred() == 0);
            assertThat(ledger.joinedAfterAcks()).as("join after the deferred acks in %s", s).isTrue();
            assertThat(ledger.joinerReturned()).as("the joiner started during %s", s).isTrue();
        }
    }

    /**
     * Runs one round and returns what it counted. Fails only if a thread does not end within the
     * bound or a worker meets something no worker expects; the callers check the bookkeeping.
     */
    static Ledger runRound(Setting s, ThreadKind threads, SplittableRandom random, Evidence evidence) {
        ShutdownQueue<Integer> q = s.kind().create(s.maxsize());
        Spawner spawn = new Spawner().use(threads);
        List<Call<?>> calls = new ArrayList<>();
        Counters counters = new Counters();
        AtomicInteger attempts = new AtomicInteger(); // puts that returned or threw
        AtomicInteger producersEnded = new AtomicInteger();
        AtomicInteger consumersEnded = new AtomicInteger();
        AtomicInteger receivedCount = new AtomicInteger();
        AtomicBoolean workersEnded = new AtomicBoolean();
        Set<Integer> accepted = ConcurrentHashMap.newKeySet();
        Set<Integer> refused = ConcurrentHashMap.newKeySet();
        AtomicInteger deferred = new AtomicInteger();
        try {
            Call<Boolean> joiner = spawn.call("joiner", () -> {
                Waits.until("the joiner's start point", () ->
                        attempts.get() >= s.joinerStartPoint() || producersEnded.get() == s.producers());
                if (!q.join(Duration.ZERO)) {
                    evidence.observed("joiners that found tasks unfinished and waited", 1);
                }
                return q.join(Bounds.WAIT);
            });
            calls.add(joiner);

            List<Call<Void>> producers = new ArrayList<>();
            List<Thread> workers = new ArrayList<>();
            for (int p = 0; p < s.producers(); p++) {
                int first = p * s.itemsPerProducer();
                SplittableRandom mine = random.split();
                Call<Void> producer = spawn.run("producer-" + p, () -> {
                    try {
                        produce(q, first, s.itemsPerProducer(), mine, accepted, refused, attempts, counters);
                    } finally {
                        producersEnded.incrementAndGet();
                    }
                });
                producers.add(producer);
                workers.add(producer.thread());
            }
            calls.addAll(producers);

            CountDownLatch consumersStart = new CountDownLatch(1);
            Call<Void> gate = spawn.run("consumers-gate", () -> {
                Waits.until("the consumers' start point", () -> attempts.get() >= s.consumersStartPoint()
                        || q.full() || producersEnded.get() == s.producers());
                consumersStart.countDown();
            });
            calls.add(gate);
            List<Call<List<Integer>>> consumers = new ArrayList<>();
            for (int c = 0; c < s.consumers(); c++) {
                SplittableRandom mine = random.split();
                Call<List<Integer>> consumer = spawn.call("consumer-" + c, () -> {
                    try {
                        awaitKeepingInterrupts(consumersStart);
                        return consume(q, s.deferOneIn(), mine, receivedCount, deferred, counters);
                    } finally {
                        consumersEnded.incrementAndGet();
                    }
                });
                consumers.add(consumer);
                workers.add(consumer.thread());
            }
            calls.addAll(consumers);

            SplittableRandom forInterrupts = random.split();
            Call<Void> interrupter = spawn.run("interrupter", () -> {
                // Paced by the workers' progress, not by the clock: an interrupt after every few operations.
                while (s.interrupts() && !workersEnded.get()) {
                    int mark = attempts.get() + receivedCount.get() + forInterrupts.nextInt(1, 25);
                    Waits.until("the workers' progress", () ->
                            attempts.get() + receivedCount.get() >= mark || workersEnded.get());
                    workers.get(forInterrupts.nextInt(workers.size())).interrupt();
                    counters.interruptsSent.increment();
                }
            });
            calls.add(interrupter);

            SplittableRandom forShutdown = random.split();
            Call<List<Integer>> shutdown = spawn.call("shutdown", () -> {
                Waits.until("the shutdown point", () ->
                        attempts.get() >= s.shutdownPoint() || producersEnded.get() == s.producers());
                List<Integer> drained = new ArrayList<>();
                int[] blocked = new int[1];
                q.runLocked(() -> {
                    blocked[0] = q.waitingGetters();
                    drained.addAll(q.shutdown(s.immediate()));
                });
                evidence.observed("consumers blocked in get() when the shutdown came", blocked[0]);
                if (s.secondShutdown()) {
                    int mark = receivedCount.get() + forShutdown.nextInt(0, 50);
                    Waits.until("the second shutdown point", () ->
                            receivedCount.get() >= mark || consumersEnded.get() == s.consumers());
                    drained.addAll(q.shutdown(s.secondImmediate())); // SQ-09: may drain what is left
                }
                return drained;
            });
            calls.add(shutdown);

            producers.forEach(Call::value);
            gate.value();
            List<Integer> received = new ArrayList<>();
            consumers.forEach(consumer -> received.addAll(Objects.requireNonNull(consumer.value())));
            List<Integer> drained = Objects.requireNonNull(shutdown.value());
            workersEnded.set(true);
            interrupter.value();

            int unfinished = q.unfinishedTasks();
            int qsize = q.qsize();
            int waiters = q.waitingGetters() + q.waitingPutters();
            boolean joinedAtOnce = q.join(Duration.ZERO);
            for (int i = 0; i < deferred.get(); i++) {
                q.taskDone(); // the acknowledgements the consumers deferred
            }
            boolean joinedAfterAcks = q.join(Bounds.WAIT);
            boolean joinerReturned = Objects.requireNonNull(joiner.value());

            counters.report(evidence);
            evidence.tries(1)
                    .count("rounds on " + threads.name().toLowerCase(java.util.Locale.ROOT) + " threads", 1)
                    .count(s.immediate() ? "rounds shut down immediately" : "rounds shut down gracefully", 1)
                    .count(s.secondShutdown() ? "rounds with a second shutdown" : "rounds with one shutdown", 1)
                    .observed("items received by consumers", received.size())
                    .observed("items dropped by drains", drained.size())
                    .observed("acknowledgements deferred to the end of the round", deferred.get())
                    .count("producer and consumer threads", s.producers() + s.consumers());
            return new Ledger(s, Set.copyOf(accepted), Set.copyOf(refused), List.copyOf(received),
                    List.copyOf(drained), deferred.get(), unfinished, qsize, waiters, joinedAtOnce,
                    joinedAfterAcks, joinerReturned);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("the test thread was interrupted", e);
        } finally {
            workersEnded.set(true);
            endAll(calls);
        }
    }

    /** Puts items {@code first} … {@code first + count - 1}, one attempt each, until the queue shuts down. */
    static void produce(ShutdownQueue<Integer> q, int first, int count, SplittableRandom random, Set<Integer> accepted,
                        Set<Integer> refused, AtomicInteger attempts, Counters counters) {
        boolean block = false;
        for (int item = first; item < first + count; item++) {
            try {
                switch (block ? 0 : random.nextInt(3)) {
                    case 0 -> q.put(item);
                    case 1 -> {
                        counters.timedCalls.increment();
                        q.put(item, shortTimeout(random));
                    }
                    default -> q.putNowait(item);
                }
                accepted.add(item);
                counters.putsAccepted.increment();
                block = false;
            } catch (QueueFull e) {
                refused.add(item);
                counters.putsFull.increment();
                // Wait for room next time rather than spin: a spinning virtual thread keeps its carrier.
                block = true;
            } catch (InterruptedException e) {
                // The interrupter's doing, and the point of the test: SQ-13 says the item was not added.
                refused.add(item);
                counters.putsInterrupted.increment();
            } catch (QueueShutDown e) {
                refused.add(item);
                counters.putsShutDown.increment();
                attempts.incrementAndGet();
                return; // SQ-04: every later put would be refused as well
            }
            attempts.incrementAndGet();
        }
    }

    /**
     * Gets items until the queue is shut down and empty, and returns them; calls taskDone for each
     * but one in {@code deferOneIn}, which it counts in {@code deferred} for the test to finish.
     */
    static List<Integer> consume(ShutdownQueue<Integer> q, int deferOneIn, SplittableRandom random,
                                 AtomicInteger receivedCount, AtomicInteger deferred, Counters counters) {
        List<Integer> received = new ArrayList<>();
        boolean block = false;
        while (true) {
            int item;
            try {
                item = switch (block ? 0 : random.nextInt(3)) {
                    case 0 -> q.get();
                    case 1 -> {
                        counters.timedCalls.increment();
                        yield q.get(shortTimeout(random));
                    }
                    default -> q.getNowait();
                };
            } catch (QueueEmpty e) {
                counters.getsEmpty.increment();
                block = true; // wait for an item next time rather than spin, as above
                continue;
            } catch (InterruptedException e) {
                // The interrupter's doing: SQ-13 says nothing was taken, so this consumer goes on.
                counters.getsInterrupted.increment();
                continue;
            } catch (QueueShutDown e) {
                return received; // SQ-05: shut down and empty
            }
            block = false;
            received.add(item);
            receivedCount.incrementAndGet();
            if (random.nextInt(deferOneIn) == 0) {
                deferred.incrementAndGet();
            } else {
                q.taskDone();
            }
        }
    }

    /**
     * Waits, bounded, for {@code gate} to open. An interrupt that arrives meanwhile is meant for the
     * worker's queue calls, so it is kept: the status is set again once the gate is open.
     */
    static void awaitKeepingInterrupts(CountDownLatch gate) {
        long deadline = System.nanoTime() + Bounds.WAIT.toNanos();
        boolean interrupted = false;
        while (true) {
            try {
                if (!gate.await(deadline - System.nanoTime(), TimeUnit.NANOSECONDS)) {
                    throw new AssertionError("the gate did not open within " + Bounds.WAIT);
                }
                break;
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    /** Zero to two milliseconds: long enough to wait sometimes, short enough to time out often. */
    static Duration shortTimeout(SplittableRandom random) {
        return Duration.ofNanos(random.nextLong(0, 2_000_000));
    }

    /** Interrupts any call still running (a failed round), then waits, bounded, for every call to end. */
    static void endAll(List<Call<?>> calls) {
        for (Call<?> call : calls) {
            if (!call.isDone()) {
                call.thread().interrupt();
            }
        }
        calls.forEach(Call::outcome);
    }
}
