/**
 * What every part of drain does when it calls code it does not control, or waits for a thread
 * that must finish: small, supported policies, each with one home, that the pool and the durable
 * adapters share (decision 0055), and that a user writing an adapter of their own may use too.
 * <ul>
 *   <li>{@link dev.drain.safe.SafeText}: text built from values whose {@code toString} may throw
 *       anything, and text cut to a store's limit without splitting a character;</li>
 *   <li>{@link dev.drain.safe.Uninterruptibly}: a wait that must run to its end (a thread that must
 *       not outlive its owner, a call whose outcome must be known), keeping the interrupt for the
 *       caller instead of acting on it;</li>
 *   <li>{@link dev.drain.safe.Fatal}: which throwables mean the JVM itself may not go on.</li>
 * </ul>
 */
@NullMarked
package dev.drain.safe;

import org.jspecify.annotations.NullMarked;
