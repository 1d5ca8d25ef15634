package dev.drain.kafka;

import dev.drain.pool.Backoff;
import dev.drain.pool.ItemContext;
import dev.drain.pool.RunOutcome;
import dev.drain.pool.StopOnShutdown;
import dev.drain.pool.WorkerPool;
import dev.drain.support.Stubborn;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.stream.Stream;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.jspecify.annotations.Nullable;

/**
 * A service over a Kafka topic as a user writes one (WP-23, WP-25, WP-27, WP-28), with witnesses
 * outside the adapter: a side-effect pool over a {@link KafkaSource} that goes on past its bad
 * records (dead-lettered) and retries a flaky backend later, until the JVM is told to shut down;
 * then {@link StopOnShutdown} stops the run with a deadline, and the source's {@code close()}
 * makes the last commit before the hook lets the JVM go. {@link KafkaDeployTest} sends it SIGTERM.
 *
 * <p>Its records, by offset: {@link #malformed} ones fail for good (dead-lettered); a
 * {@link #flaky} one fails its first attempt with an {@link IOException} and is retried after a
 * backoff; the stubborn one ignores every interrupt for as long as its JVM lives; the others work
 * for 3 ms and then append {@code partition offset who} to the handlings file, forced to disk
 * before the handler returns: a line means a record's work was done. {@link CommitWitness} logs
 * every commit.
 *
 * <p>Arguments of {@link #main}: bootstrap servers, topic, group, workers, the handlings file, the
 * commits file, who, the stop's deadline and grace in milliseconds, and the stubborn record as
 * {@code partition:offset} ({@code -} for none).
 */
public final class ServiceConsumer {
    private ServiceConsumer() {}

    /** {@return whether the record at {@code offset} is malformed: one in 50, never done} */
    static boolean malformed(long offset) {
        return offset % 50 == 17;
    }

    /** {@return whether the record at {@code offset} fails its first attempt with a retryable exception} */
    static boolean flaky(long offset) {
        return offset % 11 == 5 && !malformed(offset);
    }

    /**
     * Serves the topic named by {@code args} (see the class comment) until SIGTERM.
     *
     * @param args servers, topic, group, workers, handlings, commits, who, deadline ms, grace ms, stubborn
     * @throws Exception whatever the service throws: the process then exits with status 1
     */
    public static void main(String[] args) throws Exception {
        Duration deadline = Duration.ofMillis(Long.parseLong(args[7]));
        Duration grace = Duration.ofMillis(Long.parseLong(args[8]));
        String[] stubborn = args[9].split(":", -1);
        try (StopOnShutdown shutdown = StopOnShutdown.install(deadline, grace)) {
            RunOutcome<Delivery<String, String>> outcome = serve(args[0], args[1], args[2], Integer.parseInt(args[3]),
                    Path.of(args[4]), args[5], args[6], args[9].equals("-") ? -1 : Integer.parseInt(stubborn[0]),
                    args[9].equals("-") ? -1 : Long.parseLong(stubborn[1]), null, shutdown::drain);
            System.out.println("ended " + outcome); // for a failing test's message
        }
    }

    /**
     * Serves the topic in this JVM until it has been idle for a second and a half: the member that
     * finishes what a stopped service left. {@return the run's outcome}
     */
    static RunOutcome<Delivery<String, String>> finish(String servers, String topic, String group, Path handlings, Path commits,
            String who) throws Exception {
        return serve(servers, topic, group, 4, handlings, commits.toString(), who, -1, -1, Duration.ofMillis(1_500),
                WorkerPool::drain);
    }

    /** Runs one pool over one stream of records to its end. */
    private interface Runner {
        RunOutcome<Delivery<String, String>> run(WorkerPool<Delivery<String, String>, Void> pool,
                Stream<Delivery<String, String>> records);
    }

    private static RunOutcome<Delivery<String, String>> serve(String servers, String topic, String group, int workers, Path handlings,
            String commits, String who, int stubbornPartition, long stubbornOffset, @Nullable Duration idle, Runner runner)
            throws IOException {
        Map<String, Object> config = new HashMap<>(Map.of("bootstrap.servers", servers, "group.id", group,
                "interceptor.classes", CommitWitness.class.getName(), CommitWitness.FILE, commits,
                "default.api.timeout.ms", "10000", "request.timeout.ms", "5000"));
        KafkaSource.Builder<String, String> builder = KafkaSource.builder(config, new StringDeserializer(), new StringDeserializer())
                .topics(topic).buffer(16);
        if (idle != null) {
            builder.endWhenIdle(idle);
        }
        try (FileChannel out = FileChannel.open(handlings, StandardOpenOption.CREATE, StandardOpenOption.WRITE, StandardOpenOption.APPEND);
                KafkaSource<String, String> source = builder.open()) {
            WorkerPool<Delivery<String, String>, Void> pool = WorkerPool.<Delivery<String, String>>forEach(d -> {
                if (d.partition() == stubbornPartition && d.offset() == stubbornOffset) {
                    Stubborn.ignoreEveryInterrupt();
                }
                if (malformed(d.offset())) {
                    throw new IllegalArgumentException("record " + d.partition() + "-" + d.offset() + " is malformed");
                }
                if (flaky(d.offset()) && ItemContext.current().attempt() == 1) {
                    throw new IOException("the backend did not answer record " + d.partition() + "-" + d.offset());
                }
                Thread.sleep(3); // the record's work, then its effect, durable before the handler returns
                WitnessedConsumer.witness(out, d.partition() + " " + d.offset() + " " + who + "\n");
            }).name(who).workers(workers).queueSize(workers).settler(source.settler())
                    .retryable(IOException.class).maxRetries(3)
                    .retryBackoff(Backoff.exponential(Duration.ofMillis(20), Duration.ofMillis(200))).build();
            return runner.run(pool, source.records());
        }
    }
}
