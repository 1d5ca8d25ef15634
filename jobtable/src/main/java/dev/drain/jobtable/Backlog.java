package dev.drain.jobtable;

/**
 * How many jobs a table has in each state, telling the ones a claim may take now from the ones
 * waiting for their time, and the live claims from the abandoned ones (JT-14): what a restart loop
 * or a dashboard asks ("is anything left to do?": {@link #unfinished()}). Read in one statement.
 *
 * @param due {@code READY} and due: a claim takes them now
 * @param scheduled {@code READY}, not due yet (JT-12)
 * @param running {@code RUNNING} under a lease that has not run out
 * @param expired {@code RUNNING} and abandoned: their lease has run out, or (PostgreSQL) their
 *     owner's session has ended; their claimant died or lost the database, and a claim takes them
 *     (JT-3)
 * @param done {@code DONE}
 * @param dead {@code DEAD}
 */
public record Backlog(long due, long scheduled, long running, long expired, long done, long dead) {
    /** {@return the jobs not yet done or dead: due, scheduled, running and expired} */
    public long unfinished() {
        return due + scheduled + running + expired;
    }

    @Override
    public String toString() {
        return "due " + due + ", scheduled " + scheduled + ", running " + running + " (+ " + expired + " abandoned), done "
                + done + ", dead " + dead;
    }
}
