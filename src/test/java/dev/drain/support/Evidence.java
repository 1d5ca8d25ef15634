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

    synchronized Map<String, Long> statisticsCollected() {
        return new TreeMap<>(statistics);
    }
}
