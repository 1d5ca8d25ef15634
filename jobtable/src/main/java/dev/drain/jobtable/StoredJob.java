package dev.drain.jobtable;

import java.time.Instant;
import org.jspecify.annotations.Nullable;

/**
 * A job as its table keeps it, read by {@link QueueOperations#job(long)} to operate the queue (JT-14):
 * what it carries, where it is, and why it is dead if it is.
 *
 * @param id the row's key
 * @param payload what the job carries, as it was enqueued
 * @param state where it is
 * @param owner the table that holds it while it is {@code RUNNING}, else null
 * @param claims how many times it was claimed
 * @param lostLeases how many of its claimants died, or lost the database, before settling it (JT-3)
 * @param attempts the attempts recorded by its deferred retries and its failure (JT-16): 0 for a
 *     job that neither failed nor had a retry deferred
 * @param lastError the failure that made it {@code DEAD} (kept when it is requeued), else null
 * @param runAt no claim before this time (JT-12), or null for at once
 * @param settledAt when it was made {@code DONE} or {@code DEAD}, on the database's clock, else null
 */
public record StoredJob(long id, String payload, JobState state, @Nullable String owner, int claims, int lostLeases,
        int attempts, @Nullable String lastError, @Nullable Instant runAt, @Nullable Instant settledAt) {
    /** {@return "job ID (STATE, N claims, …)", with the last failure's first line if there is one; never the payload} */
    @Override
    public String toString() {
        StringBuilder s = new StringBuilder("job ").append(id).append(" (").append(state.name().toLowerCase(java.util.Locale.ROOT))
                .append(", ").append(claims).append(claims == 1 ? " claim" : " claims");
        if (attempts > 0 && state != JobState.DEAD) { // a dead job's failure says how many already
            s.append(", ").append(attempts).append(attempts == 1 ? " attempt" : " attempts");
        }
        if (lostLeases > 0) {
            s.append(", ").append(lostLeases).append(" lost leases");
        }
        if (runAt != null && state == JobState.READY) {
            s.append(", runs at ").append(runAt);
        }
        if (owner != null) {
            s.append(", held by ").append(owner);
        }
        s.append(')');
        if (lastError != null) {
            String firstLine = lastError.lines().findFirst().orElse("");
            s.append(": ").append(firstLine);
        }
        return s.toString();
    }
}
