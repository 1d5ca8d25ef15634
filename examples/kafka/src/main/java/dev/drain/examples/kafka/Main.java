package dev.drain.examples.kafka;

import dev.drain.kafka.Delivery;
import dev.drain.kafka.KafkaSource;
import dev.drain.lab.LocalKafka;
import dev.drain.pool.Results;
import dev.drain.pool.RunOutcome;
import dev.drain.pool.WorkerPool;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.stream.Stream;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.TopicExistsException;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * drain consuming a Kafka topic: a worker pool over a {@link KafkaSource}, whose group's commits
 * are what the run settled. It writes {@value #RECORDS} orders to a topic of {@value #PARTITIONS}
 * partitions, one of them a poison order that no attempt can handle: the first member of the
 * consumer group ships orders until the poison one fails, is dead-lettered and stops it (WP-6);
 * the group's next member then ships exactly the orders the first did not, none twice. With no
 * broker given, it starts one in this JVM ({@link LocalKafka}). Exits with status 1 if a check fails.
 */
public final class Main {
    private Main() {}

    static final String TOPIC = "orders";
    static final int PARTITIONS = 3;
    static final int RECORDS = 300;
    /** The order no attempt can handle: it fails, is dead-lettered, and the run stops pulling (WP-6). */
    static final int POISON = 40;

    /**
     * Runs the example.
     *
     * @param args the bootstrap servers of a broker to use; none (or blank): start one here
     * @throws Exception if the broker or the topics could not be set up
     */
    public static void main(String[] args) throws Exception {
        List<String> problems;
        if (args.length > 0 && !args[0].isBlank()) {
            problems = run(args[0], System.out);
        } else {
            System.out.println("no broker given: starting one in this JVM (LocalKafka) ...");
            try (LocalKafka kafka = LocalKafka.start()) {
                problems = run(kafka.bootstrapServers(), System.out);
            }
        }
        if (!problems.isEmpty()) {
            problems.forEach(problem -> System.err.println("kafka example: " + problem));
            System.exit(1);
        }
        System.out.println("kafka example: ok");
    }

    /**
     * Sets up the topics, writes the orders, consumes them with a pool (which the poison order stops
     * early), then lets the group's next member consume what is left; prints and checks it.
     *
     * @param servers the broker's bootstrap servers
     * @param out where the summary goes
     * @return what is off, one line each; empty if nothing is
     * @throws Exception if the broker or the topics could not be set up
     */
    static List<String> run(String servers, PrintStream out) throws Exception {
        String topic = TOPIC + "-" + System.currentTimeMillis(); // a fresh topic, on a broker that may hold older ones
        createTopics(servers, topic);
        produceOrders(servers, topic);

        Set<String> first = ConcurrentHashMap.newKeySet();
        Member run1 = consume(servers, topic, first, true);
        out.println("first member: " + run1.outcome().getClass().getSimpleName() + ", shipped " + first.size()
                + ", dead letters " + run1.deadLetters() + "; committed " + committed(servers, topic));
        Set<String> next = ConcurrentHashMap.newKeySet();
        Member run2 = consume(servers, topic, next, false);
        out.println("next member: " + run2.outcome().getClass().getSimpleName() + ", shipped " + next.size()
                + "; committed " + committed(servers, topic));

        List<String> problems = new ArrayList<>();
        if (!(run1.outcome() instanceof RunOutcome.Failed<Delivery<String, String>> failed) || failed.failures().size() != 1) {
            problems.add("the first run's outcome is " + run1.outcome() + ", expected the poison order's failure alone");
        }
        if (run1.deadLetters() != 1) {
            problems.add(run1.deadLetters() + " dead letters, expected the poison order's");
        }
        if (!(run2.outcome() instanceof RunOutcome.Completed<Delivery<String, String>>)) {
            problems.add("the next member's outcome is " + run2.outcome());
        }
        Set<String> twice = new TreeSet<>(first);
        twice.retainAll(next);
        if (!twice.isEmpty()) {
            problems.add("shipped twice: " + twice);
        }
        if (first.size() + next.size() + run1.deadLetters() != RECORDS) {
            problems.add("shipped " + first.size() + " + " + next.size() + ", dead-lettered " + run1.deadLetters()
                    + ": not the " + RECORDS + " orders");
        }
        return problems;
    }

    /** How one member's run ended. */
    record Member(RunOutcome<Delivery<String, String>> outcome, long deadLetters) {}

    /**
     * One member of the consumer group {@code orders-example}: a pool of 16 over the topic until it
     * is idle, the poison order failing if {@code poison}; {@return how it ended}
     */
    private static Member consume(String servers, String topic, Set<String> shipped, boolean poison) {
        Map<String, Object> consumer = Map.of("bootstrap.servers", servers, "group.id", "orders-example");
        try (KafkaSource<String, String> source = KafkaSource.builder(consumer, new StringDeserializer(), new StringDeserializer())
                .topics(topic)
                .endWhenIdle(Duration.ofSeconds(2)) // a batch job: stop once the topic has nothing new
                .open()) {
            WorkerPool<Delivery<String, String>, String> pool = WorkerPool.<Delivery<String, String>, String>builder(order -> {
                        String value = String.valueOf(order.value());
                        if (poison && value.equals("order-" + POISON)) {
                            throw new IllegalArgumentException("cannot ship " + value);
                        }
                        Thread.sleep(2); // the work: a call to another service, say
                        shipped.add(value);
                        return "shipped " + value;
                    })
                    .workers(16)
                    .queueSize(32)
                    .settler(source.settler()) // what the group commits is what this run settles
                    .name("orders")
                    .build();
            Results<Delivery<String, String>, String> ran;
            try (Stream<Delivery<String, String>> orders = source.records();
                    Results<Delivery<String, String>, String> results = pool.run(orders)) {
                ran = results;
                try {
                    results.forEachRemaining(result -> {});
                } catch (RuntimeException failed) {
                    // the poison order's PoolFailure: the outcome says it too
                }
            }
            return new Member(ran.outcome().orElseThrow(), source.deadLetters());
        }
    }

    private static void createTopics(String servers, String topic) throws InterruptedException {
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", servers))) {
            admin.createTopics(List.of(new NewTopic(topic, PARTITIONS, (short) 1), new NewTopic(topic + "-dlt", 1, (short) 1)))
                    .all().get();
        } catch (ExecutionException e) {
            if (!(e.getCause() instanceof TopicExistsException)) {
                throw new IllegalStateException("could not create " + topic + ": " + e.getCause(), e.getCause());
            }
        }
    }

    private static void produceOrders(String servers, String topic) throws InterruptedException, ExecutionException {
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(Map.of("bootstrap.servers", servers, "acks", "all"),
                new StringSerializer(), new StringSerializer())) {
            List<Future<RecordMetadata>> sent = new ArrayList<>();
            for (int i = 0; i < RECORDS; i++) {
                sent.add(producer.send(new ProducerRecord<>(topic, "customer-" + (i % 7), "order-" + i)));
            }
            for (Future<RecordMetadata> f : sent) {
                f.get();
            }
        }
    }

    /** {@return the group's committed offset of each partition of {@code topic}, in partition order} */
    private static Map<Integer, Long> committed(String servers, String topic) throws InterruptedException, ExecutionException {
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", servers))) {
            Map<TopicPartition, OffsetAndMetadata> all =
                    admin.listConsumerGroupOffsets("orders-example").partitionsToOffsetAndMetadata().get();
            Map<Integer, Long> mine = new TreeMap<>();
            all.forEach((partition, offset) -> {
                if (partition.topic().equals(topic) && offset != null) {
                    mine.put(partition.partition(), offset.offset());
                }
            });
            return mine;
        }
    }
}
