package dev.drain.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.drain.pool.Settlement;
import dev.drain.support.Bounds;
import dev.drain.support.ChildJvm;
import dev.drain.support.ThreadKind;
import dev.drain.support.Waits;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/** The source on its own: opening, the stream, the commits its settler makes, closing. */
@ExtendWith(Broker.Extension.class)
class KafkaSourceTest {

    private static KafkaSource.Builder<String, String> source(Broker broker, String group, String topic) {
        return KafkaSource.builder(broker.consumer(group), new StringDeserializer(), new StringDeserializer()).topics(topic);
    }

    /** {@return the names of the live threads a Kafka client or a source starts} */
    private static Set<String> kafkaThreads() {
        Set<String> names = new java.util.TreeSet<>();
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            String name = t.getName();
            if (name.startsWith("drain-kafka-") || name.startsWith("kafka-producer-network-thread")
                    || name.startsWith("consumer_background_thread") || name.startsWith("kafka-coordinator-heartbeat-thread")) {
                names.add(name);
            }
        }
        return names;
    }

    /** KC-1: brokers that do not answer fail open() within its timeout, naming them, and leave no thread running. */
    @Test
    void unreachableBrokersFailOpenNamingThemAndStartNothing() {
        Set<String> before = kafkaThreads();
        Map<String, Object> config = Map.of("bootstrap.servers", "localhost:1", "group.id", Broker.freshGroup("unreachable"));
        long start = System.nanoTime();
        assertThatThrownBy(() -> KafkaSource.builder(config, new StringDeserializer(), new StringDeserializer()).topics("orders")
                .openTimeout(Duration.ofSeconds(2)).open())
                .isInstanceOf(KafkaSourceException.class)
                .hasMessageContaining("localhost:1").hasMessageContaining("orders");
        assertThat(Duration.ofNanos(System.nanoTime() - start)).as("how long open() tried").isLessThan(Bounds.WAIT);
        Waits.until("the clients' threads gone", () -> kafkaThreads().equals(before));
    }

    /** KC-1: brokers whose names do not resolve fail open() with a KafkaSourceException naming them, not the client's own error. */
    @Test
    void unresolvableBrokersFailOpenNamingThem() {
        Map<String, Object> config = Map.of("bootstrap.servers", "no-such-host.invalid:9092", "group.id", Broker.freshGroup("dns"));
        assertThatThrownBy(() -> KafkaSource.builder(config, new StringDeserializer(), new StringDeserializer()).topics("orders")
                .openTimeout(Duration.ofSeconds(2)).open())
                .isInstanceOf(KafkaSourceException.class).hasMessageContaining("no-such-host.invalid");
        assertThat(Broker.noSourceThreads()).isTrue();
    }

    /** KC-1: a topic, or a dead-letter topic, that does not exist fails open() naming it. */
    @Test
    void aMissingTopicOrDeadLetterTopicFailsOpenNamingIt(Broker broker) throws Exception {
        String group = Broker.freshGroup("missing");
        assertThatThrownBy(() -> source(broker, group, "no-such-topic").openTimeout(Duration.ofSeconds(5)).open())
                .isInstanceOf(KafkaSourceException.class).hasMessageContaining("no topic no-such-topic");
        String lonely = "t-lonely-" + System.nanoTime();
        broker.kafka().createTopic(lonely, 1, Map.of());
        assertThatThrownBy(() -> source(broker, group, lonely).openTimeout(Duration.ofSeconds(5)).open())
                .isInstanceOf(KafkaSourceException.class).hasMessageContaining("no topic " + lonely + "-dlt")
                .hasMessageContaining("dead-letter topic of " + lonely);
        assertThat(Broker.noSourceThreads()).isTrue();
    }

    /** KC-1: a source without a topic, bootstrap.servers or group.id, or with settings out of range, is refused before anything connects. */
    @Test
    void incompleteSettingsAreRefused() {
        Map<String, Object> noGroup = Map.of("bootstrap.servers", "localhost:1");
        assertThatThrownBy(() -> KafkaSource.builder(noGroup, new StringDeserializer(), new StringDeserializer()).topics("t").open())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("group.id");
        Map<String, Object> noServers = Map.of("group.id", "g");
        assertThatThrownBy(() -> KafkaSource.builder(noServers, new StringDeserializer(), new StringDeserializer()).topics("t").open())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("bootstrap.servers");
        Map<String, Object> both = Map.of("bootstrap.servers", "localhost:1", "group.id", "g");
        assertThatThrownBy(() -> KafkaSource.builder(both, new StringDeserializer(), new StringDeserializer()).open())
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("topic");
        KafkaSource.Builder<String, String> b = KafkaSource.builder(both, new StringDeserializer(), new StringDeserializer());
        assertThatThrownBy(() -> b.buffer(0)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> b.metadataBudget(10)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> b.deadLetterSuffix("")).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> b.endWhenIdle(Duration.ofMillis(1))).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> b.openTimeout(Duration.ZERO)).isInstanceOf(IllegalArgumentException.class);
    }

    /** KC-3, KC-4: deliveries come in offset order within each partition, and a settler's batch is committed before settle returns. */
    @Test
    void deliveriesComeInOrderAndASettledBatchIsCommittedWhenSettleReturns(Broker broker) throws Exception {
        String topic = broker.freshTopic("ordered", 2);
        String group = Broker.freshGroup("ordered");
        broker.produce(topic, 2, 6);
        try (KafkaSource<String, String> source = source(broker, group, topic).endWhenIdle(Duration.ofSeconds(1)).open();
                Stream<Delivery<String, String>> records = source.records()) {
            List<Delivery<String, String>> all = records.toList();
            assertThat(all).hasSize(12);
            for (int p = 0; p < 2; p++) {
                int partition = p;
                assertThat(all.stream().filter(d -> d.partition() == partition).map(Delivery::offset).toList())
                        .as("offsets of partition %s", p).containsExactly(0L, 1L, 2L, 3L, 4L, 5L);
            }
            // settle 0, 1 and 3 of partition 0: the watermark is 2, and 3 is in the metadata
            Delivery<String, String> p0o0 = all.stream().filter(d -> d.partition() == 0 && d.offset() == 0).findFirst().orElseThrow();
            Delivery<String, String> p0o1 = all.stream().filter(d -> d.partition() == 0 && d.offset() == 1).findFirst().orElseThrow();
            Delivery<String, String> p0o3 = all.stream().filter(d -> d.partition() == 0 && d.offset() == 3).findFirst().orElseThrow();
            source.settler().settle(List.of(new Settlement.Succeeded<>(p0o0), new Settlement.Succeeded<>(p0o3),
                    new Settlement.Released<>(p0o1, Settlement.Why.DISCARDED)));
            OffsetAndMetadata committed = broker.committedOf(group, new TopicPartition(topic, 0));
            assertThat(committed.offset()).as("watermark: 1 was released").isEqualTo(1);
            assertThat(Recorded.committedDone(committed)).as("done offsets committed").containsExactly(0L, 3L);
            source.settler().settle(List.of(new Settlement.Succeeded<>(p0o1)));
            OffsetAndMetadata later = broker.committedOf(group, new TopicPartition(topic, 0));
            assertThat(later.offset()).as("watermark: 2 is the first not done").isEqualTo(2);
            assertThat(Recorded.committedDone(later)).containsExactly(0L, 1L, 3L);
        }
    }

    /** KC-3: only one stream of a source is open at a time, and a closed source refuses to open one. */
    @Test
    void oneStreamAtATime(Broker broker) {
        String topic = broker.freshTopic("streams", 1);
        KafkaSource<String, String> source = source(broker, Broker.freshGroup("streams"), topic).open();
        try (Stream<Delivery<String, String>> first = source.records()) {
            assertThat(first).isNotNull();
            assertThatThrownBy(source::records).isInstanceOf(IllegalStateException.class).hasMessageContaining("already open");
        }
        try (Stream<Delivery<String, String>> again = source.records()) {
            assertThat(again).isNotNull();
        }
        source.close();
        assertThatThrownBy(source::records).isInstanceOf(IllegalStateException.class).hasMessageContaining("closed");
    }

    /** KC-3: an interrupt ends a wait for the next record with an exception, and keeps the interrupt. */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void anInterruptEndsTheWaitForARecord(ThreadKind kind, Broker broker) throws Exception {
        String topic = broker.freshTopic("interrupt", 1);
        try (KafkaSource<String, String> source = source(broker, Broker.freshGroup("interrupt"), topic).open();
                Stream<Delivery<String, String>> records = source.records()) {
            Iterator<Delivery<String, String>> it = records.iterator();
            AtomicReference<Throwable> thrown = new AtomicReference<>();
            AtomicReference<Boolean> flag = new AtomicReference<>();
            Thread waiter = kind.start("waiter", () -> {
                try {
                    thrown.set(new AssertionError("hasNext returned " + it.hasNext()));
                } catch (Throwable e) {
                    thrown.set(e);
                    flag.set(Thread.currentThread().isInterrupted());
                }
            });
            Waits.untilParked(waiter);
            waiter.interrupt();
            waiter.join(Bounds.WAIT.toMillis());
            assertThat(waiter.isAlive()).isFalse();
            assertThat(thrown.get()).isInstanceOf(KafkaSourceException.class).hasCauseInstanceOf(InterruptedException.class);
            assertThat(flag.get()).as("interrupt kept").isTrue();
        }
    }

    /** KC-2: while the pool takes nothing for longer than max.poll.interval.ms, the poll thread pauses the partitions and keeps them. */
    @Test
    void aStalledPoolPausesThePartitionsAndKeepsThem(Broker broker) throws Exception {
        String topic = broker.freshTopic("stalled", 2);
        String group = Broker.freshGroup("stalled");
        broker.produce(topic, 2, 20);
        Map<String, Object> config = broker.consumer(group);
        config.put("max.poll.interval.ms", "1500");
        config.put("max.poll.records", "4");
        try (KafkaSource<String, String> source = KafkaSource.builder(config, new StringDeserializer(), new StringDeserializer())
                .topics(topic).buffer(4).endWhenIdle(Duration.ofSeconds(1)).open();
                Stream<Delivery<String, String>> records = source.records()) {
            Iterator<Delivery<String, String>> it = records.iterator();
            assertThat(it.hasNext()).isTrue();
            Set<TopicPartition> assigned = source.assignment();
            Waits.until("both partitions paused", () -> source.paused().size() == 2);
            long stalledSince = System.nanoTime();
            Waits.until("three poll intervals without a take", () -> System.nanoTime() - stalledSince > TimeUnit.MILLISECONDS.toNanos(4_500));
            assertThat(source.assignment()).as("still assigned after the stall").isEqualTo(assigned);
            List<Settlement<Delivery<String, String>>> done = new ArrayList<>();
            while (it.hasNext()) {
                done.add(new Settlement.Succeeded<>(it.next()));
            }
            assertThat(done).hasSize(40);
            source.settler().settle(done);
            assertThat(source.refusedCommits()).isZero();
        }
        broker.committed(group, topic).values().forEach(c -> assertThat(c.offset()).isEqualTo(20));
    }

    /** KC-11: close() is idempotent from any thread, leaves no thread, and a settlement after it fails. */
    @ParameterizedTest
    @EnumSource(ThreadKind.class)
    void closeIsIdempotentLeavesNoThreadAndRefusesLaterSettlements(ThreadKind kind, Broker broker) throws Exception {
        String topic = broker.freshTopic("close", 1);
        broker.produce(topic, 1, 1);
        KafkaSource<String, String> source = source(broker, Broker.freshGroup("close"), topic).endWhenIdle(Duration.ofSeconds(1)).open();
        Delivery<String, String> first;
        try (Stream<Delivery<String, String>> records = source.records()) {
            first = records.findFirst().orElseThrow();
        }
        CountDownLatch closed = new CountDownLatch(2);
        Thread a = kind.start("closer-a", () -> {
            source.close();
            closed.countDown();
        });
        Thread b = kind.start("closer-b", () -> {
            source.close();
            closed.countDown();
        });
        assertThat(closed.await(Bounds.WAIT.toMillis(), TimeUnit.MILLISECONDS)).isTrue();
        a.join(Bounds.WAIT.toMillis());
        b.join(Bounds.WAIT.toMillis());
        source.close();
        assertThat(Broker.noSourceThreads()).isTrue();
        assertThatThrownBy(() -> source.settler().settle(List.of(new Settlement.Succeeded<>(first))))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("closed");
    }

    /** KC-11: a program that forgets to close its source still exits. */
    @Test
    void aForgottenCloseDoesNotKeepTheJvmAlive(Broker broker) {
        String topic = broker.freshTopic("forgotten", 1);
        broker.produce(topic, 1, 3);
        ChildJvm.Ended ended = ChildJvm.run(List.of("--enable-preview"), ForgottenClose.class, broker.servers(), topic,
                Broker.freshGroup("forgotten"));
        assertThat(ended.exited()).as("the child exited by itself (its output: %s %s)", ended.out(), ended.err()).isTrue();
        assertThat(ended.status()).isZero();
        assertThat(ended.out()).contains("took 1");
    }

    /** The child of {@link #aForgottenCloseDoesNotKeepTheJvmAlive}: takes one record and returns from main without closing. */
    static final class ForgottenClose {
        private ForgottenClose() {}

        public static void main(String[] args) {
            KafkaSource<String, String> source = KafkaSource.builder(Map.of("bootstrap.servers", args[0], "group.id", args[2]),
                    new StringDeserializer(), new StringDeserializer()).topics(args[1]).open();
            Iterator<Delivery<String, String>> it = source.records().iterator();
            it.next();
            System.out.println("took 1");
        }
    }
}
