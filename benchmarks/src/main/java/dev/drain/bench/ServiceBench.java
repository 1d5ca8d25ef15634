package dev.drain.bench;

import dev.drain.jobtable.Job;
import dev.drain.jobtable.JobState;
import dev.drain.jobtable.JobTable;
import dev.drain.lab.LocalPostgres;
import dev.drain.pool.RunOutcome;
import dev.drain.pool.WorkerPool;
import java.io.IOException;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.SQLException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.stream.IntStream;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;
import org.openjdk.jmh.infra.Blackhole;

/**
 * Issue 40's targets, a plain driver ({@code benchmarks/run service}; not JMH: each measured run
 * drains a whole backlog once). In one JVM with an embedded PostgreSQL ({@link LocalPostgres}),
 * round after round, the two sides of each comparison one after the other, their order swapped
 * every round, each in a fresh table:
 * <ol>
 *   <li>{@code scenario}: a service over a backlog of {@code jobs} (1 % malformed, 8 %
 *       failing once with an {@code IOException}, 0.5 % taking 4 s, the rest 1 to 3 ms; 16
 *       workers; a witness row per attempt; {@link ServiceWork}), to the moment no row is
 *       {@code ready} or {@code running}, beside the same backlog with no malformed job. Draining
 *       the claims again while rows are ready or running would be counted as a second run.</li>
 *   <li>{@code keep-going}: a backlog without failures under {@code onFailure(STOP)} and under
 *       {@code onFailure(CONTINUE)}, the pool otherwise the same, in the order STOP, CONTINUE,
 *       CONTINUE, STOP (or its mirror) per round: on the job table ({@code jobs} plain jobs of 1 to
 *       3 ms; the sequence three times a round), and on the pool alone ({@code items} items: a 1 ms
 *       sleep, once a round; about 20 µs of busy work, {@link Blackhole#consumeCPU}, three times a
 *       round). The lines give the driver JVM's CPU time too (the database's is not in it).</li>
 *   <li>{@code sigterm}: {@link ServiceSigterm}.</li>
 *   <li>{@code restart}, once after the rounds, for context: the scenario under the seed's rule
 *       ({@code onFailure(STOP)}), the claims drained again until no row is ready or running, as a
 *       service had to before a run could outlive its bad items (WP-23).</li>
 * </ol>
 * Each measured run prints one JSON line to the output file (figures, the checks of
 * {@link ServiceWork#check}, the load average when it began); {@code benchmarks/service_report.py}
 * judges them. Before the first round, unmeasured runs of each kind: the JIT's turn.
 *
 * <p>Arguments: rounds, jobs per backlog, items per pool-alone run, the output file, and optionally
 * which parts to run ({@code scenario,keep-going,sigterm,restart}, the default: all).
 */
public final class ServiceBench {
    private ServiceBench() {}

    /**
     * The busy handler's work, {@code Blackhole.consumeCPU(8,000)}: about 20 µs of CPU an item, the
     * pool's own included, on the 2-core machine of the first runs.
     */
    static final long BUSY_TOKENS = 8_000;

    private static int tables;

    public static void main(String[] args) throws Exception {
        int rounds = Integer.parseInt(args[0]);
        int jobs = Integer.parseInt(args[1]);
        int items = Integer.parseInt(args[2]);
        Path out = Path.of(args[3]);
        List<String> parts = List.of((args.length > 4 ? args[4] : "scenario,keep-going,sigterm,restart").split(","));
        try (LocalPostgres postgres = LocalPostgres.start();
             PrintStream lines = new PrintStream(Files.newOutputStream(out), true, StandardCharsets.UTF_8)) {
            DataSource db = postgres.dataSource();
            progress("warming up");
            timedTable(db, Math.min(jobs, 2_000), ServiceWork.Mix.PLAIN, WorkerPool.OnFailure.CONTINUE);
            timedTable(db, Math.min(jobs, 2_000), ServiceWork.Mix.PLAIN, WorkerPool.OnFailure.STOP);
            for (String handler : List.of("sleep1ms", "busy")) {
                timedPool(items / 5, handler, WorkerPool.OnFailure.STOP);
                timedPool(items / 5, handler, WorkerPool.OnFailure.CONTINUE);
            }
            ServiceSigterm sigterm = new ServiceSigterm(postgres, jobs, new SplittableRandom(4040));
            for (int round = 1; round <= rounds; round++) {
                boolean odd = round % 2 == 1;
                List<ServiceWork.Mix> mixes = odd ? List.of(ServiceWork.Mix.SCENARIO, ServiceWork.Mix.CLEAN)
                        : List.of(ServiceWork.Mix.CLEAN, ServiceWork.Mix.SCENARIO);
                for (ServiceWork.Mix mix : parts.contains("scenario") ? mixes : List.<ServiceWork.Mix>of()) {
                    String load = load();
                    Timed t = timedTable(db, jobs, mix, null);
                    emit(lines, "{\"part\": \"scenario\", \"round\": " + round + ", \"variant\": \"" + name(mix)
                            + "\", \"jobs\": " + jobs + ", \"seconds\": " + t.seconds() + ", \"runs\": " + t.runs()
                            + ", \"outcomes\": \"" + t.outcomes() + "\", \"load1\": " + load + ", \"check\": "
                            + ServiceWork.json(t.check()) + "}");
                }
                List<WorkerPool.OnFailure> order = !parts.contains("keep-going") ? List.<WorkerPool.OnFailure>of() : odd
                        ? List.of(WorkerPool.OnFailure.STOP, WorkerPool.OnFailure.CONTINUE, WorkerPool.OnFailure.CONTINUE,
                                WorkerPool.OnFailure.STOP)
                        : List.of(WorkerPool.OnFailure.CONTINUE, WorkerPool.OnFailure.STOP, WorkerPool.OnFailure.STOP,
                                WorkerPool.OnFailure.CONTINUE);
                // a job table run is a few seconds that the machine's load moves by a fifth: three sequences a round
                for (int rep = 0; rep < 3; rep++) {
                    for (WorkerPool.OnFailure rule : order) {
                        String load = load();
                        Timed t = timedTable(db, jobs, ServiceWork.Mix.PLAIN, rule);
                        emit(lines, "{\"part\": \"keep-going\", \"round\": " + round + ", \"where\": \"jobtable\","
                                + " \"variant\": \"" + rule + "\", \"n\": " + jobs + ", \"seconds\": " + t.seconds()
                                + ", \"cpu_s\": " + t.cpuSeconds() + ", \"runs\": " + t.runs() + ", \"load1\": " + load
                                + ", \"check\": " + ServiceWork.json(t.check()) + "}");
                    }
                }
                for (String handler : List.of("sleep1ms", "busy")) {
                    // the busy runs are short (about 1 s at 100,000 items): three times the sequence per round
                    for (int rep = 0; rep < (handler.equals("busy") ? 3 : 1); rep++) {
                        for (WorkerPool.OnFailure rule : order) {
                            String load = load();
                            long cpu = processCpuNanos();
                            double seconds = timedPool(items, handler, rule);
                            emit(lines, "{\"part\": \"keep-going\", \"round\": " + round + ", \"where\": \"pool-" + handler
                                    + "\", \"variant\": \"" + rule + "\", \"n\": " + items + ", \"seconds\": " + seconds
                                    + ", \"cpu_s\": " + (processCpuNanos() - cpu) / 1e9 + ", \"load1\": " + load + "}");
                        }
                    }
                }
                for (boolean stubborn : parts.contains("sigterm") ? List.of(false, true) : List.<Boolean>of()) {
                    emit(lines, sigterm.once(round, stubborn));
                }
            }
            if (parts.contains("restart")) {
                // the seed's rule over the scenario, drained again until settled: the restart loop a user
                // wrote before WP-23 (context, not a target: once, after the rounds)
                String load = load();
                Timed t = timedTable(db, jobs, ServiceWork.Mix.SCENARIO, WorkerPool.OnFailure.STOP);
                emit(lines, "{\"part\": \"restart\", \"round\": 0, \"variant\": \"STOP\", \"jobs\": " + jobs
                        + ", \"seconds\": " + t.seconds() + ", \"runs\": " + t.runs() + ", \"load1\": " + load
                        + ", \"check\": " + ServiceWork.json(t.check()) + "}");
            }
        }
    }

    private static String name(ServiceWork.Mix mix) {
        return mix == ServiceWork.Mix.SCENARIO ? "malformed" : "clean";
    }

    /** What a timed run over a table gave. */
    record Timed(double seconds, double cpuSeconds, int runs, String outcomes, Map<String, Long> check) {}

    /**
     * Fills a fresh table with a backlog of {@code mix}, then times the service over it (under
     * {@code rule}, or forEach's default if null) until no row is ready or running, draining the
     * claims again as long as some are; checks the table and its witness; drops both.
     */
    static Timed timedTable(DataSource db, int jobs, ServiceWork.Mix mix, WorkerPool.@Nullable OnFailure rule)
            throws SQLException, InterruptedException {
        String name = "svc_" + (++tables);
        ServiceWork.drop(db, name);
        try (JobTable table = JobTable.on(db).table(name).open();
             ServiceWork.Handler handler = new ServiceWork.Handler(db, name, "run")) {
            table.enqueue(ServiceWork.backlog(jobs, mix));
            ServiceWork.createWitness(db, name);
            WorkerPool.Builder<Job, Void> service = ServiceWork.service(handler, table, rule);
            List<String> outcomes = new ArrayList<>();
            long cpu = processCpuNanos();
            long start = System.nanoTime();
            int runs = drainUntilSettled(table, service, outcomes, 900_000); // a safety net: the restart loop takes minutes
            double seconds = (System.nanoTime() - start) / 1e9;
            double cpuSeconds = (processCpuNanos() - cpu) / 1e9;
            Map<String, Long> check = ServiceWork.check(db, name);
            ServiceWork.drop(db, name);
            return new Timed(seconds, cpuSeconds, runs, String.join(" ", outcomes), check);
        }
    }

    /**
     * Drains the table's claims through pools built from {@code service} until no row is ready or
     * running (waiting 100 ms between runs while rows are running under another owner's lease),
     * or {@code limitMillis} has passed; returns how many runs it took. Each run's outcome kind is
     * added to {@code outcomes}.
     */
    static int drainUntilSettled(JobTable table, WorkerPool.Builder<Job, Void> service, List<String> outcomes, long limitMillis)
            throws SQLException, InterruptedException {
        long until = System.nanoTime() + limitMillis * 1_000_000;
        int runs = 0;
        while (true) {
            RunOutcome<Job> outcome = service.build().drain(table.claims());
            runs++;
            outcomes.add(outcome.getClass().getSimpleName());
            Map<JobState, Long> counts = table.counts();
            if (counts.get(JobState.READY) + counts.get(JobState.RUNNING) == 0 || System.nanoTime() - until > 0) {
                return runs;
            }
            if (counts.get(JobState.READY) == 0) {
                Thread.sleep(100); // rows held under a lease that has not expired yet
            }
        }
    }

    /** Times one run of the pool alone over {@code items} integers, with a handler that never fails. */
    static double timedPool(int items, String handler, WorkerPool.OnFailure rule) {
        WorkerPool<Integer, Void> pool = WorkerPool.<Integer>forEach(i -> {
            if (handler.equals("sleep1ms")) {
                Thread.sleep(1);
            } else {
                busy();
            }
        }).workers(ServiceWork.WORKERS).onFailure(rule).name("keep-going").build();
        long start = System.nanoTime();
        RunOutcome<Integer> outcome = pool.drain(IntStream.range(0, items).boxed().iterator());
        double seconds = (System.nanoTime() - start) / 1e9;
        if (!(outcome instanceof RunOutcome.Completed<Integer> c) || !c.failures().isEmpty()) {
            throw new IllegalStateException("the pool alone did not complete cleanly: " + outcome);
        }
        return seconds;
    }

    /** About 20 µs of work here: JMH's {@link Blackhole#consumeCPU} (a loop of arithmetic the JIT leaves alone). */
    private static void busy() {
        Blackhole.consumeCPU(BUSY_TOKENS);
    }

    /** {@return the CPU time this JVM has used so far, all its threads (the JIT's and the collector's too)} */
    static long processCpuNanos() {
        return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean()).getProcessCpuTime();
    }

    /** {@return the 1-minute load average now, or -1 where /proc/loadavg is not there} */
    static String load() {
        try {
            return Files.readString(Path.of("/proc/loadavg")).split(" ")[0];
        } catch (IOException | RuntimeException e) {
            return "-1";
        }
    }

    private static void emit(PrintStream lines, String line) {
        lines.println(line);
        progress(line);
    }

    static void progress(String line) {
        System.out.println(line);
        System.out.flush();
    }
}
