package dev.drain.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.quicktheories.QuickTheory.qt;

import dev.drain.pool.RunOutcome;
import dev.drain.pool.Settlement;
import dev.drain.pool.WorkerPool;
import dev.drain.support.Bounds;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashSet;
import java.util.Map;
import java.util.NavigableSet;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.quicktheories.core.Gen;
import org.quicktheories.generators.Generate;

/**
 * KC-9: generated runs of a pool over a Kafka source, each ended its own way at its own moment,
 * each on a topic and a group of its own: afterwards the group's commits are exactly the books,
 * the dead-letter topic holds exactly the failures, and the next consumer gets exactly the rest.
 * {@code -Dkc.schedules=N} sets how many runs (the heavy profile asks 300), {@code -Dkc.seed} the seed.
 */
@ExtendWith(Broker.Extension.class)
class KafkaSourceProperties {
    static final long SEED = Long.getLong("kc.seed", 20261204L);
    static final int SCHEDULES = Integer.getInteger("kc.schedules", 16);
    /**
     * How long the attempt just after an abort's moment takes: long enough that the abort finds it
     * in flight, short enough that a run whose abort never comes still ends soon.
     */
    static final java.time.Duration STALL = java.time.Duration.ofSeconds(1);

    /** How a generated run ends. */
    enum Ending {
        /** The source goes idle. */
        NATURAL,
        /** {@code requestStop()} once the consumer has read {@code endAfter} results. */
        STOP,
        /**
         * {@code abort()} from another thread while attempt {@code endAfter + 2} is in flight (it
         * stalls), once another attempt has finished behind it or a tenth of the stall has passed.
         */
        ABORT,
        /** {@code abort()} from the handler of the {@code endAfter}-th attempt, on the pool's own thread. */
        ABORT_FROM_A_HANDLER,
        /** {@code abort()} before {@code run()}: nothing is pulled. */
        ABORT_BEFORE_THE_RUN
    }

    /**
     * One generated run.
     *
     * @param partitions the topic's partitions
     * @param perPartition records in each
     * @param workers the pool's workers
     * @param queueSize its intake
     * @param buffer the source's buffer
     * @param settleBatch settlements per batch
     * @param failEvery every record whose offset is a multiple of this, above 0, fails for good (0: none)
     * @param ending how it ends
     * @param endAfter when
     */
    record Schedule(int partitions, int perPartition, int workers, int queueSize, int buffer, int settleBatch, int failEvery,
            Ending ending, int endAfter) {}

    static Gen<Schedule> schedules() {
        Gen<int[]> shape = Generate.range(1, 3).zip(Generate.range(0, 14), Generate.range(1, 4), Generate.range(1, 4),
                (partitions, records, workers, queue) -> new int[] {partitions, records, workers, queue});
        Gen<int[]> more = Generate.range(1, 8).zip(Generate.range(1, 5), Generate.range(0, 5),
                (buffer, settle, fail) -> new int[] {buffer, settle, fail});
        return shape.zip(more, Generate.enumValues(Ending.class), Generate.range(0, 6),
                (s, m, ending, endAfter) -> new Schedule(s[0], s[1], s[2], s[3], m[0], m[1], m[2], ending, endAfter));
    }

    /** KC-9, KC-5, KC-6: after any run, the group's commits are the succeeded and dead-lettered deliveries, the dead letters are the failures, and the next consumer gets exactly the rest. */
    @Test
    void theCommitsAreExactlyTheBooks(Broker broker) {
        Coverage coverage = new Coverage();
        qt().withFixedSeed(SEED).withExamples(SCHEDULES).withShrinkCycles(10).forAll(schedules())
                .checkAssert(schedule -> check(broker, schedule, coverage));
        // The floors: a property whose runs never released or failed anything could not catch a
        // source that commits a release, or loses a dead letter.
        assertThat(coverage.released).as("runs with released deliveries, of %s: %s", SCHEDULES, coverage.runs)
                .isGreaterThanOrEqualTo(SCHEDULES / 8);
        assertThat(coverage.failed).as("runs with dead letters, of %s: %s", SCHEDULES, coverage.runs)
                .isGreaterThanOrEqualTo(SCHEDULES / 8);
        assertThat(coverage.aboveWatermark).as("runs with done offsets above a watermark, of %s: %s", SCHEDULES, coverage.runs)
                .isGreaterThanOrEqualTo(SCHEDULES / 16);
    }

    /** How many runs showed each of the cases the property must see. */
    static final class Coverage {
        int released;
        int failed;
        int aboveWatermark;
        /** Each run: its schedule and what it showed, for a floor's message. */
        final java.util.List<String> runs = new java.util.ArrayList<>();
    }

    private static void check(Broker broker, Schedule s, Coverage coverage) {
        String topic = broker.freshTopic("p", s.partitions());
        String group = Broker.freshGroup("p");
        broker.produce(topic, s.partitions(), s.perPartition());
        Recorded recorded = new Recorded();
        RunOutcome<Delivery<String, String>> outcome;
        try (KafkaSource<String, String> source = KafkaSource.builder(broker.consumer(group), new StringDeserializer(),
                new StringDeserializer()).topics(topic).buffer(s.buffer()).endWhenIdle(Duration.ofSeconds(1)).open()) {
            AtomicReference<WorkerPool<Delivery<String, String>, String>> self = new AtomicReference<>();
            AtomicInteger attempts = new AtomicInteger();
            CountDownLatch stalled = new CountDownLatch(1);
            AtomicInteger doneAfterTheStall = new AtomicInteger();
            WorkerPool<Delivery<String, String>, String> pool = WorkerPool.<Delivery<String, String>, String>builder(d -> {
                int attempt = attempts.incrementAndGet();
                if (s.ending() == Ending.ABORT_FROM_A_HANDLER && attempt == s.endAfter() + 1) {
                    Objects.requireNonNull(self.get()).abort();
                }
                if ((s.ending() == Ending.ABORT || s.ending() == Ending.ABORT_FROM_A_HANDLER) && attempt == s.endAfter() + 2) {
                    // in flight at the abort (cancelled); behind it the other workers go on (done
                    // offsets above it), or, with one worker, the intake fills up (discarded)
                    stalled.countDown();
                    Thread.sleep(STALL);
                }
                boolean aborting = s.ending() == Ending.ABORT || s.ending() == Ending.ABORT_FROM_A_HANDLER;
                // a failure stops the intake (WP-6): before the abort's moment, it would end the run first
                if (s.failEvery() > 0 && d.offset() > 0 && d.offset() % s.failEvery() == 0 && (!aborting || attempt > s.endAfter() + 2)) {
                    throw new IllegalArgumentException(d + " cannot be done");
                }
                if (attempt > s.endAfter() + 2) {
                    doneAfterTheStall.incrementAndGet();
                }
                return Objects.requireNonNull(d.value());
            }).workers(s.workers()).queueSize(s.queueSize()).settleBatch(s.settleBatch()).settler(recorded.around(source)).build();
            self.set(pool);
            if (s.ending() == Ending.ABORT_BEFORE_THE_RUN) {
                pool.abort();
            }
            // ABORT: from another thread, while the stalled attempt is in flight, once one more has
            // finished behind it or a tenth of the stall has passed (one worker: nothing finishes)
            AtomicBoolean ended = new AtomicBoolean();
            Thread aborter = Thread.ofVirtual().name("aborter").start(() -> {
                if (s.ending() != Ending.ABORT) {
                    return;
                }
                try {
                    while (!stalled.await(10, TimeUnit.MILLISECONDS)) {
                        if (ended.get()) {
                            return; // the run never reached the stalled attempt
                        }
                    }
                    long since = System.nanoTime();
                    while (doneAfterTheStall.get() == 0 && System.nanoTime() - since < STALL.toNanos() / 10) {
                        Thread.onSpinWait();
                    }
                    pool.abort();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            });
            AtomicInteger read = new AtomicInteger();
            try {
                outcome = Recorded.runToTheEnd(pool, source, results -> {
                    if (read.incrementAndGet() == s.endAfter() && s.ending() == Ending.STOP) {
                        pool.requestStop();
                    }
                });
            } finally {
                ended.set(true);
                joinQuietly(aborter);
            }
            assertThat(aborter.isAlive()).as("the aborter").isFalse();
            assertThat(pool.liveThreads()).as("the pool's threads").isZero();
            assertThat(source.staleSettlements()).as("stale settlements: nothing moved").isZero();
        }
        assertThat(outcome).as("the outcome").isNotInstanceOf(RunOutcome.Unsettled.class);
        Set<String> once = new HashSet<>();
        for (Recorded.Settled settled : recorded.settled) {
            assertThat(once.add(settled.settlement().item().toString())).as("settled once: %s", settled).isTrue();
            assertThat(settled.acknowledged()).as("acknowledged: %s", settled).isTrue();
        }
        Map<TopicPartition, NavigableSet<Long>> done = recorded.acknowledgedDone();
        coverage.released += recorded.offsetsOf(Settlement.Released.class).isEmpty() ? 0 : 1;
        coverage.failed += recorded.offsetsOf(Settlement.Failed.class).isEmpty() ? 0 : 1;
        coverage.aboveWatermark += broker.committed(group, topic).values().stream().anyMatch(c -> !c.metadata().isEmpty()) ? 1 : 0;
        coverage.runs.add(s + " -> " + outcome.getClass().getSimpleName() + ", released " + recorded.offsetsOf(Settlement.Released.class)
                + ", failed " + recorded.offsetsOf(Settlement.Failed.class).size());
        Map<TopicPartition, NavigableSet<Long>> committed = Recorded.nonEmpty(Recorded.committedDone(broker, group, topic));
        assertThat(committed).as("the group's done offsets, after %s", outcome).isEqualTo(done);
        Map<TopicPartition, NavigableSet<Long>> letters = new TreeMap<>(java.util.Comparator.comparing(TopicPartition::toString));
        for (ConsumerRecord<byte[], byte[]> letter : broker.readAll(topic + "-dlt")) {
            letters.computeIfAbsent(new TopicPartition(topic, Integer.parseInt(header(letter, "drain.dlt.partition"))),
                    p -> new TreeSet<>()).add(Long.parseLong(header(letter, "drain.dlt.offset")));
        }
        assertThat(letters).as("the dead letters").isEqualTo(recorded.offsetsOf(Settlement.Failed.class));
        Map<TopicPartition, NavigableSet<Long>> left = Recorded.minus(Recorded.all(topic, s.partitions(), s.perPartition()), done);
        Map<TopicPartition, NavigableSet<Long>> plain = Takeover.byPlainConsumer(broker, group, topic, s.partitions());
        assertThat(Recorded.minus(left, plain)).as("what a plain consumer would miss").isEmpty();
        assertThat(Recorded.minus(plain, left)).as("what a plain consumer repeats: only done offsets above the watermark")
                .allSatisfy((partition, offsets) -> assertThat(done.getOrDefault(partition, new TreeSet<>())).containsAll(offsets));
        assertThat(Takeover.bySource(broker, group, topic).offsets()).as("what the next source gets").isEqualTo(left);
    }

    /** Joins {@code thread}, at most {@link Bounds#WAIT}; an interrupt is kept, and the caller's assertion on it fails. */
    private static void joinQuietly(Thread thread) {
        try {
            thread.join(Bounds.WAIT.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static String header(ConsumerRecord<byte[], byte[]> record, String key) {
        Header header = Objects.requireNonNull(record.headers().lastHeader(key), key);
        return new String(header.value(), StandardCharsets.UTF_8);
    }
}
