// 21: script 20 on a Kafka topic read by a consumer group (LocalKafka: a broker in this JVM, from Maven jars). Committing
// an offset when its record is taken loses what an abort drops; KafkaSource.records() with its settler() commits what the
// run's books settled, and the next member of the group gets exactly the rest. Clauses: KC-9, KC-6, KC-4, WP-22.
import dev.drain.kafka.*;
import dev.drain.lab.LocalKafka;
import org.apache.kafka.clients.consumer.*;
import org.apache.kafka.clients.producer.*;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.*;

System.out.println("== 21 a consumer group: commit what the books settled, and the next member gets the rest ==");

LocalKafka kafka = LocalKafka.start(); // a broker and its controller in this JVM, until kafka.close()
String servers = kafka.bootstrapServers();

// Two topics of one partition (offsets 0 to 9, as jobs 1 to 10 in script 20), each with its dead-letter topic.
for (String topic : List.of("wrong", "right")) {
    kafka.createTopic(topic, 1, Map.of());
    kafka.createTopic(topic + "-dlt", 1, Map.of());
    try (var producer = new KafkaProducer<String, String>(Map.of("bootstrap.servers", servers), new StringSerializer(),
            new StringSerializer())) {
        for (int i = 0; i < 10; i++) {
            producer.send(new ProducerRecord<>(topic, 0, null, "order-" + i)).get();
        }
    }
}

// As in script 20: offsets 0 and 1 finish at once; the others wait until interrupted. Once both workers hold 2 and 3,
// the intake 4, 5, 6 and the producer 7, abort().
Set<Long> finished = new ConcurrentSkipListSet<>(); // what the handlers did finish, in every run
long slowAfterTwo(long offset) throws InterruptedException {
    if (offset > 1) {
        awaitInterrupt(); // only the abort's interrupt ends it
    }
    finished.add(offset);
    return offset;
}

long committed(String group, String topic) throws Exception {
    try (var admin = kafka.admin()) {
        OffsetAndMetadata c = admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata().get()
                .get(new TopicPartition(topic, 0));
        return c == null ? 0 : c.offset();
    }
}

<T> RunOutcome<T> abortAfter(WorkerPool<T, Long> pool, Iterator<T> source) {
    Results<T, Long> results = pool.run(source);
    try (results) {
        until("8 pulled, 2 succeeded", () -> results.stats().pulled() == 8 && results.stats().succeeded() == 2);
        pool.abort();
        while (results.hasNext()) {
            results.next();
        }
    } catch (PoolAborted e) {
        // the iteration's end: what the abort left undone is in the outcome too
    }
    return results.outcome().orElseThrow();
}

// Wrong: a consumer that commits each record's offset as it hands the record out (at most once): simple, and every
// record the run then drops is gone, since the group's next member starts after it.
Iterator<ConsumerRecord<String, String>> commitOnTake(KafkaConsumer<String, String> consumer) {
    return new Iterator<>() {
        private final Deque<ConsumerRecord<String, String>> polled = new ArrayDeque<>();

        public boolean hasNext() {
            for (int polls = 0; polled.isEmpty() && polls < 50; polls++) {
                consumer.poll(Duration.ofMillis(100)).forEach(polled::add);
            }
            return !polled.isEmpty();
        }

        public ConsumerRecord<String, String> next() {
            if (!hasNext()) {
                throw new NoSuchElementException();
            }
            ConsumerRecord<String, String> record = polled.removeFirst();
            consumer.commitSync(Map.of(new TopicPartition(record.topic(), record.partition()),
                    new OffsetAndMetadata(record.offset() + 1))); // acknowledged before any worker saw it
            return record;
        }
    };
}

{
    // the pool's producer is the only thread that touches this consumer: it polls and commits inside the iterator
    try (var consumer = new KafkaConsumer<String, String>(Map.of("bootstrap.servers", servers, "group.id", "wrong-group",
            "auto.offset.reset", "earliest", "enable.auto.commit", "false", "max.poll.records", "1"),
            new StringDeserializer(), new StringDeserializer())) {
        consumer.subscribe(List.of("wrong"));
        var pool = WorkerPool.<ConsumerRecord<String, String>, Long>builder(r -> slowAfterTwo(r.offset())).workers(2)
                .queueSize(3).itemTimeout(BOUND).name("demo21-wrong").build();
        RunOutcome<ConsumerRecord<String, String>> outcome = abortAfter(pool, commitOnTake(consumer));
        System.out.println("Wrong: commit on take, then abort()");
        System.out.println("  the run: discarded " + new TreeSet<>(outcome.discarded().stream().map(ConsumerRecord::offset).toList())
                + ", cancelled " + new TreeSet<>(outcome.cancelled().stream().map(ConsumerRecord::offset).toList()));
    }
    long from = committed("wrong-group", "wrong");
    SortedSet<Long> lost = new TreeSet<>();
    for (long o = 0; o < from; o++) {
        if (!finished.contains(o)) {
            lost.add(o);
        }
    }
    System.out.println("  the group's next member starts at offset " + from + ": never finished and never delivered again"
            + " (lost): " + lost);
    finished.clear();
}

SortedSet<Long> offsets(Collection<Delivery<String, String>> deliveries) {
    SortedSet<Long> offsets = new TreeSet<>();
    deliveries.forEach(d -> offsets.add(d.offset()));
    return offsets;
}

{
    Map<String, Object> group = Map.of("bootstrap.servers", servers, "group.id", "right-group");
    var source = KafkaSource.builder(group, new StringDeserializer(), new StringDeserializer()).topics("right").open();
    var pool = WorkerPool.<Delivery<String, String>, Long>builder(d -> slowAfterTwo(d.offset())).workers(2).queueSize(3)
            .itemTimeout(BOUND).settler(source.settler()).name("demo21-right").build();
    RunOutcome<Delivery<String, String>> outcome;
    try (Stream<Delivery<String, String>> records = source.records()) {
        outcome = abortAfter(pool, records.iterator());
    }
    source.close(); // commits what settled, and leaves the group
    System.out.println("Right: records() and settler(), then abort()");
    System.out.println("  the run: " + outcome.getClass().getSimpleName() + ", discarded " + offsets(outcome.discarded())
            + ", cancelled " + offsets(outcome.cancelled()));
    System.out.println("  the group's committed offset: " + committed("right-group", "right") + " (0 and 1 done)");

    // The group's next member gets what was not done: the released records and the ones never pulled.
    var next = KafkaSource.builder(group, new StringDeserializer(), new StringDeserializer()).topics("right")
            .endWhenIdle(Duration.ofSeconds(1)).open();
    var again = WorkerPool.<Delivery<String, String>, Long>builder(d -> d.offset()).workers(2).queueSize(3)
            .settler(next.settler()).name("demo21-again").build();
    SortedSet<Long> handled = new TreeSet<>();
    try (Stream<Delivery<String, String>> records = next.records(); Results<Delivery<String, String>, Long> results = again.run(records)) {
        results.forEachRemaining(handled::add);
    }
    next.close();
    System.out.println("  the next member handled " + handled);
    System.out.println("  the group's committed offset: " + committed("right-group", "right"));
}

tryIt("21", "let offset 4 fail on every attempt in a fresh group of the topic \"right\": where does its record go, which"
                + " offset does the group commit, and why does the run still stop early (WP-6)?",
        "var src = KafkaSource.builder(Map.of(\"bootstrap.servers\", servers, \"group.id\", \"try\"), new StringDeserializer(), new StringDeserializer()).topics(\"right\").endWhenIdle(Duration.ofSeconds(1)).open();",
        "var p = WorkerPool.<Delivery<String, String>, Long>builder(d -> { if (d.offset() == 4) throw new IllegalStateException(\"poison\"); return d.offset(); }).workers(1).queueSize(1).settler(src.settler()).name(\"poison\").build();",
        "try (var r = src.records(); var res = p.run(r)) { res.forEachRemaining(x -> {}); } catch (PoolFailure e) { System.out.println(e.getMessage()); }",
        "src.close(); System.out.println(\"committed \" + committed(\"try\", \"right\") + \", dead letters written \" + src.deadLetters()); kafka.close();");

/exit
