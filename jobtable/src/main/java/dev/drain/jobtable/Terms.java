package dev.drain.jobtable;

import java.time.Duration;

/**
 * The terms on which a table claims rows, fixed when it is opened: whose claims they are, how
 * long a lease lasts, how many rows a claim takes, and how many leases a row may lose before it
 * is dead-lettered (JT-2, JT-3, JT-4). Immutable; read by every thread of the table.
 *
 * @param owner the name written into the rows this table claims, and that fences its writes (JT-5)
 * @param lease how long a claim holds a row without a renewal
 * @param claimBatch how many rows a claim takes at most
 * @param maxLostLeases how many leases a row may lose before it is dead-lettered instead of claimed
 */
record Terms(String owner, Duration lease, int claimBatch, int maxLostLeases) {}
