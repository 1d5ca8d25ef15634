package dev.drain.support;

import dev.drain.pool.Backoff;
import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.IntFunction;

/**
 * A backend a handler calls, which goes down once, for a set time, as soon as a set number of
 * calls have succeeded: every call in the outage throws an {@link IOException}, every call before
 * and after it succeeds. For the proofs that a run with a backoff rides out an outage instead of
 * dead-lettering the work that would succeed once the backend is back (WP-28, WP-23).
 */
public final class Outage {
    /**
     * The retries' backoff that {@link Backoff}'s javadoc recommends to ride out an outage (with
     * eight retries): exponential from 1 s to 30 s.
     */
    public static final Backoff RECOMMENDED = Backoff.exponential(Duration.ofSeconds(1), Duration.ofSeconds(30));

    private final int upFor;
    private final long downNanos;
    /** Guarded by {@code this}: the calls that succeeded before the outage. */
    private int succeededBefore;
    /** Guarded by {@code this}: when the outage began ({@link System#nanoTime()}), once it has. */
    private long downAt;
    /** Guarded by {@code this}: whether the outage has begun. */
    private boolean wentDown;
    /** Guarded by {@code this}: the calls the outage refused. */
    private int refused;
    /** Guarded by {@code this}: when each call about a thing was made ({@link System#nanoTime()}), by what it was about. */
    private final Map<String, List<Long>> calls = new HashMap<>();

    /**
     * @param upFor how many calls succeed before the backend goes down
     * @param down how long it stays down
     */
    public Outage(int upFor, Duration down) {
        this.upFor = upFor;
        this.downNanos = down.toNanos();
    }

    /**
     * One call to the backend.
     *
     * @param what what the call is about, for the exception's message
     * @throws IOException if the backend is down
     */
    public synchronized void call(String what) throws IOException {
        calls.computeIfAbsent(what, w -> new ArrayList<>()).add(System.nanoTime());
        if (!wentDown) {
            if (++succeededBefore == upFor) {
                wentDown = true;
                downAt = System.nanoTime();
            }
            return;
        }
        if (System.nanoTime() - downAt < downNanos) {
            refused++;
            throw new IOException("the backend is down (" + what + ")");
        }
    }

    /** {@return how many calls the outage refused} */
    public synchronized int refused() {
        return refused;
    }

    /**
     * {@return the calls made sooner after the previous call about the same thing than
     * {@code floor} allows, one line each} Call {@code n + 1} about a thing is retry {@code n}: it
     * must come at least {@code floor.apply(n)} after call {@code n}.
     *
     * @param floor the shortest wait before retry {@code n} (from 1)
     */
    public synchronized List<String> callsSoonerThan(IntFunction<Duration> floor) {
        List<String> early = new ArrayList<>();
        calls.forEach((what, at) -> {
            for (int n = 1; n < at.size(); n++) {
                long gap = at.get(n) - at.get(n - 1);
                if (gap < floor.apply(n).toNanos()) {
                    early.add(what + ": retry " + n + " " + Duration.ofNanos(gap) + " after the call before it, sooner than "
                            + floor.apply(n));
                }
            }
        });
        return early;
    }

    /** {@return the shortest wait {@link #RECOMMENDED} allows before retry {@code n}: half of min(30 s, 1 s x 2^(n-1))} */
    public static Duration recommendedFloor(int n) {
        return Duration.ofMillis(Math.min(30_000, 1_000L << Math.min(n - 1, 20)) / 2);
    }

    /** {@return how many calls were retries: calls about a thing after its first} */
    public synchronized int retries() {
        return calls.values().stream().mapToInt(at -> at.size() - 1).sum();
    }

    /** {@return whether the outage has begun} */
    public synchronized boolean wentDown() {
        return wentDown;
    }
}
