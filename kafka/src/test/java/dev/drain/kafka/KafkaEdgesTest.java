package dev.drain.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.drain.lab.LocalKafka;
import dev.drain.pool.ItemFailure;
import dev.drain.pool.Settlement;
import dev.drain.support.Bounds;
import dev.drain.support.ThreadKind;
import dev.drain.support.Waits;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import org.apache.kafka.common.header.Headers;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.jspecify.annotations.Nullable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The source at its edges, found by a hostile read: a release within one source, commits that
 * throw or time out under an interrupted settler, a batch of dead letters with nowhere to go, a
 * stalled pool, a stream closed between {@code hasNext} and {@code next}, and a close from a
 * deserializer.
 */
@ExtendWith(Broker.Extension.class)
class KafkaEdgesTest {

    private static KafkaSource.Builder<String, String> source(Broker broker, String group, String topic) {
        return KafkaSource.builder(broker.consumer(group), new StringDeserializer(), new StringDeserializer()).topics(topic);
    }

    /** How often a wait here looks: the source's toString takes its lock. */
    private static final java.time.Duration LOOK = java.time.Duration.ofMillis(20);

    /** KC-6: a delivery a run released is handed out again, first, by the next stream of the same source, and then committed. */
    @Test
    void aReleasedDeliveryIsDeliveredAgainByTheNextStreamOfTheSameSource(Broker broker) throws Exception {
        String topic = broker.freshTopic("rerun", 1);
        String group = Broker.freshGroup("rerun");
        broker.produce(topic, 1, 5);
        try (KafkaSource<String, String> source = source(broker, group, topic).endWhenIdle(Duration.ofSeconds(1)).open()) {
            List<Delivery<String, String>> first = new ArrayList<>();
            try (Stream<Delivery<String, String>> records = source.records()) {
                Iterator<Delivery<String, String>> it = records.iterator();
                while (first.size() < 5) {
                    first.add(it.next());
                }
            }
            List<Settlement<Delivery<String, String>>> run1 = new ArrayList<>();
            run1.add(new Settlement.Released<>(first.get(0), Settlement.Why.DISCARDED)); // an abort dropped it
            for (int i = 1; i < 5; i++) {
                run1.add(new Settlement.Succeeded<>(first.get(i)));
            }
            source.settler().settle(run1);
            assertThat(Recorded.committedDone(broker.committedOf(group, new org.apache.kafka.common.TopicPartition(topic, 0))))
                    .as("committed after the first run").containsExactly(1L, 2L, 3L, 4L);
            List<Delivery<String, String>> second;
            try (Stream<Delivery<String, String>> records = source.records()) {
                second = records.toList(); // ends when idle
            }
            assertThat(second).as("the second run's deliveries").containsExactly(first.get(0));
            source.settler().settle(List.of(new Settlement.Succeeded<>(second.getFirst())));
        }
        assertThat(broker.committedOf(group, new org.apache.kafka.common.TopicPartition(topic, 0)).offset()).isEqualTo(5);
    }

    /**
     * KC-7: a commit that throws an Error (an interceptor's, after the broker wrote it) fails its
     * batch, instead of leaving the settler waiting for an answer that never comes, and the source
     * fails.
     */
    @Test
    void anErrorInACommitFailsItsBatchInsteadOfLeavingTheSettlerWaiting(Broker broker) throws Exception {
        String topic = broker.freshTopic("error-commit", 1);
        String group = Broker.freshGroup("error-commit");
        broker.produce(topic, 1, 2);
        Map<String, Object> config = broker.consumer(group);
        config.put("interceptor.classes", ErrorOnCommit.class.getName());
        ErrorOnCommit.ARMED.set(false);
        try (KafkaSource<String, String> source = KafkaSource.builder(config, new StringDeserializer(), new StringDeserializer())
                .topics(topic).closeTimeout(Duration.ofSeconds(2)).open();
                Stream<Delivery<String, String>> records = source.records()) {
            Iterator<Delivery<String, String>> it = records.iterator();
            Delivery<String, String> d0 = it.next();
            ErrorOnCommit.ARMED.set(true);
            AtomicReference<@Nullable Object> outcome = new AtomicReference<>();
            Thread settler = Thread.ofPlatform().name("edges-settler").start(() -> {
                try {
                    source.settler().settle(List.of(new Settlement.Succeeded<>(d0)));
                    outcome.set("returned");
                } catch (Throwable e) {
                    outcome.set(e);
                }
            });
            settler.join(Bounds.WAIT.toMillis());
            assertThat(settler.isAlive()).as("settle() still waiting: %s", source).isFalse();
            assertThat(outcome.get()).as("what settle() did").isInstanceOf(AssertionError.class);
            assertThatThrownBy(it::hasNext).as("the stream, once the poll thread failed").isInstanceOf(KafkaSourceException.class);
        } finally {
            ErrorOnCommit.ARMED.set(false);
        }
    }

    /** KC-7: a settler interrupted while its batch's commit is under way waits for the commit, and throws if it failed. */
    @Test
    void anInterruptedSettlerDoesNotAcknowledgeACommitThatFailed() throws Exception {
        LocalKafka kafka = LocalKafka.start(); // a broker of this test's own, which it stops
        try {
            kafka.createTopic("interrupted", 1, Map.of());
            kafka.createTopic("interrupted-dlt", 1, Map.of());
            Broker.produce(kafka.bootstrapServers(), "interrupted", 1, 3);
            Map<String, Object> config = new HashMap<>(Map.of("bootstrap.servers", kafka.bootstrapServers(),
                    "group.id", "interrupted", "default.api.timeout.ms", "3000", "request.timeout.ms", "1000"));
            try (KafkaSource<String, String> source = KafkaSource.builder(config, new StringDeserializer(), new StringDeserializer())
                    .topics("interrupted").commitInterval(Duration.ZERO).closeTimeout(Duration.ofSeconds(2)).open();
                    Stream<Delivery<String, String>> records = source.records()) {
                Delivery<String, String> d0 = records.iterator().next();
                kafka.close(); // the next commit waits default.api.timeout.ms, then fails
                AtomicReference<@Nullable Object> outcome = new AtomicReference<>();
                AtomicBoolean interruptKept = new AtomicBoolean();
                Thread settler = Thread.ofPlatform().name("edges-settler").start(() -> {
                    try {
                        source.settler().settle(List.of(new Settlement.Succeeded<>(d0)));
                        outcome.set("returned");
                    } catch (Throwable e) {
                        outcome.set(e);
                    }
                    interruptKept.set(Thread.currentThread().isInterrupted());
                });
                Waits.untilParked(settler); // waiting for its batch's commit
                Waits.untilLookingEvery(LOOK, "the poll thread took the batch", () -> source.toString().contains("batches handed over 0"));
                settler.interrupt();
                settler.join(Bounds.WAIT.toMillis());
                assertThat(settler.isAlive()).isFalse();
                assertThat(outcome.get()).as("settle() after its commit failed").isInstanceOf(Exception.class)
                        .isNotInstanceOf(InterruptedException.class);
                assertThat(interruptKept).as("the interrupt kept").isTrue();
            }
        } finally {
            kafka.close();
        }
    }

    /** KC-5: a batch whose dead letters have nowhere to go fails within one dead-letter timeout, not one per letter. */
    @Test
    void aBatchOfDeadLettersFailsWithinOneDeadLetterTimeout(Broker broker) throws Exception {
        String topic = broker.freshTopic("dlt-serial", 1);
        String group = Broker.freshGroup("dlt-serial");
        broker.produce(topic, 1, 3);
        try (KafkaSource<String, String> source = source(broker, group, topic).deadLetterTimeout(Duration.ofSeconds(2))
                .closeTimeout(Duration.ofSeconds(2)).open();
                Stream<Delivery<String, String>> records = source.records()) {
            Iterator<Delivery<String, String>> it = records.iterator();
            List<Settlement<Delivery<String, String>>> failed = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                failed.add(new Settlement.Failed<>(new ItemFailure<>(it.next(), 1, new IllegalStateException("poison"))));
            }
            try (var admin = broker.kafka().admin()) {
                admin.deleteTopics(List.of(topic + "-dlt")).all().get();
            }
            long start = System.nanoTime();
            assertThatThrownBy(() -> source.settler().settle(failed)).isInstanceOf(KafkaSourceException.class)
                    .hasMessageContaining("dead letter");
            // one timeout of 2 s; three would be 6 s
            assertThat(Duration.ofNanos(System.nanoTime() - start)).as("how long a batch of 3 letters took to fail")
                    .isLessThan(Duration.ofSeconds(5));
        }
    }

    /** KC-2: while every partition is paused, the poll thread waits instead of spinning in a poll that returns at once. */
    @Test
    void aStalledPoolDoesNotSpinThePollThread(Broker broker) throws Exception {
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        assumeTrue(threads.isThreadCpuTimeSupported());
        String topic = broker.freshTopic("spin", 2);
        String group = Broker.freshGroup("spin");
        broker.produce(topic, 2, 40);
        try (KafkaSource<String, String> source = source(broker, group, topic).buffer(4).open();
                Stream<Delivery<String, String>> records = source.records()) {
            assertThat(records.iterator().hasNext()).isTrue();
            Waits.untilLookingEvery(LOOK, "both partitions paused", () -> source.paused().size() == 2);
            Thread poller = Thread.getAllStackTraces().keySet().stream()
                    .filter(t -> t.getName().equals("drain-kafka-poll-" + group)).findFirst().orElseThrow();
            long cpu = threads.getThreadCpuTime(poller.threadId());
            long wall = System.nanoTime();
            Waits.untilLookingEvery(LOOK, "three seconds of a stalled pool", () -> System.nanoTime() - wall > TimeUnit.SECONDS.toNanos(3));
            double share = (double) (threads.getThreadCpuTime(poller.threadId()) - cpu) / (System.nanoTime() - wall);
            // a spinning thread takes a whole core when it can, and a loaded machine only lowers that: generous
            assertThat(share).as("the poll thread's share of a core while every partition is paused").isLessThan(0.25);
        }
    }

    /** KC-3: a delivery that hasNext() promised is the one next() returns, even if the stream is closed in between. */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void aCloseBetweenHasNextAndNextDoesNotTakeThePromisedDelivery(ThreadKind kind, Broker broker) throws Exception {
        String topic = broker.freshTopic("peek", 1);
        broker.produce(topic, 1, 2);
        try (KafkaSource<String, String> source = source(broker, Broker.freshGroup("peek"), topic).open()) {
            Stream<Delivery<String, String>> records = source.records();
            Iterator<Delivery<String, String>> it = records.iterator();
            assertThat(it.hasNext()).isTrue();
            Thread closer = kind.start("closer", records::close);
            closer.join(Bounds.WAIT.toMillis());
            assertThat(it.next().offset()).as("the promised delivery").isZero();
            assertThat(it.hasNext()).as("after the close").isFalse();
            try (Stream<Delivery<String, String>> again = source.records()) {
                assertThat(again.findFirst().orElseThrow().offset()).as("the next stream goes on from there").isEqualTo(1);
            }
        }
    }

    /** KC-11: a close from a deserializer, on the poll thread, ends the source and closes the deserializers, and leaves no thread. */
    @Test
    void aCloseFromADeserializerEndsTheSourceAndClosesTheRest(Broker broker) throws Exception {
        String topic = broker.freshTopic("self-close", 1);
        broker.produce(topic, 1, 3);
        AtomicReference<@Nullable KafkaSource<String, String>> self = new AtomicReference<>();
        AtomicBoolean closedItsDeserializer = new AtomicBoolean();
        Deserializer<String> closing = new Deserializer<>() {
            @Override
            public String deserialize(String t, byte[] data) {
                return new String(data, java.nio.charset.StandardCharsets.UTF_8);
            }

            @Override
            public String deserialize(String t, Headers headers, byte[] data) {
                KafkaSource<String, String> source = self.get();
                if (source != null) {
                    source.close(); // on the poll thread
                }
                return deserialize(t, data);
            }

            @Override
            public void close() {
                closedItsDeserializer.set(true);
            }
        };
        KafkaSource<String, String> source = KafkaSource.builder(broker.consumer(Broker.freshGroup("self-close")),
                new StringDeserializer(), closing).topics(topic).open();
        self.set(source);
        try (Stream<Delivery<String, String>> records = source.records()) {
            assertThat(records.count()).as("what the stream handed out before the source ended").isLessThanOrEqualTo(3);
        }
        Waits.untilLookingEvery(LOOK, "the poll thread gone", Broker::noSourceThreads);
        Waits.untilLookingEvery(LOOK, "its deserializer closed", closedItsDeserializer::get);
        source.close(); // and a second close, from here, returns
    }
}
