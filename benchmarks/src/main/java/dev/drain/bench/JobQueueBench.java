package dev.drain.bench;

import dev.drain.jobtable.Job;
import dev.drain.jobtable.JobTable;
import dev.drain.lab.LocalPostgres;
import dev.drain.pool.WorkerPool;
import java.io.File;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.Statement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Stream;
import javax.sql.DataSource;

/**
 * Issue 41's job-queue targets on the embedded PostgreSQL, in one run:
 * <ul>
 *   <li><b>latency</b>: an idle queue, one job at a time enqueued by another table instance (so
 *       that the server tells the serving one through {@code LISTEN/NOTIFY}), in a transaction of
 *       its own on a kept connection (as an application's connection pool keeps them), the time
 *       from before the enqueue to the handler's start; drain's waiting stream
 *       ({@code claimsUntilStopped()}, 4 workers) beside a plain loop of 4 threads that claims
 *       with the same statement as {@link JobTableBench}'s and sleeps {@value #PLAIN_POLL_MS} ms
 *       when it finds nothing;</li>
 *   <li><b>rescue</b>: a table in a JVM of its own ({@link RescueChild}) claims 8 rows and is
 *       killed ({@code SIGKILL}); the time from the kill until its rows are claimable, that is
 *       until PostgreSQL has dropped its presence lock (watched every millisecond on a kept
 *       connection), with the default 30 s lease (JT-3, decision 0067); a claim of another table
 *       then checks that it takes the 8 rows.</li>
 * </ul>
 * Arguments: rounds, latency jobs per round and side, kills per round, the JSON-lines file to
 * write (a line per round and part). The rounds alternate the latency sides' order.
 */
public final class JobQueueBench {
    /** How long the plain loop sleeps after a claim that found nothing. */
    static final int PLAIN_POLL_MS = 50;
    /** How many rows the killed child holds. */
    static final int HELD = 8;

    private JobQueueBench() {}

    public static void main(String[] args) throws Exception {
        int rounds = Integer.parseInt(args[0]);
        int jobs = Integer.parseInt(args[1]);
        int kills = Integer.parseInt(args[2]);
        Path out = Path.of(args[3]);
        try (LocalPostgres postgres = LocalPostgres.start();
             PrintWriter lines = new PrintWriter(Files.newBufferedWriter(out, StandardCharsets.UTF_8))) {
            DataSource db = postgres.dataSource();
            latency(db, "warm_drain", true, jobs / 4); // the JIT's turn, not written
            latency(db, "warm_plain", false, jobs / 4);
            for (int round = 1; round <= rounds; round++) {
                boolean drainFirst = round % 2 == 1;
                for (boolean drain : new boolean[] {drainFirst, !drainFirst}) {
                    long[] micros = latency(db, "lat_" + round + (drain ? "_drain" : "_plain"), drain, jobs);
                    lines.println("{\"part\": \"latency\", \"round\": " + round + ", \"side\": \"" + (drain ? "drain" : "plain")
                            + "\", \"jobs\": " + jobs + ", \"micros\": " + Arrays.toString(micros) + ", \"load1\": " + ServiceBench.load() + "}");
                    lines.flush();
                }
                long[] rescue = rescues(postgres, "rescue_" + round, kills);
                lines.println("{\"part\": \"rescue\", \"round\": " + round + ", \"kills\": " + kills + ", \"held\": " + HELD
                        + ", \"lease_ms\": 30000, \"micros\": " + Arrays.toString(rescue) + ", \"load1\": " + ServiceBench.load() + "}");
                lines.flush();
            }
        }
    }

    /** {@return each job's time from before its enqueue to its handler's start, in microseconds, in order} */
    static long[] latency(DataSource db, String name, boolean drain, int jobs) throws Exception {
        ServiceWork.drop(db, name);
        JobTable.on(db).table(name).migrate();
        LinkedBlockingQueue<Long> started = new LinkedBlockingQueue<>();
        long[] micros = new long[jobs];
        try (JobTable enqueuer = JobTable.on(db).table(name).open(); Connection kept = db.getConnection();
             ExecutorService serving = Executors.newVirtualThreadPerTaskExecutor()) {
            kept.setAutoCommit(false); // a connection of the application's, kept as a connection pool keeps it
            AtomicBoolean stop = new AtomicBoolean();
            List<Future<?>> servers = new ArrayList<>();
            WorkerPool<Job, Void> pool = null;
            JobTable served = null;
            try {
                if (drain) {
                    served = JobTable.on(db).table(name).open();
                    JobTable table = served;
                    WorkerPool<Job, Void> p = WorkerPool.<Job>forEach(job -> started.add(System.nanoTime() - Long.parseLong(job.payload())))
                            .workers(4).settler(table.settler()).name("latency").build();
                    pool = p;
                    servers.add(serving.submit(() -> {
                        try (Stream<Job> claims = table.claimsUntilStopped()) {
                            return p.drain(claims);
                        }
                    }));
                } else {
                    for (int w = 0; w < 4; w++) {
                        servers.add(serving.submit(() -> {
                            plainLoop(db, name, stop, started);
                            return null;
                        }));
                    }
                }
                // a first job, not measured: the stream is waiting (and listening) once it is handled
                enqueue(enqueuer, kept);
                take(started, name);
                for (int i = 0; i < jobs; i++) {
                    Thread.sleep(2 + ThreadLocalRandom.current().nextInt(9)); // an idle queue: 2 to 10 ms between jobs
                    enqueue(enqueuer, kept);
                    micros[i] = take(started, name) / 1_000;
                }
            } finally {
                stop.set(true);
                if (pool != null) {
                    pool.requestStop();
                }
                try {
                    for (Future<?> server : servers) {
                        server.get(60, TimeUnit.SECONDS);
                    }
                } finally {
                    if (served != null) {
                        served.close(); // whatever the servers did: its threads and connections end with this round
                    }
                }
            }
        }
        ServiceWork.drop(db, name);
        return micros;
    }

    /** Enqueues one job that carries the time now, in a transaction of its own on {@code kept}, committed. */
    private static void enqueue(JobTable enqueuer, Connection kept) throws Exception {
        enqueuer.enqueue(kept, List.of(Long.toString(System.nanoTime())));
        kept.commit();
    }

    private static long take(LinkedBlockingQueue<Long> started, String name) throws InterruptedException {
        Long nanos = started.poll(30, TimeUnit.SECONDS);
        if (nanos == null) {
            throw new IllegalStateException(name + ": no job started within 30 s");
        }
        return nanos;
    }

    /** One thread of the plain loop: claim one row, handle it (note its latency), acknowledge it; sleep when none. */
    private static void plainLoop(DataSource db, String table, AtomicBoolean stop, LinkedBlockingQueue<Long> started) throws Exception {
        String owner = "plain-" + Thread.currentThread().threadId();
        try (Connection c = db.getConnection();
             PreparedStatement claimable = c.prepareStatement("SELECT id, payload FROM " + table
                     + " WHERE state = 'ready' ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED");
             PreparedStatement take = c.prepareStatement("UPDATE " + table + " SET state = 'running', owner = ?, claims = claims + 1,"
                     + " lease_until = CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000 AS BIGINT) + 30000 WHERE id = ?");
             PreparedStatement done = c.prepareStatement("UPDATE " + table + " SET state = 'done', owner = NULL, lease_until = NULL,"
                     + " settled_at = CAST(EXTRACT(EPOCH FROM clock_timestamp()) * 1000 AS BIGINT) WHERE id = ? AND owner = ?")) {
            c.setAutoCommit(false);
            while (!stop.get()) {
                long id = -1;
                String payload = "";
                try (ResultSet row = claimable.executeQuery()) {
                    if (row.next()) {
                        id = row.getLong(1);
                        payload = row.getString(2);
                    }
                }
                if (id < 0) {
                    c.commit();
                    Thread.sleep(PLAIN_POLL_MS);
                    continue;
                }
                take.setString(1, owner);
                take.setLong(2, id);
                take.executeUpdate();
                c.commit();
                started.add(System.nanoTime() - Long.parseLong(payload));
                done.setLong(1, id);
                done.setString(2, owner);
                done.executeUpdate();
                c.commit();
            }
        }
    }

    /** {@return for each kill, the time from the SIGKILL until another table has claimed the killed child's rows, in microseconds} */
    static long[] rescues(LocalPostgres postgres, String name, int kills) throws Exception {
        DataSource db = postgres.dataSource();
        ServiceWork.drop(db, name);
        JobTable.on(db).table(name).migrate();
        long[] micros = new long[kills];
        try (JobTable taker = JobTable.on(db).table(name).open()) {
            for (int k = 0; k < kills; k++) {
                taker.enqueue(held(HELD));
                Path log = Files.createTempFile("drain-rescue-child", ".txt");
                Process child = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "--enable-preview",
                        "-Xms64m", "-Xmx256m", "-cp", System.getProperty("java.class.path"), RescueChild.class.getName(),
                        postgres.jdbcUrl(), name, Integer.toString(HELD))
                        .redirectErrorStream(true).redirectOutput(log.toFile()).redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null"))).start();
                try {
                    long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
                    while (!Files.readString(log).contains("held")) {
                        if (!child.isAlive() || System.nanoTime() - until > 0) {
                            throw new IllegalStateException("the rescue child never held its rows: " + Files.readString(log));
                        }
                        Thread.sleep(5); // polling a file another process writes
                    }
                    String owner = ownerOf(db, name);
                    long killed = System.nanoTime();
                    child.destroyForcibly(); // SIGKILL
                    // watched on one kept connection (a claim's stream opens one of its own each time)
                    try (Connection c = db.getConnection(); PreparedStatement present = c.prepareStatement(PRESENT)) {
                        present.setString(1, owner);
                        while (true) {
                            try (ResultSet r = present.executeQuery()) {
                                if (r.next() && r.getLong(1) == 0) {
                                    break;
                                }
                            }
                            if (System.nanoTime() - killed > TimeUnit.SECONDS.toNanos(60)) {
                                throw new IllegalStateException("the killed child's presence outlived 60 s");
                            }
                            Thread.sleep(Duration.ofMillis(1)); // look again: the measure's resolution
                        }
                    }
                    micros[k] = (System.nanoTime() - killed) / 1_000; // claimable from here: a claim's own time is not the rescue's
                    List<Job> taken = new ArrayList<>();
                    try (Stream<Job> claims = taker.claims()) {
                        claims.forEach(taken::add);
                    }
                    if (taken.size() != HELD) {
                        throw new IllegalStateException("the claim after the kill took " + taken.size() + " rows, not " + HELD);
                    }
                    taker.settler().settle(taken.stream().<dev.drain.pool.Settlement<Job>>map(dev.drain.pool.Settlement.Succeeded::new).toList());
                } finally {
                    if (child.isAlive()) {
                        child.destroyForcibly();
                    }
                    child.waitFor(30, TimeUnit.SECONDS);
                    Files.deleteIfExists(log);
                }
            }
        }
        ServiceWork.drop(db, name);
        return micros;
    }

    /** How many advisory locks hold an owner's presence (JT-3, decision 0067): zero once its session is gone. */
    private static final String PRESENT = "SELECT count(*) FROM pg_locks l WHERE l.locktype = 'advisory' AND l.granted"
            + " AND l.objsubid = 2 AND l.classid = 1685217641 AND l.objid = (hashtext(?)::bigint & 4294967295)::oid";

    /** {@return the owner of {@code table}'s running rows} */
    private static String ownerOf(DataSource db, String table) throws Exception {
        try (Connection c = db.getConnection(); Statement s = c.createStatement();
             ResultSet r = s.executeQuery("SELECT owner FROM " + table + " WHERE state = 'running' LIMIT 1")) {
            if (!r.next()) {
                throw new IllegalStateException("the child holds no row of " + table);
            }
            return r.getString(1);
        }
    }

    /** {@return {@code n} payloads for the child to hold} */
    private static List<String> held(int n) {
        List<String> texts = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            texts.add("held " + i);
        }
        return texts;
    }
}
