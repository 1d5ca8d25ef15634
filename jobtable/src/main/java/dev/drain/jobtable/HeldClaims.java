package dev.drain.jobtable;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import dev.drain.pool.Settlement;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantLock;
import org.jspecify.annotations.Nullable;

/**
 * The claims a table holds and has not settled or released: the only rows it renews (JT-4). A
 * claim leaves when its settlement or release is written, and also when that write fails, so
 * that its lease runs out and the next claim gets the row (JT-7).
 *
 * <p>It also keeps the table to one suspect at a time (JT-3): a row whose next lost lease would
 * bury it is taken by a claim only while the table holds no other, so that a process that dies
 * holding a suspect buries only that one, never the rows claimed beside it.
 *
 * <p>The held set is shared without a lock (a concurrent set): a stream's statements thread adds
 * what a claim took; the settler's thread, and a stream's statements thread for its releases,
 * remove what they wrote or failed to write; the lease renewer reads it once per renewal. The
 * suspect is under {@link #lock}: a claim reserves the right to take one and then takes it or
 * gives the right back (a statements thread), and a write that removes it clears it (the settler's or
 * a statements thread), which signals the table's streams that wait for work.
 */
final class HeldClaims {
    /** Claimed, not yet settled or released; a concurrent set, written and read by the threads above. */
    private final Set<Job> held = ConcurrentHashMap.newKeySet();
    /** Told when the table may take a suspect again: the table's {@link WorkSignal}. */
    private final Runnable suspectPlaceFree;
    private final ReentrantLock lock = new ReentrantLock();
    /** The suspect held: claimed, not yet settled or released. */
    @GuardedBy("lock")
    private @Nullable Job suspect;
    /** A claim under way may take a suspect: set by {@link #reserveSuspect}, cleared by {@link #took}. */
    @GuardedBy("lock")
    private boolean reserved;

    /** @param suspectPlaceFree told, under this object's lock, when the table may take a suspect again; it takes only the WorkSignal's lock, a leaf */
    HeldClaims(Runnable suspectPlaceFree) {
        this.suspectPlaceFree = suspectPlaceFree;
    }

    /**
     * Reserves, for the claim about to run, the right to take one suspect. {@return whether it was
     * reserved} (false while a suspect is held, or another claim has the right); a claim that
     * reserved it ends with {@link #took}, whatever it took, or {@link #giveBack} if it failed.
     */
    boolean reserveSuspect() {
        lock.lock();
        try {
            if (suspect != null || reserved) {
                return false; // a claim refused while another one reserved finds a suspect at its next claim
            }
            reserved = true;
            return true;
        } finally {
            lock.unlock();
        }
    }

    /**
     * Holds what a claim took, {@code taken} the suspect among them if there is one; on a stream's
     * statements thread, after the claim's commit. Ends the claim's reservation, if it had one.
     */
    void took(List<Job> claimed, @Nullable Job taken, boolean hadReserved) {
        held.addAll(claimed);
        if (hadReserved) {
            lock.lock();
            try {
                reserved = false;
                suspect = taken; // no signal when none was taken: the waiting streams would all claim again at once
            } finally {
                lock.unlock();
            }
        }
    }

    /** Gives back a reservation whose claim failed: nothing was taken. */
    void giveBack() {
        took(List.of(), null, true);
    }

    /**
     * Stops renewing the rows of {@code batch}, settled or not: a row whose settlement failed keeps
     * its claim until the lease runs out, and then the next claim gets it (JT-7). A suspect among
     * them is no longer held, and a claim may take the next one.
     */
    void forget(List<Settlement<Job>> batch) {
        for (Settlement<Job> settlement : batch) {
            held.remove(settlement.item());
        }
        lock.lock();
        try {
            Job s = suspect;
            if (s != null && batch.stream().anyMatch(settlement -> settlement.item().equals(s))) {
                suspect = null;
                suspectPlaceFree.run();
            }
        } finally {
            lock.unlock();
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
