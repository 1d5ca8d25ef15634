package dev.drain.jobtable;

import dev.drain.pool.Settlement;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The claims a table holds and has not settled or released: the only rows it renews (JT-4). A
 * claim leaves when its settlement or release is written, and also when that write fails, so
 * that its lease runs out and the next claim gets the row (JT-7).
 *
 * <p>Shared without a lock of its own (a concurrent set): a stream's statements thread adds what a
 * claim took; the settler's thread, and a stream's statements thread for its releases, remove
 * what they wrote or failed to write; the lease renewer reads it once per renewal.
 */
final class HeldClaims {
    /** Claimed, not yet settled or released; a concurrent set, written and read by the threads above. */
    private final Set<Job> held = ConcurrentHashMap.newKeySet();

    /** Holds what a claim took; on a stream's statements thread, after the claim's commit. */
    void took(List<Job> claimed) {
        held.addAll(claimed);
    }

    /**
     * Stops renewing the rows of {@code batch}, settled or not: a row whose settlement failed keeps
     * its claim until the lease runs out, and then the next claim gets it (JT-7).
     */
    void forget(List<Settlement<Job>> batch) {
        for (Settlement<Job> settlement : batch) {
            held.remove(settlement.item());
        }
    }

    /** {@return the claim number of every row held, by id: a copy, for one renewal} */
    Map<Long, Integer> claimsById() {
        Map<Long, Integer> holding = new HashMap<>();
        for (Job job : held) {
            holding.put(job.id(), job.claim());
        }
        return holding;
    }
}
