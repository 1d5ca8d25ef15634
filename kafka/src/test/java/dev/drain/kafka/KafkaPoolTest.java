package dev.drain.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import dev.drain.pool.Backoff;
import dev.drain.pool.ItemContext;
import dev.drain.pool.Results;
import dev.drain.pool.RunOutcome;
import dev.drain.pool.Settlement;
import dev.drain.pool.WorkerPool;
import dev.drain.support.Bounds;
import dev.drain.support.Outage;
import dev.drain.support.Waits;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.NavigableSet;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.serialization.IntegerDeserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** A pool over a Kafka source, from the first poll to the last commit, and what the next consumer gets. */
@ExtendWith(Broker.Extension.class)
class KafkaPoolTest {

    private static KafkaSource.Builder<String, String> source(Broker broker, String group, String topic) {
        return KafkaSource.builder(broker.consumer(group), new StringDeserializer(), new StringDeserializer()).topics(topic);
    }

    private static String value(Delivery<String, String> d) {
        return Objects.requireNonNull(d.value());
    }

    /** KC-4, KC-9: a run that drains a topic commits, on every partition, the end of the partition. */
    @Test
    void aDrainedTopicIsCommittedToItsEnd(Broker broker) {
        String topic = broker.freshTopic("drained", 3);
        String group = Broker.freshGroup("drained");
        broker.produce(topic, 3, 20);
        List<String> handled = Collections.synchronizedList(new ArrayList<>());
        try (KafkaSource<String, String> source = source(broker, group, topic).endWhenIdle(Duration.ofSeconds(1)).open()) {
            WorkerPool<Delivery<String, String>, String> pool = WorkerPool.<Delivery<String, String>, String>builder(d -> {
                handled.add(value(d));
                return value(d);
            }).workers(4).queueSize(8).settler(source.settler()).build();
            assertThat(Recorded.runToTheEnd(pool, source, r -> {})).isInstanceOf(RunOutcome.Completed.class);
        }
        assertThat(handled).hasSize(60).doesNotHaveDuplicates();
        Map<TopicPartition, OffsetAndMetadata> committed = broker.committed(group, topic);
        assertThat(committed).hasSize(3);
        committed.forEach((partition, offset) -> assertThat(offset.offset()).as("%s", partition).isEqualTo(20));
        assertThat(Broker.noSourceThreads()).isTrue();
    }

    /**
     * KC-4: a settler's wakeup never fails a commit: thousands of one-settlement batches, each
     * committed at once while the poll thread polls, commits and serves, all end settled.
     */
    @Test
    void aSettlersWakeupNeverFailsACommit(Broker broker) {
        String topic = broker.freshTopic("woken", 2);
        String group = Broker.freshGroup("woken");
        broker.produce(topic, 2, 1_500);
        try (KafkaSource<String, String> source = source(broker, group, topic).commitInterval(Duration.ZERO).buffer(16)
                .endWhenIdle(Duration.ofSeconds(1)).open()) {
            WorkerPool<Delivery<String, String>, String> pool = WorkerPool.<Delivery<String, String>, String>builder(d -> {
                Thread.sleep(1); // slower than the polls: the buffer fills, and the poll thread waits for the batches
                return value(d);
            }).workers(4).queueSize(8).settleBatch(1).settler(source.settler()).build();
            RunOutcome<Delivery<String, String>> outcome = Recorded.runToTheEnd(pool, source, r -> {});
            assertThat(outcome).as("%s", outcome instanceof RunOutcome.Unsettled<Delivery<String, String>> u ? u.cause() : outcome)
                    .isInstanceOf(RunOutcome.Completed.class);
        }
        broker.committed(group, topic).forEach((partition, offset) -> assertThat(offset.offset()).as("%s", partition).isEqualTo(1_500));
    }

    /**
     * KC-4: batches wait for their commits together: with one-settlement batches and a long commit
     * interval, a run of 20 records is committed in fewer commits than batches, and still exactly
     * to each partition's end; with one batch in flight, no commit carries two batches.
     */
    @Test
    void batchesInFlightShareACommit(Broker broker) {
        String topic = broker.freshTopic("in-flight", 2);
        broker.produce(topic, 2, 10);
        for (int inFlight : new int[] {32, 1}) {
            String group = Broker.freshGroup("in-flight-" + inFlight);
            long commits;
            try (KafkaSource<String, String> source = source(broker, group, topic).commitInterval(Duration.ofMillis(200))
                    .batchesInFlight(inFlight).endWhenIdle(Duration.ofSeconds(1)).open()) {
                WorkerPool<Delivery<String, String>, String> pool = WorkerPool.<Delivery<String, String>, String>builder(
                        KafkaPoolTest::value).workers(4).queueSize(8).settleBatch(1).settler(source.settler()).build();
                assertThat(Recorded.runToTheEnd(pool, source, r -> {})).isInstanceOf(RunOutcome.Completed.class);
                commits = source.commits();
            }
            if (inFlight == 1) {
                assertThat(commits).as("one batch in flight: a commit per batch, at least").isGreaterThanOrEqualTo(20);
            } else {
                assertThat(commits).as("%d batches in flight: commits for 20 batches", inFlight).isLessThan(20);
            }
            broker.committed(group, topic).forEach((partition, offset) ->
                    assertThat(offset.offset()).as("%s", partition).isEqualTo(10));
        }
        assertThat(Broker.noSourceThreads()).isTrue();
    }

    /** KC-9: after a graceful stop, each partition's watermark is its first record the pool did not pull, and the next source gets exactly the rest. */
    @Test
    void aGracefulStopCommitsEachPartitionToItsFirstUnpulledRecord(Broker broker) {
        String topic = broker.freshTopic("stopped", 3);
        String group = Broker.freshGroup("stopped");
        broker.produce(topic, 3, 30);
        Recorded recorded = new Recorded();
        AtomicInteger read = new AtomicInteger();
        try (KafkaSource<String, String> source = source(broker, group, topic).buffer(8).open()) {
            WorkerPool<Delivery<String, String>, String> pool = WorkerPool.<Delivery<String, String>, String>builder(
                    KafkaPoolTest::value).workers(2).queueSize(4).settler(recorded.around(source)).settleBatch(3).build();
            RunOutcome<Delivery<String, String>> outcome = Recorded.runToTheEnd(pool, source, results -> {
                if (read.incrementAndGet() == 10) {
                    pool.requestStop();
                }
            });
            assertThat(outcome).isInstanceOf(RunOutcome.Completed.class);
        }
        Map<TopicPartition, NavigableSet<Long>> pulled = recorded.offsetsOf(Settlement.Succeeded.class);
        assertThat(recorded.acknowledgedDone()).isEqualTo(pulled);
        Map<TopicPartition, OffsetAndMetadata> committed = broker.committed(group, topic);
        for (int p = 0; p < 3; p++) {
            TopicPartition partition = new TopicPartition(topic, p);
            NavigableSet<Long> mine = pulled.getOrDefault(partition, new TreeSet<>());
            long firstUnpulled = mine.isEmpty() ? 0 : mine.last() + 1;
            assertThat(mine).as("pulled from %s: a prefix", partition).hasSize((int) firstUnpulled);
            OffsetAndMetadata c = committed.get(partition);
            assertThat(c == null ? 0 : c.offset()).as("the watermark of %s", partition).isEqualTo(firstUnpulled);
        }
        Takeover.Got next = Takeover.bySource(broker, group, topic);
        assertThat(next.offsets()).isEqualTo(Recorded.minus(Recorded.all(topic, 3, 30), pulled));
    }

    /**
     * KC-6, KC-9: after an abort, the group has committed exactly what succeeded, the next source
     * gets exactly the rest, and a plain consumer gets the rest plus the done offsets above the
     * watermark, and nothing else.
     */
    @Test
    void anAbortLeavesExactlyWhatWasNotDoneToTheNextConsumer(Broker broker) throws Exception {
        String topic = broker.freshTopic("aborted", 2);
        String group = Broker.freshGroup("aborted");
        broker.produce(topic, 2, 25);
        Recorded recorded = new Recorded();
        CountDownLatch stuckStarted = new CountDownLatch(1);
        CountDownLatch never = new CountDownLatch(1);
        try (KafkaSource<String, String> source = source(broker, group, topic).buffer(6).open()) {
            WorkerPool<Delivery<String, String>, String> pool = WorkerPool.<Delivery<String, String>, String>builder(d -> {
                if (d.partition() == 0 && d.offset() == 3) { // in flight at the abort: cancelled, below done ones
                    stuckStarted.countDown();
                    never.await();
                }
                return value(d);
            }).workers(3).queueSize(3).settler(recorded.around(source)).settleBatch(2).build();
            AtomicInteger read = new AtomicInteger();
            RunOutcome<Delivery<String, String>> outcome = Recorded.runToTheEnd(pool, source, results -> {
                if (read.incrementAndGet() >= 12 && stuckStarted.getCount() == 0) {
                    pool.abort(); // idempotent: the first call aborts
                }
            });
            assertThat(outcome).isInstanceOf(RunOutcome.Aborted.class);
        }
        Map<TopicPartition, NavigableSet<Long>> done = recorded.acknowledgedDone();
        assertThat(Recorded.committedDone(broker, group, topic)).as("committed done offsets")
                .isEqualTo(withEmpty(done, topic, 2));
        assertThat(recorded.offsetsOf(Settlement.Released.class).get(new TopicPartition(topic, 0))).as("released").contains(3L);
        Map<TopicPartition, NavigableSet<Long>> left = Recorded.minus(Recorded.all(topic, 2, 25), done);
        Map<TopicPartition, NavigableSet<Long>> plain = Takeover.byPlainConsumer(broker, group, topic, 2);
        Map<TopicPartition, NavigableSet<Long>> plainRepeats = Recorded.minus(plain, left);
        assertThat(Recorded.minus(left, plain)).as("what a plain consumer misses").isEmpty();
        assertThat(plainRepeats).as("a plain consumer repeats only done offsets above the watermark")
                .allSatisfy((partition, offsets) -> assertThat(done.get(partition)).containsAll(offsets));
        Takeover.Got next = Takeover.bySource(broker, group, topic);
        assertThat(next.offsets()).as("what the next source gets").isEqualTo(left);
        assertThat(next.skippedAsDone()).as("what it skipped thanks to the metadata")
                .isEqualTo(plainRepeats.values().stream().mapToLong(Set::size).sum());
    }

    private static Map<TopicPartition, NavigableSet<Long>> withEmpty(Map<TopicPartition, NavigableSet<Long>> offsets, String topic,
            int partitions) {
        Map<TopicPartition, NavigableSet<Long>> all = new java.util.TreeMap<>(java.util.Comparator.comparing(TopicPartition::toString));
        for (int p = 0; p < partitions; p++) {
            all.put(new TopicPartition(topic, p), new TreeSet<>(offsets.getOrDefault(new TopicPartition(topic, p), new TreeSet<>())));
        }
        return all;
    }

    /** KC-5: a record that fails for good is in the dead-letter topic, with its bytes and why, and is committed done. */
    @Test
    void aFailureIsDeadLetteredThenCommitted(Broker broker) {
        String topic = broker.freshTopic("failing", 1);
        String group = Broker.freshGroup("failing");
        broker.produce(topic, 1, 5);
        try (KafkaSource<String, String> source = source(broker, group, topic).endWhenIdle(Duration.ofSeconds(1)).open()) {
            WorkerPool<Delivery<String, String>, String> pool = WorkerPool.<Delivery<String, String>, String>builder(d -> {
                if (d.offset() == 4) {
                    throw new IllegalArgumentException("no good: " + value(d));
                }
                return value(d);
            }).workers(1).queueSize(1).settler(source.settler()).build();
            assertThat(Recorded.runToTheEnd(pool, source, r -> {})).isInstanceOf(RunOutcome.Failed.class);
            assertThat(source.deadLetters()).isEqualTo(1);
        }
        List<ConsumerRecord<byte[], byte[]>> letters = broker.readAll(topic + "-dlt");
        assertThat(letters).hasSize(1);
        ConsumerRecord<byte[], byte[]> letter = letters.getFirst();
        assertThat(new String(letter.value(), StandardCharsets.UTF_8)).isEqualTo("0-4");
        assertThat(header(letter, "drain.dlt.topic")).isEqualTo(topic);
        assertThat(header(letter, "drain.dlt.offset")).isEqualTo("4");
        assertThat(header(letter, "drain.dlt.attempts")).isEqualTo("1");
        assertThat(header(letter, "drain.dlt.error")).contains("IllegalArgumentException", "no good: 0-4");
        assertThat(broker.committed(group, topic).get(new TopicPartition(topic, 0))).extracting(OffsetAndMetadata::offset)
                .isEqualTo(5L);
    }

    /**
     * WP-23, KC-5, KC-9: a service over a topic goes on past its poison records: 3,000 records on 3
     * partitions, one in 100 failing for good, one {@code forEach} run. Each poison record is
     * dead-lettered exactly once, every other record is handled once, the run ends
     * {@code Completed} naming the 30 failures, and every partition is committed to its end.
     */
    @Test
    void poisonRecordsAmongThousandsAreDeadLetteredOnceAndTheRestDoneInOneRun(Broker broker) {
        String topic = broker.freshTopic("poisoned", 3);
        String group = Broker.freshGroup("poisoned");
        broker.produce(topic, 3, 1_000);
        List<String> handled = Collections.synchronizedList(new ArrayList<>());
        RunOutcome<Delivery<String, String>> outcome;
        try (KafkaSource<String, String> source = source(broker, group, topic).endWhenIdle(Duration.ofSeconds(1)).open()) {
            WorkerPool<Delivery<String, String>, Void> service = WorkerPool.<Delivery<String, String>>forEach(d -> {
                if (d.offset() % 100 == 7) {
                    throw new IllegalArgumentException("poison: " + value(d));
                }
                handled.add(value(d));
            }).workers(8).queueSize(16).settler(source.settler()).build();
            outcome = service.drain(source.records());
            assertThat(source.deadLetters()).isEqualTo(30);
        }
        assertThat(outcome).isInstanceOf(RunOutcome.Completed.class);
        assertThat(outcome.failures()).hasSize(30);
        assertThat(handled).hasSize(2_970).doesNotHaveDuplicates();
        List<String> letters = broker.readAll(topic + "-dlt").stream()
                .map(r -> new String(r.value(), StandardCharsets.UTF_8)).toList();
        assertThat(letters).as("dead letters, each once").hasSize(30).doesNotHaveDuplicates()
                .allMatch(v -> Integer.parseInt(v.substring(v.indexOf('-') + 1)) % 100 == 7);
        broker.committed(group, topic).forEach((partition, offset) ->
                assertThat(offset.offset()).as("%s", partition).isEqualTo(1_000));
        assertThat(broker.committed(group, topic)).hasSize(3);
        assertThat(Broker.noSourceThreads()).isTrue();
    }

    /**
     * WP-28, WP-23, KC-9: the handler's backend goes down for five seconds in the middle of a run
     * over 300 records: with the retries and the backoff {@code Backoff}'s javadoc recommends
     * (eight retries, exponential from 1 s to 30 s), no record is dead-lettered, every record is
     * handled once and committed, in one run, and no retry comes sooner than the backoff's floor
     * after the attempt before it.
     */
    @Test
    void aBackendDownForFiveSecondsDeadLettersNothing(Broker broker) {
        String topic = broker.freshTopic("outage", 3);
        String group = Broker.freshGroup("outage");
        broker.produce(topic, 3, 100);
        Outage backend = new Outage(50, Duration.ofSeconds(5));
        List<String> handled = Collections.synchronizedList(new ArrayList<>());
        RunOutcome<Delivery<String, String>> outcome;
        try (KafkaSource<String, String> source = source(broker, group, topic).endWhenIdle(Duration.ofSeconds(1)).open()) {
            WorkerPool<Delivery<String, String>, Void> service = WorkerPool.<Delivery<String, String>>forEach(d -> {
                backend.call(value(d));
                handled.add(value(d));
            }).workers(8).settler(source.settler()).retryable(IOException.class).maxRetries(8)
                    .retryBackoff(Outage.RECOMMENDED).build();
            outcome = service.drain(source.records());
            assertThat(source.deadLetters()).as("dead letters").isZero();
        }
        assertThat(backend.refused()).as("calls the outage refused").isGreaterThanOrEqualTo(8);
        assertThat(backend.retries()).as("retries").isEqualTo(backend.refused());
        assertThat(backend.callsSoonerThan(Outage::recommendedFloor)).as("retries sooner than the backoff's floor").isEmpty();
        assertThat(outcome).isEqualTo(new RunOutcome.Completed<Delivery<String, String>>(false));
        assertThat(handled).hasSize(300).doesNotHaveDuplicates();
        broker.committed(group, topic).forEach((partition, offset) ->
                assertThat(offset.offset()).as("%s", partition).isEqualTo(100));
        assertThat(broker.committed(group, topic)).hasSize(3);
        assertThat(Broker.noSourceThreads()).isTrue();
    }

    /**
     * WP-28, KC-4: no worker idles on a delay: one worker, the record at offset 0 fails its first
     * attempt and waits 2 s for its retry (far longer than the others take); the worker handles
     * offsets 1 to 3 meanwhile, and offset 0's retry comes last; the partition is committed to its end.
     */
    @Test
    void noWorkerIdlesOnADelay(Broker broker) {
        String topic = broker.freshTopic("delay", 1);
        String group = Broker.freshGroup("delay");
        broker.produce(topic, 1, 4);
        List<String> attempts = Collections.synchronizedList(new ArrayList<>());
        RunOutcome<Delivery<String, String>> outcome;
        try (KafkaSource<String, String> source = source(broker, group, topic).endWhenIdle(Duration.ofSeconds(1)).open()) {
            WorkerPool<Delivery<String, String>, Void> service = WorkerPool.<Delivery<String, String>>forEach(d -> {
                int attempt = ItemContext.current().attempt();
                attempts.add(d.offset() + "/" + attempt);
                if (d.offset() == 0 && attempt == 1) {
                    throw new IOException("the backend did not answer " + value(d));
                }
            }).workers(1).queueSize(1).settler(source.settler()).retryable(IOException.class).maxRetries(1)
                    .retryBackoff(Backoff.fixed(Duration.ofSeconds(2))).build();
            outcome = service.drain(source.records());
        }
        assertThat(outcome).isEqualTo(new RunOutcome.Completed<Delivery<String, String>>(false));
        assertThat(attempts).containsExactly("0/1", "1/1", "2/1", "3/1", "0/2");
        assertThat(broker.committed(group, topic).values()).singleElement().satisfies(o -> assertThat(o.offset()).isEqualTo(4));
    }

    private static String header(ConsumerRecord<byte[], byte[]> record, String key) {
        Header header = record.headers().lastHeader(key);
        assertThat(header).as("header %s", key).isNotNull();
        return new String(Objects.requireNonNull(header).value(), StandardCharsets.UTF_8);
    }

    /** KC-3, KC-5: a record that cannot be deserialized fails as an item, is dead-lettered and committed, and the next run does not see it again. */
    @Test
    void anUnreadableRecordIsDeadLetteredNotARetryLoop(Broker broker) {
        String topic = broker.freshTopic("unreadable", 1);
        String group = Broker.freshGroup("unreadable");
        broker.produceRaw(topic, List.of(new byte[] {0, 0, 0, 1}, new byte[] {7, 7, 7}, new byte[] {0, 0, 0, 3}));
        List<Integer> handled = Collections.synchronizedList(new ArrayList<>());
        for (int run = 0; run < 2; run++) {
            try (KafkaSource<String, Integer> source = KafkaSource.builder(broker.consumer(group), new StringDeserializer(),
                    new IntegerDeserializer()).topics(topic).endWhenIdle(Duration.ofSeconds(1)).open()) {
                WorkerPool<Delivery<String, Integer>, Integer> pool = WorkerPool.<Delivery<String, Integer>, Integer>builder(d -> {
                    Integer v = Objects.requireNonNull(d.value()); // throws UnreadableRecord for the second record
                    handled.add(v);
                    return v;
                }).workers(1).queueSize(1).settler(source.settler()).build();
                try (var records = source.records(); Results<Delivery<String, Integer>, Integer> results = pool.run(records)) {
                    try {
                        results.forEachRemaining(v -> {});
                    } catch (RuntimeException failed) {
                        assertThat(run).as("only the first run fails, not with %s", failed).isZero();
                    }
                }
            }
        }
        assertThat(handled).containsExactlyInAnyOrder(1, 3);
        List<ConsumerRecord<byte[], byte[]>> letters = broker.readAll(topic + "-dlt");
        assertThat(letters).hasSize(1);
        assertThat(letters.getFirst().value()).containsExactly(7, 7, 7);
        assertThat(header(letters.getFirst(), "drain.dlt.error")).contains("UnreadableRecord");
    }

    /** KC-5, KC-7: a dead letter that times out leaves its batch unsettled, and the watermark does not pass the failure. */
    @Test
    void aDeadLetterThatTimesOutLeavesItsBatchUnsettled(Broker broker) throws Exception {
        String topic = broker.freshTopic("deadletter-gone", 1);
        String group = Broker.freshGroup("deadletter-gone");
        broker.produce(topic, 1, 6);
        Recorded recorded = new Recorded();
        RunOutcome<Delivery<String, String>> outcome;
        try (KafkaSource<String, String> source = source(broker, group, topic).endWhenIdle(Duration.ofSeconds(1))
                .deadLetterTimeout(Duration.ofSeconds(2)).closeTimeout(Duration.ofSeconds(2)).open()) {
            // the dead-letter topic goes away after the source checked it: its producer waits for its metadata, in vain
            try (var admin = broker.kafka().admin()) {
                admin.deleteTopics(List.of(topic + "-dlt")).all().get();
            }
            WorkerPool<Delivery<String, String>, String> pool = WorkerPool.<Delivery<String, String>, String>builder(d -> {
                if (d.offset() == 2) {
                    throw new IllegalStateException("poison");
                }
                return value(d);
            }).workers(1).queueSize(1).settler(recorded.around(source)).settleBatch(1).build();
            outcome = Recorded.runToTheEnd(pool, source, r -> {});
        }
        assertThat(outcome).isInstanceOf(RunOutcome.Unsettled.class);
        assertThat(outcome.unsettled()).anySatisfy(s -> assertThat(s).isInstanceOf(Settlement.Failed.class)
                .extracting(x -> x.item().offset()).isEqualTo(2L));
        OffsetAndMetadata committed = broker.committedOf(group, new TopicPartition(topic, 0));
        assertThat(committed.offset()).as("the watermark stops at the failure").isEqualTo(2);
        assertThat(Recorded.committedDone(committed)).doesNotContain(2L);
    }

    /**
     * KC-8: when a second source joins the group, the first one's deliveries of the partition it
     * gives up are settled as stale and not committed, and the second source delivers them again.
     */
    @Test
    void settlementsOfARevokedPartitionAreStaleAndDeliveredAgainByItsNewOwner(Broker broker) throws Exception {
        String topic = broker.freshTopic("revoked", 2);
        String group = Broker.freshGroup("revoked");
        broker.produce(topic, 2, 10);
        Recorded first = new Recorded();
        CountDownLatch release = new CountDownLatch(1);
        CountDownLatch twoInFlight = new CountDownLatch(2);
        List<Delivery<String, String>> secondGot = Collections.synchronizedList(new ArrayList<>());
        try (KafkaSource<String, String> a = source(broker, group, topic).buffer(2).endWhenIdle(Duration.ofSeconds(2)).open()) {
            WorkerPool<Delivery<String, String>, String> poolA = WorkerPool.<Delivery<String, String>, String>builder(d -> {
                twoInFlight.countDown();
                release.await();
                return value(d);
            }).workers(2).queueSize(1).settler(first.around(a)).build();
            Thread runA = Thread.ofVirtual().start(() -> Recorded.runToTheEnd(poolA, a, r -> {}));
            assertThat(twoInFlight.await(Bounds.WAIT.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
            Set<TopicPartition> before = a.assignment();
            assertThat(before).hasSize(2);
            try (KafkaSource<String, String> b = source(broker, group, topic).endWhenIdle(Duration.ofSeconds(2)).open()) {
                Waits.until("a partition moved to the second source", () -> a.assignment().size() == 1);
                TopicPartition moved = before.stream().filter(p -> !a.assignment().contains(p)).findFirst().orElseThrow();
                release.countDown();
                runA.join(Bounds.WAIT.toMillis());
                assertThat(runA.isAlive()).isFalse();
                WorkerPool<Delivery<String, String>, String> poolB = WorkerPool.<Delivery<String, String>, String>builder(d -> {
                    secondGot.add(d);
                    return value(d);
                }).workers(2).queueSize(2).settler(b.settler()).build();
                assertThat(Recorded.runToTheEnd(poolB, b, r -> {})).isInstanceOf(RunOutcome.Completed.class);
                NavigableSet<Long> staleOffsets = first.offsetsOf(Settlement.Succeeded.class).getOrDefault(moved, new TreeSet<>());
                assertThat(a.staleSettlements()).as("A's settlements of %s after it moved", moved).isEqualTo(staleOffsets.size());
                assertThat(Recorded.offsets(secondGot).get(moved)).as("B delivers them again").containsAll(staleOffsets);
            }
        }
        Map<TopicPartition, OffsetAndMetadata> committed = broker.committed(group, topic);
        committed.values().forEach(c -> assertThat(c.offset()).isEqualTo(10));
    }
}
