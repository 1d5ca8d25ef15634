package dev.drain.pool;

import dev.drain.pool.Workloads.CountingSource;
import dev.drain.support.Stubborn;
import java.io.BufferedWriter;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;

/**
 * A service as a user writes one (WP-27): a side-effect pool over an endless source, under
 * {@link StopOnShutdown}, until the JVM is told to shut down. Run by {@link StopOnShutdownTest} in
 * a JVM of its own, which it stops with SIGTERM. Its witness file, each line flushed to the
 * operating system before the step it records goes on (so it outlives the process): {@code done i} when item {@code i}'s work has completed, {@code ack i} when the
 * store acknowledged it, {@code release i} when it was released unfinished.
 *
 * <p>Arguments: the witness file, the intake, the stop's deadline and grace in milliseconds, the
 * item whose handler ignores every interrupt (-1 for none), and how long the store takes per batch
 * in milliseconds (a slow store keeps items done and not yet acknowledged, which a process that
 * exits too early would lose).
 */
final class ServiceMain {
    private ServiceMain() {}

    public static void main(String[] args) throws IOException {
        Path witness = Path.of(args[0]);
        WorkerPool.IntakeKind intake = WorkerPool.IntakeKind.valueOf(args[1]);
        Duration deadline = Duration.ofMillis(Long.parseLong(args[2]));
        Duration grace = Duration.ofMillis(Long.parseLong(args[3]));
        int stubborn = Integer.parseInt(args[4]);
        Duration storeTakes = Duration.ofMillis(Long.parseLong(args[5]));
        try (BufferedWriter out = Files.newBufferedWriter(witness, StandardCharsets.UTF_8, StandardOpenOption.CREATE,
                StandardOpenOption.APPEND);
             StopOnShutdown shutdown = StopOnShutdown.install(deadline, grace)) {
            Settler<Integer> store = batch -> {
                Thread.sleep(storeTakes);
                for (Settlement<Integer> s : batch) {
                    write(out, (s instanceof Settlement.Succeeded<Integer> ? "ack " : s instanceof Settlement.Released<Integer>
                            ? "release " : "dead ") + s.item());
                }
            };
            WorkerPool.Builder<Integer, Void> service = WorkerPool.<Integer>forEach(item -> {
                if (item == stubborn) {
                    Stubborn.ignoreEveryInterrupt();
                }
                Thread.sleep(5);
                write(out, "done " + item);
            }).workers(4).queueSize(4).intake(intake).settler(store).settleBatch(8).name("service");
            while (!shutdown.received()) {
                RunOutcome<Integer> outcome = shutdown.drain(service.build(), CountingSource.endless());
                System.out.println("ended " + outcome);
            }
        }
    }

    /** One line, written and forced to the disk before the caller goes on. */
    private static void write(BufferedWriter out, String line) throws IOException {
        synchronized (out) {
            out.write(line);
            out.newLine();
            out.flush();
        }
    }
}
