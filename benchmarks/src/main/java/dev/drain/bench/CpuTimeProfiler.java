package dev.drain.bench;

import java.lang.management.ManagementFactory;
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
 * {@code -prof dev.drain.bench.CpuTimeProfiler}: the CPU time the benchmark's JVM used per
 * operation ({@code cpu.time.norm}, ns/op), every thread of the process counted (the benchmark's,
 * the carriers of its virtual threads, the JIT and the GC), from the process CPU time before and
 * after each iteration. On a machine shared with other work, wall time per operation grows with
 * the others' load; CPU time per operation much less, so it says what an operation costs even
 * when the wall-clock figures are noisy.
 */
public final class CpuTimeProfiler implements InternalProfiler {
    private long cpuBefore;

    /** {@return this JVM's CPU time so far, every thread counted, in ns; -1 where the JDK does not say} */
    static long processCpuNanos() {
        if (ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean os) {
            return os.getProcessCpuTime();
        }
        return -1;
    }

    @Override
    public String getDescription() {
        return "CPU time of the whole JVM per operation";
    }

    @Override
    public void beforeIteration(BenchmarkParams benchmarkParams, IterationParams iterationParams) {
        cpuBefore = processCpuNanos();
    }

    @Override
    public Collection<? extends Result<?>> afterIteration(BenchmarkParams benchmarkParams, IterationParams iterationParams,
                                                          IterationResult result) {
        long cpuAfter = processCpuNanos();
        long ops = result.getMetadata().getAllOps();
        if (cpuBefore < 0 || cpuAfter < 0 || ops <= 0) {
            return List.of();
        }
        double perOp = (double) (cpuAfter - cpuBefore) / ops;
        return List.of(new ScalarResult("cpu.time.norm", perOp, "ns/op", AggregationPolicy.AVG));
    }
}
