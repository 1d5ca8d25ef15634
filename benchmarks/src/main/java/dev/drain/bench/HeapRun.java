package dev.drain.bench;

import dev.drain.pool.MetricsSink;
import dev.drain.pool.PoolStats;
import dev.drain.pool.Results;
import dev.drain.pool.WorkerPool;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.NoSuchElementException;
import java.util.concurrent.atomic.LongAdder;

/**
 * Target 5, the heap: ten million items through one {@code WorkerPool} run at 1,024 workers
 * (no-op handler, a metrics sink on, the default intake), and the heap in use after a full GC,
 * sampled by the consumer every tenth of the run. A pool that kept anything per item (a list of
 * results, a map of contexts, an event log) would show it here as a heap that grows with the
 * items; an exact ledger keeps counters for the items that succeed and lists only for those that
 * fail or are dropped, so the heap must stay flat. Not a JMH benchmark: one long run, its own JVM.
 *
 * <pre>
 *   java --enable-preview -Xms1g -Xmx1g -cp benchmarks/target/benchmarks.jar dev.drain.bench.HeapRun \
 *       [items] [workers] [output.json]
 * </pre>
 *
 * (benchmarks/run heap does that). It prints one line per sample and writes them as JSON; its
 * exit status is 1 if the last sample is more than {@value #SLACK_MIB} MiB above the first.
 */
public final class HeapRun {
    /** How much the heap after GC may differ between the first and the last sample: GC noise, not growth. */
    static final int SLACK_MIB = 8;

    private HeapRun() {}

    /** One sample: items delivered so far, heap used after a full GC, seconds since the start. */
    record Sample(long delivered, double heapMib, double seconds) {}

    public static void main(String[] args) throws IOException {
        long items = args.length > 0 ? Long.parseLong(args[0]) : 10_000_000L;
        int workers = args.length > 1 ? Integer.parseInt(args[1]) : 1024;
        Path output = Path.of(args.length > 2 ? args[2] : "benchmarks/results/heap.json");
        long every = Math.max(1, items / 10);

        LongAdder metricChars = new LongAdder();
        MetricsSink sink = (event, detail) -> metricChars.add(event.id().length() + detail.length());
        WorkerPool<Integer, Integer> pool = WorkerPool.<Integer, Integer>builder(item -> item)
                .workers(workers)
                .queueSize(16)
                .itemTimeout(Duration.ofSeconds(30))
                .metrics(sink)
                .name("heap")
                .build();

        List<Sample> samples = new ArrayList<>();
        long start = System.nanoTime();
        samples.add(sample(0, start));
        long delivered = 0;
        PoolStats stats;
        try (Results<Integer, Integer> results = pool.run(counting(items))) {
            while (results.hasNext()) {
                results.next();
                delivered++;
                if (delivered % every == 0) {
                    samples.add(sample(delivered, start));
                    Sample s = samples.getLast();
                    System.out.printf(Locale.ROOT, "heap: %,d items, %.1f MiB after GC, %.1f s%n", s.delivered(),
                            s.heapMib(), s.seconds());
                }
            }
            stats = results.stats();
        }
        if (delivered != items || stats.succeeded() != items) {
            throw new IllegalStateException("delivered " + delivered + ", succeeded " + stats.succeeded() + " of " + items);
        }
        // The first sample after the pool has warmed up (its threads started, the JIT done) is the
        // reference: the empty heap before the run has none of the run's steady state in it.
        Sample reference = samples.get(1);
        Sample last = samples.getLast();
        double growth = last.heapMib() - reference.heapMib();
        String json = json(items, workers, samples, growth, Runtime.version().toString());
        Files.createDirectories(output.toAbsolutePath().getParent());
        Files.writeString(output, json);
        System.out.printf(Locale.ROOT, "heap: %,d items at %d workers in %.1f s; heap after GC %.1f MiB at %,d items, "
                + "%.1f MiB at %,d (%+.1f MiB); written to %s%n", items, workers, last.seconds(), reference.heapMib(),
                reference.delivered(), last.heapMib(), last.delivered(), growth, output);
        if (growth > SLACK_MIB) {
            System.out.printf(Locale.ROOT, "heap: GROWS by %.1f MiB over the run%n", growth);
            System.exit(1);
        }
    }

    /** A source of {@code n} items that holds none of them: each is a cached small {@code Integer}. */
    private static Iterator<Integer> counting(long n) {
        return new Iterator<>() {
            private long next;

            @Override
            public boolean hasNext() {
                return next < n;
            }

            @Override
            public Integer next() {
                if (next >= n) {
                    throw new NoSuchElementException();
                }
                return (int) (next++ % 100);
            }
        };
    }

    private static Sample sample(long delivered, long start) {
        MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
        System.gc();
        System.gc();
        double mib = memory.getHeapMemoryUsage().getUsed() / (1024.0 * 1024.0);
        return new Sample(delivered, mib, (System.nanoTime() - start) / 1e9);
    }

    private static String json(long items, int workers, List<Sample> samples, double growth, String jdk) {
        StringBuilder out = new StringBuilder();
        out.append(String.format(Locale.ROOT, "{%n  \"items\": %d,%n  \"workers\": %d,%n  \"jdk\": \"%s\",%n"
                + "  \"growth_mib\": %.2f,%n  \"slack_mib\": %d,%n  \"samples\": [%n", items, workers, jdk, growth, SLACK_MIB));
        for (int i = 0; i < samples.size(); i++) {
            Sample s = samples.get(i);
            out.append(String.format(Locale.ROOT, "    {\"delivered\": %d, \"heap_mib\": %.2f, \"seconds\": %.2f}%s%n",
                    s.delivered(), s.heapMib(), s.seconds(), i + 1 < samples.size() ? "," : ""));
        }
        return out.append("  ]\n}\n").toString();
    }
}
