package dev.drain.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.drain.lab.LocalKafka;
import dev.drain.pool.RunOutcome;
import dev.drain.pool.Settlement;
import dev.drain.pool.WorkerPool;
import dev.drain.support.Bounds;
import dev.drain.support.Waits;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Stream;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** What a source does when its store fails under it: the broker gone, the commit's metadata full. */
@ExtendWith(Broker.Extension.class)
class KafkaFaultsTest {

    /**
     * KC-7: when the broker stops in the middle of a run, every settlement after it fails (none is
     * acknowledged), the run ends as Unsettled naming them, and the source still closes.
     */
    @Test
    void aBrokerThatStopsMidRunLeavesEverythingAfterItUnsettled() throws Exception {
        LocalKafka kafka = LocalKafka.start(); // a broker of this test's own, which it stops
        try {
            kafka.createTopic("doomed", 1, Map.of());
            kafka.createTopic("doomed-dlt", 1, Map.of());
            Broker.produce(kafka.bootstrapServers(), "doomed", 1, 30);
            Map<String, Object> config = new java.util.HashMap<>(Map.of("bootstrap.servers", kafka.bootstrapServers(),
                    "group.id", "doomed", "default.api.timeout.ms", "1500", "request.timeout.ms", "1000"));
            Recorded recorded = new Recorded();
            AtomicBoolean stopped = new AtomicBoolean();
            RunOutcome<Delivery<String, String>> outcome;
            long start = System.nanoTime();
            try (KafkaSource<String, String> source = KafkaSource.builder(config, new StringDeserializer(), new StringDeserializer())
                    .topics("doomed").closeTimeout(Duration.ofSeconds(2)).deadLetterTimeout(Duration.ofSeconds(2)).open()) {
                WorkerPool<Delivery<String, String>, String> pool = WorkerPool.<Delivery<String, String>, String>builder(d -> {
                    if (d.offset() == 10 && stopped.compareAndSet(false, true)) {
                        kafka.close(); // the broker goes away under the run
                    }
                    return Objects.requireNonNull(d.value());
                }).workers(1).queueSize(1).settleBatch(1).settler(recorded.around(source)).build();
                outcome = Recorded.runToTheEnd(pool, source, r -> {});
            }
            // each batch after the stop waits for its commit's timeout (1.5 s), one at a time, then the close's
            assertThat(Duration.ofNanos(System.nanoTime() - start)).as("the run and the close, bounded")
                    .isLessThan(Bounds.WAIT.multipliedBy(3));
            assertThat(outcome).isInstanceOf(RunOutcome.Unsettled.class);
            List<Long> acknowledged = new ArrayList<>();
            List<Long> named = new ArrayList<>();
            for (Recorded.Settled s : recorded.settled) {
                (s.acknowledged() ? acknowledged : named).add(s.settlement().item().offset());
            }
            assertThat(acknowledged).as("acknowledged: only before the broker stopped").allMatch(o -> o < 10);
            assertThat(named).as("named unsettled").contains(10L);
            assertThat(outcome.unsettled()).hasSize(named.size());
        } finally {
            kafka.close();
        }
    }

    /**
     * KC-7: a partition whose done offsets above the watermark near the metadata budget is paused
     * at three quarters of it, a commit that would not fit fails and is undone, and the partition
     * is resumed once the watermark has caught up.
     */
    @Test
    void aFullMetadataMapPausesThePartitionAndACommitThatWouldNotFitFails(Broker broker) throws Exception {
        String topic = broker.freshTopic("sparse", 1);
        String group = Broker.freshGroup("sparse");
        broker.produce(topic, 1, 600);
        TopicPartition partition = new TopicPartition(topic, 0);
        try (KafkaSource<String, String> source = KafkaSource.builder(broker.consumer(group), new StringDeserializer(),
                new StringDeserializer()).topics(topic).buffer(600).metadataBudget(64).open();
                Stream<Delivery<String, String>> records = source.records()) {
            Iterator<Delivery<String, String>> it = records.iterator();
            List<Delivery<String, String>> all = new ArrayList<>();
            while (all.size() < 600) {
                all.add(it.next());
            }
            // every other offset done, the first never: each done offset costs a bit of the map
            OffsetAndMetadata last = null;
            boolean refused = false;
            for (int o = 1; o < 600 && !refused; o += 2) {
                try {
                    source.settler().settle(List.of(new Settlement.Succeeded<>(all.get(o))));
                    last = broker.committedOf(group, partition);
                    assertThat(last.metadata().length()).as("metadata written").isLessThanOrEqualTo(64);
                } catch (KafkaSourceException e) {
                    assertThat(e).hasMessageContaining("no longer fit");
                    refused = true;
                }
            }
            assertThat(refused).as("a commit that would not fit was refused").isTrue();
            OffsetAndMetadata before = Objects.requireNonNull(last, "a commit before the refused one");
            assertThat(broker.committedOf(group, partition)).as("the refused commit was undone").isEqualTo(before);
            Waits.until("the partition paused", () -> source.paused().contains(partition));
            // the first offset done: the watermark passes every done offset, and the map shrinks
            // to the odd offsets from the refused one on, which are still outstanding
            List<Settlement<Delivery<String, String>>> rest = new ArrayList<>();
            for (int o = 0; o < 600; o += 2) {
                rest.add(new Settlement.Succeeded<>(all.get(o)));
            }
            source.settler().settle(rest);
            OffsetAndMetadata after = broker.committedOf(group, partition);
            assertThat(after.offset()).as("the watermark: the refused offset, outstanding again")
                    .isEqualTo(Recorded.committedDone(before).stream().filter(o -> o % 2 == 1).mapToLong(o -> o).max().orElse(-1) + 2);
            List<Settlement<Delivery<String, String>>> odd = new ArrayList<>();
            for (int o = (int) after.offset(); o < 600; o += 2) {
                odd.add(new Settlement.Succeeded<>(all.get(o)));
            }
            source.settler().settle(odd);
            Waits.until("the partition resumed", () -> !source.paused().contains(partition));
            assertThat(broker.committedOf(group, partition)).isEqualTo(new OffsetAndMetadata(600, ""));
        }
        assertThatThrownBy(() -> KafkaSource.builder(broker.consumer(group), new StringDeserializer(), new StringDeserializer())
                .metadataBudget(63)).isInstanceOf(IllegalArgumentException.class);
    }
}
