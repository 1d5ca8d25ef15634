package dev.drain.bench;

import dev.drain.jobtable.JobTable;
import dev.drain.lab.LocalPostgres;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import javax.sql.DataSource;

/**
 * Issue 40's SIGTERM target, one child at a time ({@link #once}): {@link ServiceChild} in a JVM of
 * its own over a fresh table of the scenario's backlog, SIGTERM ({@link Process#destroy()}) at a
 * random moment after its first job is done, and the time from the signal to the process's exit,
 * as this JVM sees it. Then the table as the child left it is checked ({@link ServiceWork#check}:
 * after a graceful stop no row may be left {@code running}, and every job the child witnessed done
 * must be {@code done}), the driver finishes the table with the same service, and it is checked
 * again: nothing lost, nothing the child handled handled again.
 *
 * <p>The stubborn variant: the child's attempt number {@code stubbornAt} (a random one between
 * {@code jobs / 20} and {@code jobs / 5}) ignores every interrupt forever; SIGTERM comes a random
 * 0.2 to 2 s after it began. The hook then gives up at the deadline plus the grace, and the JVM
 * halts with that attempt running: its row stays {@code running} until its lease (3 s here, so
 * that the finish does not wait long) expires.
 *
 * <p>Not thread-safe: the driver's main thread calls it, one child at a time. The child's output
 * goes to a file, which the driver polls for the line it waits for.
 */
final class ServiceSigterm {
    static final long DEADLINE_MS = 5_000;
    static final long GRACE_MS = 1_000;
    static final long LEASE_MS = 3_000;
    /** The most lines of the child's output shown in a failure's message. */
    private static final int KEPT_LINES = 200;

    private final LocalPostgres postgres;
    private final int jobs;
    /** The random moments and stubborn attempts: the driver's main thread's only. */
    private final SplittableRandom random;

    ServiceSigterm(LocalPostgres postgres, int jobs, SplittableRandom random) {
        this.postgres = postgres;
        this.jobs = jobs;
        this.random = random;
    }

    /** One child: returns its result line (JSON). */
    String once(int round, boolean stubborn) throws IOException, SQLException, InterruptedException {
        DataSource db = postgres.dataSource();
        String name = "sig_" + round + (stubborn ? "_stubborn" : "_graceful");
        ServiceWork.drop(db, name);
        try (JobTable table = JobTable.on(db).table(name).open()) {
            table.enqueue(ServiceWork.backlog(jobs, ServiceWork.Mix.SCENARIO));
        }
        ServiceWork.createWitness(db, name);
        long stubbornAt = stubborn ? jobs / 20 + random.nextInt(Math.max(1, jobs / 5 - jobs / 20)) : 0;
        // the moment of the signal: after the first job done (graceful) or after the stubborn attempt began
        double maxDelay = Math.max(1.0, 6.0 * jobs / 10_000);
        double delay = stubborn ? 0.2 + 1.8 * random.nextDouble() : 0.5 + (maxDelay - 0.5) * random.nextDouble();
        String load = ServiceBench.load();
        List<String> command = List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "--enable-preview",
                "-Xms256m", "-Xmx512m", "-cp", System.getProperty("java.class.path"), ServiceChild.class.getName(),
                postgres.jdbcUrl(), name, Long.toString(DEADLINE_MS), Long.toString(GRACE_MS), Long.toString(LEASE_MS),
                Long.toString(stubbornAt));
        // the child's output goes to a file: a thread reading its pipe may see "Stream closed" when it exits
        Path log = Files.createTempFile("drain-service-child", ".txt");
        Process child = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile())
                .redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null"))).start();
        String readyLine = stubborn ? "stubborn" : "handling";
        double exitSeconds;
        long signalEpochMillis;
        long exitEpochMillis;
        boolean killed = false;
        try {
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
            while (!lines(log).contains(readyLine)) {
                if (!child.isAlive() || System.nanoTime() - until > 0) {
                    throw new IllegalStateException("the child never printed " + readyLine + ": " + tail(log));
                }
                Thread.sleep(20); // polling a file another process writes: no other way to be told
            }
            Thread.sleep((long) (delay * 1_000));
            if (!child.isAlive()) {
                throw new IllegalStateException("the child ended before the signal: " + tail(log));
            }
            signalEpochMillis = System.currentTimeMillis();
            long signalled = System.nanoTime();
            child.destroy(); // SIGTERM
            if (!child.waitFor(DEADLINE_MS + GRACE_MS + 30_000, TimeUnit.MILLISECONDS)) {
                killed = true;
            }
            exitSeconds = (System.nanoTime() - signalled) / 1e9;
            exitEpochMillis = System.currentTimeMillis();
        } finally {
            if (child.isAlive()) {
                child.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
            }
        }
        String stopped = lines(log).stream().filter(l -> l.startsWith("stopped ")).map(l -> l.substring("stopped ".length()))
                .findFirst().orElse("null");
        String closed = lines(log).stream().filter(l -> l.startsWith("closed ")).map(l -> l.substring("closed ".length()))
                .findFirst().orElse("null");
        if (stopped.equals("null") && !stubborn) { // a stubborn attempt holds main to the halt, as expected
            System.err.println("ServiceSigterm: " + name + ": the child's main did not end (the JVM halted first);"
                    + " its last lines:\n" + tail(log));
        }
        Files.delete(log);
        Map<String, Long> afterExit = ServiceWork.check(db, name);
        long finishStart = System.nanoTime();
        int finishRuns;
        List<String> outcomes = new ArrayList<>();
        try (JobTable table = JobTable.on(db).table(name).open();
             ServiceWork.Handler handler = new ServiceWork.Handler(db, name, "finish")) {
            finishRuns = ServiceBench.drainUntilSettled(table, ServiceWork.service(handler, table, null), outcomes, 120_000);
        }
        double finishSeconds = (System.nanoTime() - finishStart) / 1e9;
        Map<String, Long> finalCheck = ServiceWork.check(db, name);
        ServiceWork.drop(db, name);
        return "{\"part\": \"sigterm\", \"round\": " + round + ", \"variant\": \"" + (stubborn ? "stubborn" : "graceful")
                + "\", \"jobs\": " + jobs + ", \"deadline_s\": " + DEADLINE_MS / 1e3 + ", \"grace_s\": " + GRACE_MS / 1e3
                + ", \"stubborn_at\": " + stubbornAt + ", \"delay_s\": " + Math.round(delay * 1_000) / 1e3
                + ", \"exit_s\": " + exitSeconds + ", \"signal_epoch_ms\": " + signalEpochMillis + ", \"exit_epoch_ms\": "
                + exitEpochMillis + ", \"closed\": " + closed + ", \"killed\": " + killed + ", \"exit_code\": "
                + (child.isAlive() ? -1 : child.exitValue()) + ", \"child\": " + stopped + ", \"load1\": " + load
                + ", \"after_exit\": " + ServiceWork.json(afterExit) + ", \"finish_runs\": " + finishRuns
                + ", \"finish_s\": " + finishSeconds + ", \"final\": " + ServiceWork.json(finalCheck) + "}";
    }

    private static List<String> lines(Path log) throws IOException {
        return Files.readAllLines(log, StandardCharsets.UTF_8);
    }

    /** {@return the child's last lines, stack frames left out} */
    private static String tail(Path log) throws IOException {
        List<String> kept = lines(log).stream().filter(l -> !l.startsWith("\tat ")).toList();
        return String.join("\n", kept.subList(Math.max(0, kept.size() - KEPT_LINES), kept.size()));
    }
}
