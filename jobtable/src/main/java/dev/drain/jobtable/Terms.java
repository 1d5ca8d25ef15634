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
 * @param pollInterval how long a stream that waits for work waits at most before it claims again (JT-13)
 */
record Terms(String owner, Duration lease, int claimBatch, int maxLostLeases, Duration pollInterval) {
    /**
     * {@return the lost leases from which a ready row is a suspect (JT-3)}: its next lost lease
     * would bury it. With {@code maxLostLeases} 1 no row is (each first loss buries, and holding
     * every row alone would be the only way to spare the innocent ones).
     */
    int suspectWhenReady() {
        return maxLostLeases > 1 ? maxLostLeases - 1 : Integer.MAX_VALUE;
    }

    /** {@return the lost leases from which a running row whose lease ran out is a suspect}: taking it counts one more (JT-3). */
    int suspectWhenExpired() {
        return maxLostLeases > 1 ? maxLostLeases - 2 : Integer.MAX_VALUE;
    }
}
