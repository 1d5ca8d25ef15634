package dev.drain.bench;

import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.management.JMException;
import javax.management.ObjectName;
import org.openjdk.jmh.infra.Blackhole;

/**
 * Every object one {@link PeersBench} configuration allocates per item, by class: exact counts,
 * not samples. The JVM runs with the Epsilon collector, which never frees anything, so a class
 * histogram of the whole heap ({@code GC.class_histogram -all}) counts every object allocated
 * so far; the census takes one after a warm-up (so that the JIT has compiled what it will, and
 * elided what it can) and one after the measured runs, and divides the difference by the items
 * those runs handled. Not a JMH benchmark: JMH's {@code -prof gc} gives the bytes per item, this
 * says which objects they are. What a run makes per attempt is the same in every census; what a
 * park and a wake-up make (a queue's waiter, the scheduler's tasks) follows how often threads
 * wait, which changes with the machine's load: compare totals only within one quiet session.
 *
 * <pre>
 *   java --enable-preview -XX:+UnlockExperimentalVMOptions -XX:+UseEpsilonGC -Xms14g -Xmx14g \
 *       -cp benchmarks/target/benchmarks.jar dev.drain.bench.AllocationCensus peer handler workers [warm-up runs] [runs]
 * </pre>
 *
 * ({@code benchmarks/run census peer handler workers} does that). The heap must hold every
 * object of all the runs: about 1.5 KB per item, so the defaults (200 and 50 runs of 10,000
 * no-op items) need 4 GB; a sleeping handler runs {@code workers × 4} items per run.
 */
public final class AllocationCensus {
    /** A line of the histogram: rank, instances, bytes, class name. */
    private static final Pattern LINE = Pattern.compile("\\s*\\d+:\\s+(\\d+)\\s+(\\d+)\\s+(\\S+).*");
    /** Classes below this many bytes per item are summed into one line. */
    private static final double SHOWN_BYTES = 1.0;

    private AllocationCensus() {}

    /** Instances and bytes of one class. */
    private record Count(long instances, long bytes) {}

    public static void main(String[] args) throws Exception {
        if (args.length < 3) {
            System.err.println("usage: AllocationCensus peer handler workers [warm-up runs] [runs]");
            System.exit(2);
        }
        PeersBench bench = new PeersBench();
        bench.peer = args[0];
        bench.handler = args[1];
        bench.workers = Integer.parseInt(args[2]);
        int warmUp = args.length > 3 ? Integer.parseInt(args[3]) : 200;
        int runs = args.length > 4 ? Integer.parseInt(args[4]) : 50;
        bench.setUp();
        Blackhole blackhole = new Blackhole(
                "Today's password is swordfish. I understand instantiating Blackholes directly is dangerous.");
        PoolBench.Items items = new PoolBench.Items();
        for (int i = 0; i < warmUp; i++) {
            bench.run(items, blackhole);
        }
        Map<String, Count> before = histogram();
        items.items = 0;
        for (int i = 0; i < runs; i++) {
            bench.run(items, blackhole);
        }
        Map<String, Count> after = histogram();
        print(args, before, after, items.items);
    }

    private static void print(String[] args, Map<String, Count> before, Map<String, Count> after, long items) {
        record PerItem(String type, double instances, double bytes) {}
        List<PerItem> rows = new ArrayList<>();
        after.forEach((type, count) -> {
            Count was = before.getOrDefault(type, new Count(0, 0));
            long bytes = count.bytes() - was.bytes();
            if (bytes > 0) {
                rows.add(new PerItem(type, (double) (count.instances() - was.instances()) / items, (double) bytes / items));
            }
        });
        rows.sort((a, b) -> Double.compare(b.bytes(), a.bytes()));
        double total = rows.stream().mapToDouble(PerItem::bytes).sum();
        System.out.printf(Locale.ROOT, "%s, %s handler, %s workers: %,.0f bytes per item over %,d items%n",
                args[0], args[1], args[2], total, items);
        double rest = 0;
        for (PerItem row : rows) {
            if (row.bytes() >= SHOWN_BYTES) {
                System.out.printf(Locale.ROOT, "%8.1f B  %5.2f ×  %s%n", row.bytes(), row.instances(), row.type());
            } else {
                rest += row.bytes();
            }
        }
        System.out.printf(Locale.ROOT, "%8.1f B          (classes under %.0f B each)%n", rest, SHOWN_BYTES);
    }

    /** {@return the whole heap's class histogram, unreachable objects included} */
    private static Map<String, Count> histogram() throws JMException {
        String text = (String) ManagementFactory.getPlatformMBeanServer().invoke(
                new ObjectName("com.sun.management:type=DiagnosticCommand"), "gcClassHistogram",
                new Object[] {new String[] {"-all"}}, new String[] {String[].class.getName()});
        Map<String, Count> counts = new HashMap<>();
        for (String line : text.split("\n")) {
            Matcher m = LINE.matcher(line);
            if (m.matches()) {
                counts.merge(m.group(3), new Count(Long.parseLong(m.group(1)), Long.parseLong(m.group(2))),
                        (a, b) -> new Count(a.instances() + b.instances(), a.bytes() + b.bytes()));
            }
        }
        return counts;
    }
}
