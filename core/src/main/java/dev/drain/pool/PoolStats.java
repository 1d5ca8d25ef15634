package dev.drain.pool;

/**
 * A snapshot of a run's counters, from {@link Results#stats()}; every count is since the run
 * started, and the snapshot is consistent: it is taken under the lock every fate is recorded
 * under. At the end, {@code pulled == succeeded + failed + discarded + cancelled + deferred}.
 *
 * @param pulled items taken from the source
 * @param accepted items the producer pulled and handed to the intake, the one it holds while it
 *     waits for room included (each is then a worker's, or an abort drops it)
 * @param inFlight items a worker is handling right now, between attempts included, and items parked
 *     in the retry room waiting for their next attempt (WP-28)
 * @param succeeded items whose handler produced a result
 * @param delivered results the consumer has received from {@link Results#next()}; at a normal end,
 *     all of them
 * @param failed items that failed permanently, every one (an outcome of a run that goes on past
 *     its failures lists only the first few, WP-23)
 * @param retried retries made in this run (attempts after the item's first here); a deferral
 *     (WP-29) is not one: the store makes that retry
 * @param timedOut attempts that outlived {@code itemTimeout}
 * @param escalations interrupts beyond the first sent to attempts that would not stop
 * @param discarded items dropped unhandled by an abort or an abandoned run
 * @param cancelled items whose attempts an abort or an abandoned run cancelled
 * @param deferred items whose retry was handed to the store, due later than the pool keeps one (WP-29)
 * @param currentLead pulled minus settled (succeeded, failed, discarded, cancelled, deferred) now
 * @param maxLead the largest lead seen; at most {@code queueSize + workers + 1}
 * @param metricsRaised calls to the metrics sink that threw
 * @param liveThreads threads the pool has started that have not finished
 */
public record PoolStats(long pulled, long accepted, long inFlight, long succeeded, long delivered, long failed,
                        long retried, long timedOut, long escalations, long discarded, long cancelled, long deferred,
                        long currentLead, long maxLead, long metricsRaised, int liveThreads) {}
