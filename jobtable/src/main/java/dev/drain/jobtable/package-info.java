/**
 * The worker pool's durable job queue (spec {@code specs/job-table.md}, clauses JT-1 to JT-15):
 * {@link dev.drain.jobtable.JobTable} claims rows in batches with {@code FOR UPDATE SKIP LOCKED},
 * hands them to a pool as its source (a batch's stream, or a service's that waits for work),
 * renews their leases while they are held, and settles each one, fenced by owner and claim, from
 * the pool's settler (WP-22); it enqueues jobs (in the caller's transaction if asked, to run at
 * once or later, with payloads of the user's type through a codec), and operates the queue (a job
 * and its failure, requeue, purge, the backlog).
 * The database is the caller's, with its JDBC driver; the embedded default,
 * {@code dev.drain.lab.LocalPostgres} (a real Postgres from Maven artifacts, with nothing to
 * install), is in the artifact {@code drain-lab}, which a project opts into.
 *
 * <h2>The rooms, their threads, their locks</h2>
 * <pre>
 * The table is split by the thread that owns each piece of state; each class says the rest.
 *   Store             immutable, every thread: the data source, the dialect, the statements,
 *                     and opening the table (JT-1).
 *   Terms             immutable, every thread: the owner, the lease, the claim's size, the
 *                     leases a row may lose.
 *   Claims            one per stream: its rows in hand under its lock (the pool's producer, or
 *                     the thread that closes it); its connection on the stream's statements
 *                     thread (JT-2, JT-3, JT-6).
 *   TableSettler      the pool's settler thread: its connection, under its lock (JT-5, JT-7).
 *   SettlementWriter  the fenced transaction that the settler and a stream's releases write
 *                     with, on their own connections, and the count of stale writes (atomic).
 *   Renewal           the renewer thread (JT-4), a TableThread; its connection is its own.
 *   Listener          the listener thread (JT-13, PostgreSQL), a TableThread; its connection
 *                     is its own; it signals the WorkSignal.
 *   TableThread       a table's daemon thread: started once and stopped under its lock.
 *   Presence          the owner's advisory lock on PostgreSQL (JT-3): its session, under its
 *                     lock; taken by a claim's statements thread and kept by the renewer's
 *                     ticks, ended by close.
 *   WorkSignal        "there may be work": a generation under its lock; the waiting streams'
 *                     producers wait on it, anyone signals (JT-13).
 *   HeldClaims        the claims held (a concurrent set): a claim adds, a write removes, the
 *                     renewer reads; and the table's one suspect (JT-3) under its lock.
 *   JobTable          the API: closed (volatile) and the open streams (a concurrent set), for
 *                     any thread; JobTableBuilder opens it (or migrates its table, JT-1).
 *   Enqueuer          enqueue (JT-11, JT-12): on the caller's thread and a connection of its own,
 *                     or the caller's; keeps no state.
 *   QueueOperations   operating the queue (JT-14): on the caller's thread and connection of its
 *                     own; keeps no state.
 *   PayloadCodec      a payload of the user's type as text (JT-15): applied by the caller before
 *                     an enqueue and in the handler; keeps no state. UnreadablePayload is what
 *                     its read throws.
 * The policies shared with the core come from dev.drain.safe (decision 0055): a dead letter's
 * text is ItemFailure.describe, and every wait that must run to its end is Uninterruptibly's.
 *
 * Lock order. The locks are a stream's Claims.lock, HeldClaims.lock, WorkSignal.lock, the
 * TableThreads' locks, TableSettler.lock, Presence.lock and the database's row locks; the
 * concurrent sets and atomics take none that a caller waits for. Presence.lock guards two fields
 * and nothing is done under it (no connection, no statement, no other lock), so it comes last
 * in any order; connecting and taking the owner's shared advisory lock are done outside it.
 *   1. Claims.lock (one per stream). Its holder waits for the stream's statements thread, so
 *      what that thread takes comes after it: the row locks of a claim or a release, and, after
 *      a claim that took rows,
 *   2. HeldClaims.lock (a claim's reservation and its end, a write's forgetting), then
 *   3. WorkSignal.lock (a suspect's leaving signals under HeldClaims.lock; a waiting producer
 *      holds Claims.lock), and the TableThreads' locks (the renewer's start after a claim):
 *      leaves, nothing is taken or waited for while one is held (a waiter waits on its
 *      condition, which releases it; stop joins a thread after releasing it).
 *   TableSettler.lock comes before the row locks of its batch, then HeldClaims.lock and
 *   WorkSignal.lock (a write forgets its rows, and may signal); its holder takes no stream's
 *   lock, and waits only for the database. close() takes each stream's lock, then the
 *   renewal's and the listener's, then the settler's, one at a time and never two at once.
 *   Row locks: every transaction locks rows in id order (a claim, SKIP LOCKED; a batch of
 *   settlements or releases, sorted by id), and the renewal holds no Java lock and skips the
 *   rows another transaction has locked, so it never waits for a writer (JT-4, JT-7).
 * </pre>
 */
@NullMarked
package dev.drain.jobtable;

import org.jspecify.annotations.NullMarked;
