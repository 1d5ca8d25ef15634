package dev.drain.bench.pc;

import dev.drain.bench.kafka.Load;
import io.confluent.parallelconsumer.ParallelConsumerOptions;
import io.confluent.parallelconsumer.ParallelStreamProcessor;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;

/**
 * Confluent's Parallel Consumer 0.5.3.3 in {@code benchmarks/run kafka}: the same run as drain's
 * harness ({@code dev.drain.bench.KafkaThroughput}, {@link Load}), with the options a user takes for
 * unordered work: {@code UNORDERED}, {@code maxConcurrency} = workers, the default commit mode
 * (periodic, asynchronous) and interval. Arguments: servers, {@code pc}, workers, handler
 * milliseconds, records, topic. Prints one JSON line.
 */
public final class PcThroughput {
    private PcThroughput() {}

    public static void main(String[] args) throws Exception {
        Load.Run run = Load.Run.of(args);
        Load.Run warm = run.warmUp();
        Load.prepare(warm);
        Load.prepare(run);
        Set<Thread> before = Thread.getAllStackTraces().keySet();
        measure(warm, Load.ends(warm)); // not measured: the JIT's turn
        String line = measure(run, Load.ends(run));
        // Parallel Consumer 0.5.3.3 leaves threads of its own running after close() (seen here: pc-control and
        // pc-broker-poll, idle, not daemons): counted, then the JVM is ended, as a user's main would have to
        long left = Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.isAlive() && !t.isDaemon() && !before.contains(t) && t != Thread.currentThread()).count();
        System.out.println(line.substring(0, line.length() - 1) + ", \"threads_left_after_close\": " + left + "}");
        System.exit(0);
    }

    private static String measure(Load.Run run, Map<TopicPartition, Long> ends) throws Exception {
        Map<String, Object> config = new HashMap<>();
        config.put("bootstrap.servers", run.servers());
        config.put("group.id", run.group());
        config.put("enable.auto.commit", "false");
        config.put("auto.offset.reset", "earliest");
        Load.Tally tally = new Load.Tally(run);
        double cpu = Load.cpuSeconds();
        KafkaConsumer<String, String> consumer = new KafkaConsumer<>(config, new StringDeserializer(), new StringDeserializer());
        ParallelConsumerOptions<String, String> options = ParallelConsumerOptions.<String, String>builder()
                .ordering(ParallelConsumerOptions.ProcessingOrder.UNORDERED)
                .maxConcurrency(run.workers())
                .consumer(consumer)
                .build();
        long committed;
        try (ParallelStreamProcessor<String, String> pc = ParallelStreamProcessor.createEosStreamProcessor(options)) {
            pc.subscribe(List.of(run.topic()));
            pc.poll(context -> {
                try {
                    tally.handle(run);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException(e);
                }
            });
            tally.awaitAll();
            committed = Load.awaitCommitted(run, ends, Duration.ofMinutes(2));
        }
        return Load.result(run, tally, committed, Load.cpuSeconds() - cpu, "");
    }
}
