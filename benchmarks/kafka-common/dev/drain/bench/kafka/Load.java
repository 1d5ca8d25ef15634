package dev.drain.bench.kafka;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringSerializer;

/**
 * What every Kafka harness of {@code benchmarks/run kafka} shares, compiled into each (drain's,
 * and Parallel Consumer's, whose Kafka client is 3.9.1): the command line, a topic filled before
 * the measurement, the clock that stops when the group's commits cover every record, and the
 * result line. It uses only the parts of Kafka's client that 3.9 and 4.3 share.
 *
 * <p>The measurement: from the first record handled to the moment the group's committed offsets
 * reach the end of every partition (read through {@link Admin} every 10 ms once the last record is
 * handled): records per second end to end, a commit that lags included.
 */
public final class Load {
    private Load() {}

    /** How many partitions each topic has. */
    public static final int PARTITIONS = 8;
    /** The value of every record: 100 bytes. */
    public static final String VALUE = "x".repeat(100);

    /**
     * The command line: servers, variant, workers, handler milliseconds, records, topic.
     *
     * @param servers the broker's bootstrap servers
     * @param variant what runs (drain, plain, plain-virtual, plain-forked, pc, drain-stop, drain-abort)
     * @param workers the concurrency
     * @param handlerMillis how long each handler sleeps (0: returns at once)
     * @param records how many records the topic holds
     * @param topic the topic's name (fresh for each run)
     */
    public record Run(String servers, String variant, int workers, int handlerMillis, int records, String topic) {
        public static Run of(String[] args) {
            return new Run(args[0], args[1], Integer.parseInt(args[2]), Integer.parseInt(args[3]), Integer.parseInt(args[4]),
                    args[5]);
        }

        /**
         * {@return the warm-up before this run: a quarter of its records (at least 500) on a topic and
         * a group of its own, run first in the same JVM and not measured, so that what is measured is
         * mostly the code after the JIT compiled it} At one worker over Kafka the JIT goes on
         * compiling for many seconds whatever the warm-up (one as large as the run changed nothing,
         * decision 0048), so those runs are long instead ({@code benchmarks/kafka/run}).
         */
        public Run warmUp() {
            return new Run(servers, variant, workers, handlerMillis, Math.max(500, records / 4), topic + "-warm");
        }

        /** {@return the consumer group of this run} */
        public String group() {
            return topic + "-group";
        }

        /** The handler: sleeps {@code handlerMillis}, or returns at once. */
        public void handle() throws InterruptedException {
            if (handlerMillis > 0) {
                Thread.sleep(handlerMillis);
            }
        }
    }

    /**
     * What one measured run's handler calls count: when the first began, how many have returned,
     * and, at one worker, the time from each call's return to the next one's start (where a pool's
     * hand-offs show, decision 0049). The harness waits on it instead of polling a counter, so that
     * no thread of its own wakes until the last call has returned.
     */
    public static final class Tally {
        private final long records;
        private final AtomicLong first = new AtomicLong();
        private final AtomicLong handled = new AtomicLong();
        private final CountDownLatch began = new CountDownLatch(1);
        private final CountDownLatch all = new CountDownLatch(1);
        /**
         * At one worker, nanoseconds from one call's return to the next one's start; {@code null}
         * at more (this file is compiled without JSpecify, into Parallel Consumer's harness too).
         * Written by the thread of each call: at one worker the calls follow one another, each
         * ordered after the last by the hand-offs between them (a join, a queue).
         */
        private final long[] gaps;
        private int gapCount;
        private long lastReturn;

        public Tally(Run run) {
            this.records = run.records();
            this.gaps = run.workers() == 1 ? new long[run.records()] : null;
        }

        /** Calls the run's handler for one record, and counts it. */
        public void handle(Run run) throws InterruptedException {
            long start = System.nanoTime();
            if (first.get() == 0 && first.compareAndSet(0, start)) {
                began.countDown();
            }
            long[] g = gaps;
            if (g != null && lastReturn != 0 && gapCount < g.length) {
                g[gapCount++] = start - lastReturn;
            }
            run.handle();
            if (g != null) {
                lastReturn = System.nanoTime();
            }
            if (handled.incrementAndGet() == records) {
                all.countDown();
            }
        }

        /** {@return when the first call began (System.nanoTime), or 0} */
        public long first() {
            return first.get();
        }

        /** {@return how many calls have returned} */
        public long handled() {
            return handled.get();
        }

        /** Waits until the first call has begun. */
        public void awaitFirst() throws InterruptedException {
            began.await();
        }

        /** Waits until every record's call has returned. */
        public void awaitAll() throws InterruptedException {
            all.await();
        }

        /**
         * {@return the result line's fields for the gaps between calls, at one worker: their median
         * and 90th percentile in microseconds, JSON ({@code "gap_us_p50": …, "gap_us_p90": …}), or
         * empty} Read once the calls have ended.
         */
        private String gapFields() {
            long[] g = gaps;
            if (g == null || gapCount == 0) {
                return "";
            }
            long[] sorted = java.util.Arrays.copyOf(g, gapCount);
            java.util.Arrays.sort(sorted);
            return String.format(Locale.ROOT, "\"gap_us_p50\": %.1f, \"gap_us_p90\": %.1f",
                    sorted[sorted.length / 2] / 1e3, sorted[sorted.length * 9 / 10] / 1e3);
        }
    }

    /** Creates the run's topic (and its dead-letter topic) and writes its records, evenly over the partitions. */
    public static void prepare(Run run) throws ExecutionException, InterruptedException {
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", run.servers()))) {
            admin.createTopics(List.of(new NewTopic(run.topic(), PARTITIONS, (short) 1),
                    new NewTopic(run.topic() + "-dlt", 1, (short) 1))).all().get();
        }
        Map<String, Object> config = new HashMap<>();
        config.put("bootstrap.servers", run.servers());
        config.put("acks", "1");
        config.put("linger.ms", "10");
        config.put("batch.size", "262144");
        try (KafkaProducer<String, String> producer = new KafkaProducer<>(config, new StringSerializer(), new StringSerializer())) {
            List<Future<RecordMetadata>> sent = new ArrayList<>(run.records());
            for (int i = 0; i < run.records(); i++) {
                sent.add(producer.send(new ProducerRecord<>(run.topic(), i % PARTITIONS, null, VALUE)));
            }
            for (Future<RecordMetadata> f : sent) {
                f.get();
            }
        }
    }

    /** {@return the end offset of each partition of the run's topic} */
    public static Map<TopicPartition, Long> ends(Run run) throws ExecutionException, InterruptedException {
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", run.servers()))) {
            Map<TopicPartition, OffsetSpec> latest = new HashMap<>();
            for (int p = 0; p < PARTITIONS; p++) {
                latest.put(new TopicPartition(run.topic(), p), OffsetSpec.latest());
            }
            Map<TopicPartition, Long> ends = new HashMap<>();
            admin.listOffsets(latest).all().get().forEach((partition, info) -> ends.put(partition, info.offset()));
            return ends;
        }
    }

    /**
     * Waits until the run's group has committed every partition to its end; {@return when it saw
     * that (System.nanoTime)}
     *
     * @throws IllegalStateException if it has not within {@code limit}
     */
    public static long awaitCommitted(Run run, Map<TopicPartition, Long> ends, Duration limit)
            throws ExecutionException, InterruptedException {
        long deadline = System.nanoTime() + limit.toNanos();
        try (Admin admin = Admin.create(Map.of("bootstrap.servers", run.servers()))) {
            while (true) {
                Map<TopicPartition, OffsetAndMetadata> committed =
                        admin.listConsumerGroupOffsets(run.group()).partitionsToOffsetAndMetadata().get();
                long now = System.nanoTime();
                boolean all = true;
                for (Map.Entry<TopicPartition, Long> end : ends.entrySet()) {
                    OffsetAndMetadata c = committed.get(end.getKey());
                    all &= c != null && c.offset() >= end.getValue();
                }
                if (all) {
                    return now;
                }
                if (now > deadline) {
                    throw new IllegalStateException("the group " + run.group() + " did not commit every record within " + limit
                            + ": " + committed + " of " + ends);
                }
                TimeUnit.MILLISECONDS.sleep(10); // a sampling period: the clock is read when the sample is taken
            }
        }
    }

    /** {@return the CPU time this process has used so far, in seconds} */
    public static double cpuSeconds() {
        return ProcessHandle.current().info().totalCpuDuration().map(d -> d.toNanos() / 1e9).orElse(Double.NaN);
    }

    /**
     * The result line: one JSON object.
     *
     * @param extra more fields, already JSON ({@code "key": value, ...}), or empty
     */
    public static String result(Run run, long firstNanos, long committedNanos, long handled, double cpu, String extra) {
        double seconds = (committedNanos - firstNanos) / 1e9;
        return String.format(Locale.ROOT,
                "{\"variant\": \"%s\", \"workers\": %d, \"handler_ms\": %d, \"records\": %d, \"handled\": %d,"
                        + " \"seconds\": %.4f, \"records_per_s\": %.1f, \"cpu_s\": %.3f%s}",
                run.variant(), run.workers(), run.handlerMillis(), run.records(), handled, seconds, run.records() / seconds, cpu,
                extra.isEmpty() ? "" : ", " + extra);
    }

    /**
     * The result line of a run that {@code tally} counted, from its first call to {@code endNanos}:
     * the calls it counted as handled, and at one worker the gaps between them after {@code extra}.
     *
     * @param extra more fields, already JSON ({@code "key": value, ...}), or empty
     */
    public static String result(Run run, Tally tally, long endNanos, double cpu, String extra) {
        String gaps = tally.gapFields();
        String fields = extra.isEmpty() || gaps.isEmpty() ? extra + gaps : extra + ", " + gaps;
        return result(run, tally.first(), endNanos, tally.handled(), cpu, fields);
    }
}
