package dev.drain.kafka;

import dev.drain.pool.Results;
import dev.drain.pool.RunOutcome;
import dev.drain.pool.WorkerPool;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.jspecify.annotations.Nullable;

/**
 * A process that runs a pool over a {@link KafkaSource}, for the tests that kill, stop, freeze
 * and rebalance it (KC-8, KC-10). Its witnesses are outside the adapter: the handler appends
 * {@code partition offset who} to a file and forces it to disk before it returns (a record it
 * handled), and {@link CommitWitness} logs every commit. It runs until the source is idle; a
 * SIGTERM asks its pool to stop gracefully and waits for the end. Its last line on standard
 * output is {@code ended outcome=... stale=... refused=... commits=...}.
 *
 * <p>Arguments: bootstrap servers, topic, group, workers, buffer, handler milliseconds, the
 * handlings file, the commits file, who, and the idle end in milliseconds (1,500 if not given).
 */
public final class WitnessedConsumer {
    private WitnessedConsumer() {}

    public static void main(String[] args) throws Exception {
        AtomicReference<WorkerPool<Delivery<String, String>, String>> running = new AtomicReference<>();
        CountDownLatch ended = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> { // SIGTERM: a graceful stop
            WorkerPool<Delivery<String, String>, String> pool = running.get();
            if (pool != null) {
                pool.requestStop();
            }
            try {
                ended.await(30, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }));
        try {
            System.out.println(run(args, running, System.out));
        } finally {
            ended.countDown();
        }
    }

    /**
     * Runs the pool over the source until it is idle or stopped; {@return the {@code ended ...} line}
     *
     * @param running where the pool is put once it is built, for a stop to find it
     * @param diagnostics where a child prints the source's state as it changes, for a failing
     *     test's message; {@code null} in a test's own JVM, which prints nothing
     */
    static String run(String[] args, AtomicReference<WorkerPool<Delivery<String, String>, String>> running,
            @Nullable PrintStream diagnostics) throws Exception {
        String servers = args[0];
        String topic = args[1];
        String group = args[2];
        int workers = Integer.parseInt(args[3]);
        int buffer = Integer.parseInt(args[4]);
        long handlerMillis = Long.parseLong(args[5]);
        Path handlings = Path.of(args[6]);
        String who = args[8];
        Duration idle = Duration.ofMillis(args.length > 9 ? Long.parseLong(args[9]) : 1500);
        Map<String, Object> config = new java.util.HashMap<>(Map.of("bootstrap.servers", servers, "group.id", group,
                "interceptor.classes", CommitWitness.class.getName(), CommitWitness.FILE, args[7],
                "default.api.timeout.ms", "10000", "request.timeout.ms", "5000"));
        KafkaSource<String, String> source = KafkaSource.builder(config, new StringDeserializer(), new StringDeserializer())
                .topics(topic).buffer(buffer).endWhenIdle(idle).open();
        Thread watch = Thread.ofPlatform().daemon().name("assignment-watch").unstarted(() -> {
            String seen = "";
            while (!Thread.currentThread().isInterrupted()) {
                String now = source.toString().replaceAll(", commits \\d+", "");
                if (!now.equals(seen)) {
                    Objects.requireNonNull(diagnostics).println(System.currentTimeMillis() + " " + now);
                    seen = now;
                }
                try {
                    Thread.sleep(500);
                } catch (InterruptedException e) {
                    return;
                }
            }
        });
        if (diagnostics != null) {
            watch.start();
        }
        RunOutcome<Delivery<String, String>> outcome;
        try (FileChannel out = FileChannel.open(handlings, StandardOpenOption.CREATE, StandardOpenOption.WRITE, StandardOpenOption.APPEND)) {
            WorkerPool<Delivery<String, String>, String> pool = WorkerPool.<Delivery<String, String>, String>builder(d -> {
                if (handlerMillis > 0) {
                    Thread.sleep(handlerMillis);
                }
                witness(out, d.partition() + " " + d.offset() + " " + who + "\n");
                return Objects.requireNonNull(d.value());
            }).workers(workers).queueSize(workers).settleBatch(16).settler(source.settler()).name(who).build();
            running.set(pool);
            Results<Delivery<String, String>, String> ran;
            try (Stream<Delivery<String, String>> records = source.records();
                    Results<Delivery<String, String>, String> results = pool.run(records)) {
                ran = results;
                try {
                    results.forEachRemaining(r -> {});
                } catch (RuntimeException e) {
                    // the outcome says what
                }
            }
            outcome = ran.outcome().orElseThrow();
        } finally {
            watch.interrupt();
            if (diagnostics != null) {
                watch.join(dev.drain.support.Bounds.WAIT.toMillis());
            }
            source.close(); // its last commit counts in the figures below
        }
        String cause = outcome instanceof RunOutcome.Unsettled<Delivery<String, String>> unsettled
                ? " cause=" + unsettled.cause().toString().replace('\n', ' ') : "";
        if (diagnostics != null && outcome instanceof RunOutcome.Unsettled<Delivery<String, String>> u) {
            u.cause().printStackTrace(diagnostics); // where it was thrown, for a failing test's message (decision 0047 needed it)
        }
        return "ended outcome=" + outcome.getClass().getSimpleName() + " stale=" + source.staleSettlements()
                + " refused=" + source.refusedCommits() + " commits=" + source.commits() + " unsettled=" + outcome.unsettled().size()
                + cause;
    }

    /** Appends {@code line} to {@code out} and forces it to disk before it returns: a handler's witness. */
    static synchronized void witness(FileChannel out, String line) {
        try {
            out.write(ByteBuffer.wrap(line.getBytes(StandardCharsets.UTF_8)));
            out.force(false);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
