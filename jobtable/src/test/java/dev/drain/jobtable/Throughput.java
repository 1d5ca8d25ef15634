package dev.drain.jobtable;

import dev.drain.pool.Results;
import dev.drain.pool.Settlement;
import dev.drain.pool.WorkerPool;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.stream.Stream;
import javax.sql.DataSource;

/**
 * A rough measurement, not a test (decision 0041's figures, until the JMH benchmarks exist): jobs
 * per second through a job table, by dialect, workers and claim batch, with a handler that sleeps
 * 1 ms, beside a plain loop on the same table (each thread claims one row, handles it and
 * acknowledges it, with the same statements and no pool). One table per row of the result, one
 * run each, so the figures vary by 10–20 % between runs on 2 cores.
 *
 * <p>Run: {@code java --enable-preview -cp <test class path> dev.drain.jobtable.Throughput [jobs] [out.md]}.
 */
final class Throughput {
    private Throughput() {}

    public static void main(String[] args) throws Exception {
        int jobs = args.length > 0 ? Integer.parseInt(args[0]) : 4_000;
        StringBuilder md = new StringBuilder("| dialect | what | W | claim batch | jobs/s |\n| --- | --- | --- | --- | --- |\n");
        try (Engines engines = new Engines()) {
            for (Dialect dialect : Dialect.values()) {
                DataSource db = engines.dataSource(dialect);
                for (int w : new int[] {1, 16}) {
                    md.append(row(dialect, "plain loop", w, 1, plainLoop(db, jobs, w)));
                    for (int batch : new int[] {1, 16, 64}) {
                        md.append(row(dialect, "pool", w, batch, pool(db, jobs, w, batch)));
                    }
                }
            }
        }
        String out = "jobs " + jobs + ", handler Thread.sleep(1 ms), settle batch 64\n\n" + md;
        if (args.length > 1) {
            Files.writeString(Path.of(args[1]), out);
        }
        System.out.print(out);
    }

    private static String row(Dialect dialect, String what, int w, int batch, double rate) {
        return String.format(Locale.ROOT, "| %s | %s | %d | %d | %,.0f |%n", dialect, what, w, batch, rate);
    }

    private static void work() throws InterruptedException {
        Thread.sleep(Duration.ofMillis(1));
    }

    private static double pool(DataSource db, int jobs, int workers, int claimBatch) throws Exception {
        String table = Engines.freshTable("pool");
        try (JobTable t = JobTable.on(db).table(table).claimBatch(claimBatch).open()) {
            t.enqueue(Rows.payloads(jobs));
            WorkerPool<Job, Long> pool = WorkerPool.<Job, Long>builder(job -> {
                work();
                return job.id();
            }).workers(workers).queueSize(Math.max(workers, claimBatch)).settler(t.settler()).build();
            long start = System.nanoTime();
            try (Stream<Job> claims = t.claims(); Results<Job, Long> results = pool.run(claims)) {
                results.forEachRemaining(id -> {});
            }
            return check(t, jobs) * 1e9 / (System.nanoTime() - start);
        }
    }

    private static double plainLoop(DataSource db, int jobs, int threads) throws Exception {
        String table = Engines.freshTable("plain");
        List<JobTable> tables = new ArrayList<>();
        try {
            for (int i = 0; i < threads; i++) {
                tables.add(JobTable.on(db).table(table).claimBatch(1).open());
            }
            tables.getFirst().enqueue(Rows.payloads(jobs));
            List<Thread> running = new ArrayList<>();
            long start = System.nanoTime();
            for (JobTable t : tables) {
                running.add(Thread.ofPlatform().start(() -> {
                    try (Stream<Job> claims = t.claims()) {
                        Iterator<Job> it = claims.iterator();
                        while (it.hasNext()) {
                            Job job = it.next();
                            work();
                            t.settler().settle(List.of(new Settlement.Succeeded<>(job)));
                        }
                    } catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                }));
            }
            for (Thread thread : running) {
                thread.join();
            }
            return check(tables.getFirst(), jobs) * 1e9 / (System.nanoTime() - start);
        } finally {
            tables.forEach(JobTable::close);
        }
    }

    private static long check(JobTable t, int jobs) throws Exception {
        long done = t.counts().getOrDefault(JobState.DONE, 0L);
        if (done != jobs) {
            throw new IllegalStateException("only " + done + " of " + jobs + " done");
        }
        return done;
    }
}
