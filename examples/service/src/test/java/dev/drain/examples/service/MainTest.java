package dev.drain.examples.service;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.drain.jobtable.JobState;
import dev.drain.jobtable.JobTable;
import dev.drain.lab.LocalPostgres;
import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The service, as a deploy sees it: {@code Main} in a JVM of its own over 3,000 jobs on a
 * PostgreSQL of the test's, SIGTERM once it has done 300, and then the table and the service's
 * witness file (each done job's id) must agree: every job done is {@code DONE} exactly once,
 * none is left {@code RUNNING}, none is lost, and the service exited by itself on the signal.
 */
class MainTest {
    private static final int JOBS = 3_000;

    @TempDir
    Path dir;

    @Test
    void aSigtermStopsTheServiceWithEveryDoneJobAcknowledged() throws Exception {
        try (LocalPostgres postgres = LocalPostgres.start()) {
            List<String> payloads = new ArrayList<>();
            for (int i = 0; i < JOBS; i++) {
                payloads.add(i % 100 == 42 ? "malformed " + i : "job " + i);
            }
            try (JobTable table = JobTable.on(postgres.dataSource()).table("service_jobs").open()) {
                table.enqueue(payloads);
            }
            Path witness = dir.resolve("done.txt");
            Files.createFile(witness);
            Path out = dir.resolve("out.txt");
            Process service = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                    "--enable-preview", "-Dservice.witness=" + witness, "-cp", classPath(), Main.class.getName(),
                    postgres.jdbcUrl())
                    .redirectErrorStream(true).redirectOutput(out.toFile())
                    .redirectInput(ProcessBuilder.Redirect.from(new File("/dev/null"))).start();
            try {
                long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
                while (Files.readAllLines(witness).size() < 300 && service.isAlive() && System.nanoTime() < until) {
                    Thread.sleep(20); // polling a file another process writes: no other way to be told
                }
                assertTrue(service.isAlive(), () -> "the service ended early: " + read(out));
                service.destroy(); // SIGTERM
                assertTrue(service.waitFor(Main.STOP_DEADLINE.toSeconds() + 10, TimeUnit.SECONDS),
                        "the service did not exit after SIGTERM");
            } finally {
                if (service.isAlive()) {
                    service.destroyForcibly().waitFor(30, TimeUnit.SECONDS);
                }
            }
            assertEquals(143, service.exitValue(), () -> "exit status after SIGTERM: " + read(out));
            assertTrue(read(out).contains("stopped after"), () -> "the service's epilogue: " + read(out));
            List<String> done = Files.readAllLines(witness);
            assertEquals(done.size(), new HashSet<>(done).size(), "a job was done twice");
            try (JobTable table = JobTable.on(postgres.dataSource()).table("service_jobs").open()) {
                Map<JobState, Long> counts = table.counts();
                assertEquals((long) done.size(), counts.getOrDefault(JobState.DONE, 0L), () -> "DONE, in " + counts);
                assertEquals(0L, counts.getOrDefault(JobState.RUNNING, 0L), () -> "RUNNING, in " + counts);
                assertEquals((long) JOBS, counts.values().stream().mapToLong(Long::longValue).sum(), () -> "jobs, in " + counts);
            }
        }
    }

    private static String classPath() {
        return System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
    }

    private static String read(Path file) {
        try {
            return Files.readString(file);
        } catch (java.io.IOException e) {
            return "(unreadable: " + e + ")";
        }
    }
}
