package dev.drain.support;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.TreeMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.jspecify.annotations.Nullable;

/**
 * What one property, trace or stress test measured, for {@code target/property-report.md}: the
 * property in one sentence, the spec clauses it checks, how many tries (or scenarios) it ran, the
 * seed, the statistics it collected, and the coverage floors it checked (tests that draw the same
 * workloads say so, and the report prints those once). A test receives one as a parameter when its
 * class is extended with {@link PropertyReport}; invocations of a parameterized test add to the
 * same entry. Safe to use from several threads.
 */
public final class Evidence {
    private @Nullable String property;
    private final List<String> clauses = new ArrayList<>();
    private @Nullable String seed;
    private long tries;
    private long requested;
    private @Nullable String fewerBecause;
    private final Map<String, String> rerun = new LinkedHashMap<>();
    private final Set<String> varying = new HashSet<>();
    private final Map<String, Long> statistics = new LinkedHashMap<>();
    private final Map<String, Long> observed = new LinkedHashMap<>();
    private @Nullable String workloads;
    private final List<Floor> floors = new ArrayList<>();

    /**
     * A coverage floor: one cell of a table of combinations the generator must produce, with the
     * runs it needs and the runs it got.
     *
     * @param table what the table's rows are, for example {@code fault site × ending}
     * @param row the row, for example {@code handler × abort}
     * @param column the column, for example an intake
     * @param needed the runs the floor asks for
     * @param ran the runs there were
     */
    public record Floor(String table, String row, String column, long needed, long ran) {
        /** {@return whether there were as many runs as the floor asks for} */
        public boolean met() {
            return ran >= needed;
        }
    }

    /** Sets the property this test checks, in one sentence; returns this. */
    public synchronized Evidence property(String sentence, String... clauseIds) {
        this.property = sentence;
        for (String id : clauseIds) {
            if (!clauses.contains(id)) {
                clauses.add(id);
            }
        }
        return this;
    }

    /** Records the seed that reproduces the run; returns this. */
    public synchronized Evidence seed(Object seed) {
        this.seed = String.valueOf(seed);
        return this;
    }

    /**
     * Adds {@code n} to the tries this test asks for (generated cases, scenarios, rounds), to be
     * set beside the tries it ran; returns this.
     */
    public synchronized Evidence requested(long n) {
        requested += n;
        return this;
    }

    /**
     * Names a system property, and its value in this run, that the command to rerun this test
     * alone must set to reproduce it (a seed, a number of examples, a factor); returns this. If
     * invocations of the test name it with different values, which only their defaults can give,
     * the command leaves it out, and the defaults reproduce each.
     */
    public synchronized Evidence rerunWith(String property, Object value) {
        String previous = rerun.putIfAbsent(property, String.valueOf(value));
        if (previous != null && !previous.equals(String.valueOf(value))) {
            // Invocations that differ (one parameterized test's defaults, 300 tries here and 100
            // there) are reproduced by the defaults, never by one value that would set both.
            varying.add(property);
        }
        return this;
    }

    /** Says why this test may run fewer tries than it asks for, when that is its design; returns this. */
    public synchronized Evidence fewerBecause(String reason) {
        this.fewerBecause = reason;
        return this;
    }

    /** Adds {@code n} tries (generated cases, scenarios, rounds); returns this. */
    public synchronized Evidence tries(long n) {
        tries += n;
        return this;
    }

    /** Adds {@code n} to the statistic {@code name} (for example "immediate shutdowns"); returns this. */
    public synchronized Evidence count(String name, long n) {
        statistics.merge(name, n, Long::sum);
        return this;
    }

    /**
     * Says that this test's statistics and floors are those of the workloads {@code name}, which
     * other tests draw too (the same generator, seed and number of tries): the report prints them
     * once, and each test that drew them refers to them; returns this.
     */
    public synchronized Evidence sharedWorkloads(String name) {
        this.workloads = name;
        return this;
    }

    /** Records a coverage floor (see {@link Floor}) and whether it was met; returns this. */
    public synchronized Evidence floor(String table, String row, String column, long needed, long ran) {
        floors.add(new Floor(table, row, column, needed, ran));
        return this;
    }

    synchronized @Nullable String workloadsName() {
        return workloads;
    }

    synchronized List<Floor> floorsRecorded() {
        return List.copyOf(floors);
    }

    /**
     * Adds {@code n} to the statistic {@code name}, one the threads' timing decides (how a run
     * ended, how many calls were blocked) rather than the seed: the report prints these apart, as
     * a rerun with the same seed may count them differently; returns this.
     */
    public synchronized Evidence observed(String name, long n) {
        observed.merge(name, n, Long::sum);
        return this;
    }

    synchronized Map<String, Long> observedCollected() {
        return new TreeMap<>(observed);
    }

    synchronized @Nullable String propertyText() {
        return property;
    }

    synchronized List<String> clauseIds() {
        return List.copyOf(clauses);
    }

    synchronized @Nullable String seedText() {
        return seed;
    }

    synchronized long triesRun() {
        return tries;
    }

    synchronized long triesRequested() {
        return requested;
    }

    synchronized @Nullable String fewerReason() {
        return fewerBecause;
    }

    /** The system properties a rerun sets, but those whose values differed between invocations. */
    synchronized Map<String, String> rerunProperties() {
        Map<String, String> properties = new LinkedHashMap<>(rerun);
        properties.keySet().removeAll(varying);
        return properties;
    }

    synchronized Map<String, Long> statisticsCollected() {
        return new TreeMap<>(statistics);
    }
}
