package dev.drain.jobtable;

import java.util.Objects;

/**
 * One row of a job table as a claim handed it out (JT-2): which row, what it carries, and which
 * claim of the row this is. The claim number fences every write of the claimant (JT-5): once the
 * row's lease has expired and another claim has taken it, this one's settlement changes nothing.
 *
 * @param id the row's key
 * @param payload what the job carries, as it was enqueued
 * @param claim the row's claim counter after this claim (1 for the first)
 * @param attempts the attempts it had before this claim, as its deferred retries recorded them
 *     (JT-16): 0 for a job whose retry was never deferred; give {@code Job::attempts} to the pool's
 *     {@code priorAttempts}, so that its retry budget and backoff go on from there
 */
public record Job(long id, String payload, int claim, int attempts) {
    /** Checks the parts. */
    public Job {
        Objects.requireNonNull(payload, "payload");
        if (claim < 1) {
            throw new IllegalArgumentException("claim must be at least 1, not " + claim);
        }
        if (attempts < 0) {
            throw new IllegalArgumentException("attempts must not be negative, not " + attempts);
        }
    }

    /**
     * A job with no attempts before this claim.
     *
     * @param id the row's key
     * @param payload what the job carries
     * @param claim the row's claim counter after this claim
     */
    public Job(long id, String payload, int claim) {
        this(id, payload, claim, 0);
    }

    /** {@return "job ID (claim N)": the payload is the user's, and may be long or private} */
    @Override
    public String toString() {
        return "job " + id + " (claim " + claim + ")";
    }
}
