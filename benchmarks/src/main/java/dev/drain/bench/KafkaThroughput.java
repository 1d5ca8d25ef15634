package dev.drain.bench;

import dev.drain.bench.kafka.Load;
import dev.drain.kafka.Delivery;
import dev.drain.kafka.KafkaSource;
import dev.drain.pool.Results;
import dev.drain.pool.WorkerPool;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;

/**
 * Issue 22's throughput, one run per JVM ({@code benchmarks/run kafka} starts it): records per
 * second end to end ({@link Load}) through drain's {@link KafkaSource} and a {@link WorkerPool},
 * and through a plain {@code KafkaConsumer} loop (poll, handle each record, {@code commitSync}),
 * on a platform thread, on a virtual thread, and on a virtual thread that forks each handler call
 * into a scope of its own (decision 0048); and, for drain, the time from {@code requestStop()} to
 * the last commit, and the duplicates after an abort. Parallel Consumer's harness is a project of
 * its own (its Kafka client is 3.9.1) with the same command line and result line.
 *
 * <p>Arguments: servers, variant ({@code drain}, {@code drain-defaults}, {@code drain-defaults-1},
 * {@code plain}, {@code plain-virtual}, {@code plain-forked}, {@code drain-stop}, {@code drain-abort}),
 * workers, handler milliseconds,
 * records, topic. Before the measured run, an unmeasured one a quarter as large on a topic of its
 * own: the JIT's turn ({@link Load.Run#warmUp()}). Prints one JSON line.
 */
public final class KafkaThroughput {
    private KafkaThroughput() {}

    /** The pool's settlement batches: one commit per batch, so a batch as large as the commit's round trip allows. */
    static final int SETTLE_BATCH = 512;

    public static void main(String[] args) throws Exception {
        Load.Run run = Load.Run.of(args);
        Load.Run warm = run.warmUp();
        Load.prepare(warm);
        Load.prepare(run);
        measure(warm, Load.ends(warm)); // not measured: the JIT's turn
        String line = measure(run, Load.ends(run));
        long left = Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.isAlive() && !t.isDaemon() && t != Thread.currentThread() && !t.getName().equals("DestroyJavaVM"))
                .count();
        System.out.println(line.substring(0, line.length() - 1) + ", \"threads_left_after_close\": " + left + "}");
    }

    private static String measure(Load.Run run, Map<TopicPartition, Long> ends) throws Exception {
        return switch (run.variant()) {
            case "drain" -> drain(run, ends);
            case "drain-defaults" -> drainWithDefaults(run, ends, 0);
            case "drain-defaults-1" -> drainWithDefaults(run, ends, 1);
            case "plain" -> plain(run, ends, Load.Tally::handle);
            case "plain-virtual" -> onAVirtualThread(() -> plain(run, ends, Load.Tally::handle));
            case "plain-forked" -> onAVirtualThread(() -> plain(run, ends, KafkaThroughput::inAScopeOfItsOwn));
            case "drain-stop" -> drainStop(run);
            case "drain-abort" -> drainAbort(run);
            default -> throw new IllegalArgumentException("no variant " + run.variant());
        };
    }

    /**
     * Runs the plain loop on a virtual thread, as drain's workers are: its handler's sleep then
     * costs what a virtual thread's timed park costs, which tells that cost apart from drain's own.
     */
    private static String onAVirtualThread(java.util.concurrent.Callable<String> loop) throws Exception {
        java.util.concurrent.FutureTask<String> task = new java.util.concurrent.FutureTask<>(loop);
        Thread.ofVirtual().name("plain-loop").start(task).join();
        return task.get();
    }

    private static Map<String, Object> consumer(Load.Run run) {
        Map<String, Object> config = new HashMap<>();
        config.put("bootstrap.servers", run.servers());
        config.put("group.id", run.group());
        return config;
    }

    /** Starts a thread that waits until every record's handler has returned, then for the commits; {@return when they covered every record} */
    private static CompletableFuture<Long> watch(Load.Run run, Map<TopicPartition, Long> ends, Load.Tally tally) {
        CompletableFuture<Long> committed = new CompletableFuture<>();
        Thread.ofPlatform().daemon().name("commit-watch").start(() -> {
            try {
                tally.awaitAll();
                committed.complete(Load.awaitCommitted(run, ends, Duration.ofMinutes(2)));
            } catch (Exception e) {
                committed.completeExceptionally(e);
            }
        });
        return committed;
    }

    private static KafkaSource<String, String> open(Load.Run run, Duration idle) {
        return KafkaSource.builder(consumer(run), new StringDeserializer(), new StringDeserializer()).topics(run.topic())
                .buffer(Math.max(1_024, 2 * run.workers())).endWhenIdle(idle).open();
    }

    private static WorkerPool<Delivery<String, String>, Long> pool(Load.Run run, KafkaSource<String, String> source,
            Load.Tally tally, Consumer<Delivery<String, String>> each) {
        return WorkerPool.<Delivery<String, String>, Long>builder(d -> {
            tally.handle(run);
            each.accept(d);
            return d.offset();
        }).workers(run.workers()).queueSize(run.workers()).settleBatch(SETTLE_BATCH).settler(source.settler()).name("bench").build();
    }

    private static String drain(Load.Run run, Map<TopicPartition, Long> ends) throws Exception {
        Load.Tally tally = new Load.Tally(run);
        CompletableFuture<Long> committed = watch(run, ends, tally);
        double cpu = Load.cpuSeconds();
        long commits;
        try (KafkaSource<String, String> source = open(run, Duration.ofSeconds(1))) {
            WorkerPool<Delivery<String, String>, Long> pool = pool(run, source, tally, d -> {});
            try (Stream<Delivery<String, String>> records = source.records(); Results<Delivery<String, String>, Long> results = pool.run(records)) {
                results.forEachRemaining(offset -> {});
            }
            commits = source.commits();
        }
        return Load.result(run, tally, committed.get(), Load.cpuSeconds() - cpu, "\"commits\": " + commits);
    }

    /**
     * drain with the pool's and the source's defaults (the settlement batch, the batches in flight):
     * with {@code inFlight} 1, as every batch waited for its own commit before decision 0053, the
     * settlement batch caps the rate; with 0, the source's default.
     */
    private static String drainWithDefaults(Load.Run run, Map<TopicPartition, Long> ends, int inFlight) throws Exception {
        Load.Tally tally = new Load.Tally(run);
        CompletableFuture<Long> committed = watch(run, ends, tally);
        double cpu = Load.cpuSeconds();
        long commits;
        KafkaSource.Builder<String, String> builder = KafkaSource.builder(consumer(run), new StringDeserializer(),
                new StringDeserializer()).topics(run.topic()).buffer(Math.max(1_024, 2 * run.workers()))
                .endWhenIdle(Duration.ofSeconds(1));
        if (inFlight > 0) {
            builder.batchesInFlight(inFlight);
        }
        try (KafkaSource<String, String> source = builder.open()) {
            WorkerPool<Delivery<String, String>, Long> pool = WorkerPool.<Delivery<String, String>, Long>builder(d -> {
                tally.handle(run);
                return d.offset();
            }).workers(run.workers()).queueSize(run.workers()).settler(source.settler()).name("bench").build();
            try (Stream<Delivery<String, String>> records = source.records(); Results<Delivery<String, String>, Long> results = pool.run(records)) {
                results.forEachRemaining(offset -> {});
            }
            commits = source.commits();
        }
        return Load.result(run, tally, committed.get(), Load.cpuSeconds() - cpu, "\"commits\": " + commits);
    }

    private static String plain(Load.Run run, Map<TopicPartition, Long> ends, Call call) throws Exception {
        Load.Tally tally = new Load.Tally(run);
        CompletableFuture<Long> committed = watch(run, ends, tally);
        double cpu = Load.cpuSeconds();
        Map<String, Object> config = consumer(run);
        config.put("enable.auto.commit", "false");
        config.put("auto.offset.reset", "earliest");
        config.put("group.protocol", "consumer");
        try (KafkaConsumer<String, String> consumer = new KafkaConsumer<>(config, new StringDeserializer(), new StringDeserializer())) {
            consumer.subscribe(java.util.List.of(run.topic()));
            while (tally.handled() < run.records()) {
                ConsumerRecords<String, String> polled = consumer.poll(Duration.ofMillis(100));
                for (ConsumerRecord<String, String> record : polled) {
                    call.handle(tally, run);
                }
                if (!polled.isEmpty()) {
                    consumer.commitSync(); // what this poll returned, all handled
                }
            }
        }
        return Load.result(run, tally, committed.get(), Load.cpuSeconds() - cpu, "");
    }

    /** How a plain loop calls the handler for one record. */
    private interface Call {
        void handle(Load.Tally tally, Load.Run run) throws Exception;
    }


    /**
     * The handler in a {@code StructuredTaskScope} of its own, forked and joined: what a pool that
     * runs every attempt on a fresh thread in a scope of its own (WP-3, WP-9) does for each record
     * (decision 0048).
     */
    @SuppressWarnings("preview")
    private static void inAScopeOfItsOwn(Load.Tally tally, Load.Run run) throws Exception {
        try (var scope = java.util.concurrent.StructuredTaskScope.open(
                java.util.concurrent.StructuredTaskScope.Joiner.<Void>awaitAllSuccessfulOrThrow())) {
            scope.fork(() -> {
                tally.handle(run);
                return null;
            });
            scope.join();
        }
    }

    /** Runs {@code action} on a thread of its own once the run has handled records for two seconds; {@return the thread} */
    private static Thread twoSecondsIn(Load.Tally tally, Runnable action) {
        return Thread.ofPlatform().name("two-seconds-in").start(() -> {
            try {
                tally.awaitFirst();
                for (long left; (left = tally.first() + 2_000_000_000L - System.nanoTime()) > 0; ) {
                    java.util.concurrent.TimeUnit.NANOSECONDS.sleep(left);
                }
            } catch (InterruptedException e) {
                return;
            }
            action.run();
        });
    }

    /** drain, stopped gracefully two seconds into the run: from {@code requestStop()} to the run's end, which comes after its last commit. */
    private static String drainStop(Load.Run run) throws Exception {
        Load.Tally tally = new Load.Tally(run);
        AtomicLong stopped = new AtomicLong();
        long ended;
        double cpu = Load.cpuSeconds();
        try (KafkaSource<String, String> source = open(run, Duration.ofSeconds(1))) {
            WorkerPool<Delivery<String, String>, Long> pool = pool(run, source, tally, d -> {});
            Thread stopper = twoSecondsIn(tally, () -> {
                stopped.set(System.nanoTime());
                pool.requestStop();
            });
            try (Stream<Delivery<String, String>> records = source.records(); Results<Delivery<String, String>, Long> results = pool.run(records)) {
                results.forEachRemaining(offset -> {});
            }
            ended = System.nanoTime(); // the run ends once every settlement is answered: after its last commit
            stopper.join();
        }
        long stoppedAt = stopped.get(); // 0, or after the end: the records ran out before the stop came
        String stop = stoppedAt == 0 || stoppedAt - ended > 0 ? "null"
                : String.format(java.util.Locale.ROOT, "%.1f", (ended - stoppedAt) / 1e6);
        return Load.result(run, tally, ended, Load.cpuSeconds() - cpu, "\"stop_to_last_commit_ms\": " + stop);
    }

    /**
     * drain, aborted two seconds into the run, then the group's next member (a source, which reads
     * the commit's metadata) handles what is left: the records handled by both, and the ones a
     * plain consumer of the group would handle again (done above the watermark).
     */
    private static String drainAbort(Load.Run run) throws Exception {
        Load.Tally tally = new Load.Tally(run);
        Set<String> before = ConcurrentHashMap.newKeySet();
        Set<String> after = ConcurrentHashMap.newKeySet();
        long aborted;
        double cpu = Load.cpuSeconds();
        try (KafkaSource<String, String> source = open(run, Duration.ofSeconds(1))) {
            WorkerPool<Delivery<String, String>, Long> pool = pool(run, source, tally, d -> before.add(d.toString()));
            Thread aborter = twoSecondsIn(tally, pool::abort);
            try (Stream<Delivery<String, String>> records = source.records(); Results<Delivery<String, String>, Long> results = pool.run(records)) {
                results.forEachRemaining(offset -> {});
            } catch (RuntimeException abortedRun) {
                // PoolAborted
            }
            aborted = System.nanoTime();
            aborter.join();
        }
        long plainRepeats = 0;
        try (org.apache.kafka.clients.admin.Admin admin = org.apache.kafka.clients.admin.Admin.create(Map.of("bootstrap.servers",
                run.servers()))) {
            Map<TopicPartition, OffsetAndMetadata> committed =
                    admin.listConsumerGroupOffsets(run.group()).partitionsToOffsetAndMetadata().get();
            for (String handled : before) {
                int at = handled.lastIndexOf('@');
                int dash = handled.lastIndexOf('-', at);
                TopicPartition partition = new TopicPartition(handled.substring(0, dash), Integer.parseInt(handled.substring(dash + 1, at)));
                OffsetAndMetadata c = committed.get(partition);
                if (c == null || Long.parseLong(handled.substring(at + 1)) >= c.offset()) {
                    plainRepeats++; // at or above the watermark: a plain consumer of the group reads it again
                }
            }
        }
        try (KafkaSource<String, String> next = open(run, Duration.ofSeconds(1))) {
            WorkerPool<Delivery<String, String>, Long> pool = pool(run, next, new Load.Tally(run), d -> after.add(d.toString()));
            try (Stream<Delivery<String, String>> records = next.records(); Results<Delivery<String, String>, Long> results = pool.run(records)) {
                results.forEachRemaining(offset -> {});
            }
        }
        Set<String> twice = new java.util.HashSet<>(before);
        twice.retainAll(after);
        if (before.size() + after.size() - twice.size() != run.records()) {
            throw new IllegalStateException("handled " + before.size() + " then " + after.size() + " (" + twice.size()
                    + " twice): not every one of " + run.records());
        }
        return Load.result(run, tally.first(), aborted, before.size(), Load.cpuSeconds() - cpu,
                String.format(java.util.Locale.ROOT, "\"handled_next\": %d, \"twice_with_a_source\": %d, \"twice_with_a_plain_consumer\": %d",
                        after.size(), twice.size(), plainRepeats));
    }
}
