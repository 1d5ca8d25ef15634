package dev.drain.bench;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collection;
import java.util.List;
import org.openjdk.jmh.infra.BenchmarkParams;
import org.openjdk.jmh.infra.IterationParams;
import org.openjdk.jmh.profile.InternalProfiler;
import org.openjdk.jmh.results.AggregationPolicy;
import org.openjdk.jmh.results.IterationResult;
import org.openjdk.jmh.results.Result;
import org.openjdk.jmh.results.ScalarResult;

/**
 * {@code -prof dev.drain.bench.MachineCpuProfiler}: where the machine's CPU went during each
 * iteration, in cores (CPU seconds per second of the iteration), from Linux's {@code /proc}:
 * <ul>
 *   <li>{@code cpu.machine}: every core's busy time ({@code /proc/stat}: all but idle and
 *       iowait), of every process;</li>
 *   <li>{@code cpu.jvm}: this JVM's (every thread: the benchmark's, the carriers, the JIT, the GC);</li>
 *   <li>{@code cpu.postgres}: every process named {@code postgres} (the server and its backends;
 *       a backend that exited is counted in its parent's reaped-children time);</li>
 *   <li>{@code cpu.others}: the rest, what other work on the machine took.</li>
 * </ul>
 * Divided by the benchmark's rate, each is the CPU one operation (or one job) costs on that side:
 * what says whether a database benchmark is bound by the engine, by the JVM, or by the machine.
 * Off Linux it reports nothing.
 */
public final class MachineCpuProfiler implements InternalProfiler {
    /** Linux's {@code USER_HZ}: the unit of {@code /proc}'s times, 100 on every mainstream build. */
    private static final double TICKS_PER_SECOND = 100;

    private long wallBefore;
    private long jvmBefore;
    private long machineBefore = -1;
    private long postgresBefore = -1;

    @Override
    public String getDescription() {
        return "CPU of the machine, this JVM and PostgreSQL's processes per iteration, in cores";
    }

    @Override
    public void beforeIteration(BenchmarkParams benchmarkParams, IterationParams iterationParams) {
        machineBefore = machineBusyTicks();
        postgresBefore = postgresTicks();
        jvmBefore = CpuTimeProfiler.processCpuNanos();
        wallBefore = System.nanoTime();
    }

    @Override
    public Collection<? extends Result<?>> afterIteration(BenchmarkParams benchmarkParams, IterationParams iterationParams,
                                                          IterationResult result) {
        double seconds = (System.nanoTime() - wallBefore) / 1e9;
        long jvmAfter = CpuTimeProfiler.processCpuNanos();
        long machineAfter = machineBusyTicks();
        long postgresAfter = postgresTicks();
        if (machineBefore < 0 || machineAfter < 0 || postgresBefore < 0 || postgresAfter < 0 || jvmBefore < 0 || seconds <= 0) {
            return List.of();
        }
        double machine = (machineAfter - machineBefore) / TICKS_PER_SECOND / seconds;
        double jvm = (jvmAfter - jvmBefore) / 1e9 / seconds;
        double postgres = (postgresAfter - postgresBefore) / TICKS_PER_SECOND / seconds;
        return List.of(cores("cpu.machine", machine), cores("cpu.jvm", jvm), cores("cpu.postgres", postgres),
                cores("cpu.others", Math.max(0, machine - jvm - postgres)));
    }

    private static ScalarResult cores(String name, double value) {
        return new ScalarResult(name, value, "cores", AggregationPolicy.AVG);
    }

    /** {@return the busy ticks of all cores since boot, or -1 off Linux} */
    private static long machineBusyTicks() {
        try {
            String[] f = Files.readAllLines(Path.of("/proc/stat")).getFirst().trim().split("\\s+");
            long busy = 0;
            for (int i = 1; i < f.length && i <= 8; i++) { // user nice system idle iowait irq softirq steal
                if (i != 4 && i != 5) {
                    busy += Long.parseLong(f[i]);
                }
            }
            return busy;
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }

    /**
     * {@return the user and system ticks of every process named {@code postgres}, with the
     * children each has reaped, or -1 off Linux}
     */
    private static long postgresTicks() {
        long ticks = 0;
        try (DirectoryStream<Path> processes = Files.newDirectoryStream(Path.of("/proc"), "[0-9]*")) {
            for (Path process : processes) {
                String stat;
                try {
                    stat = Files.readString(process.resolve("stat"));
                } catch (IOException gone) {
                    continue; // it exited between the listing and the read: its parent counts it once reaped
                }
                int open = stat.indexOf('(');
                int close = stat.lastIndexOf(')');
                if (open < 0 || close < open || !stat.substring(open + 1, close).equals("postgres")) {
                    continue;
                }
                String[] f = stat.substring(close + 2).split(" "); // f[0] is field 3, the state
                ticks += Long.parseLong(f[11]) + Long.parseLong(f[12]) + Long.parseLong(f[13]) + Long.parseLong(f[14]);
            }
        } catch (IOException | RuntimeException e) {
            return -1;
        }
        return ticks;
    }
}
