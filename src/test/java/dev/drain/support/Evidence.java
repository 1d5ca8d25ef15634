package dev.drain.support;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.TreeMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;

/**
 * What one property, trace or stress test measured, for {@code target/property-report.md}: the
 * property in one sentence, the spec clauses it checks, how many tries (or scenarios) it ran, the
 * seed, and the statistics it collected. A test receives one as a parameter when its class is
 * extended with {@link PropertyReport}; invocations of a parameterized test add to the same
 * entry. Safe to use from several threads.
 */
public final class Evidence {
    private @Nullable String property;
    private final List<String> clauses = new ArrayList<>();
    private @Nullable String seed;
    private long tries;
    private long requested;
    private @Nullable String fewerBecause;
    private final Map<String, String> rerun = new LinkedHashMap<>();
    private final Map<String, Long> statistics = new LinkedHashMap<>();

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
     * alone must set to reproduce it (a seed, a number of examples, a factor); returns this.
     */
    public synchronized Evidence rerunWith(String property, Object value) {
        rerun.put(property, String.valueOf(value));
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

    synchronized Map<String, String> rerunProperties() {
        return new LinkedHashMap<>(rerun);
    }

    synchronized Map<String, Long> statisticsCollected() {
        return new TreeMap<>(statistics);
    }
}
