package dev.drain.jobtable;

/** The states of a job table's row (JT-1). */
public enum JobState {
    /** Waiting for a claim. */
    READY,
    /** Claimed: an owner holds it under a lease, and its claim number fences the owner's writes. */
    RUNNING,
    /** Succeeded and acknowledged: never claimed again. */
    DONE,
    /** Failed for good (or lost too many leases), its failure kept: never claimed again. */
    DEAD
}
