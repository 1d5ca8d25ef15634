/**
 * The worker pool's settlements on a durable job table (spec {@code specs/job-table.md}, clauses
 * JT-1 to JT-9): {@link dev.drain.jobtable.JobTable} claims rows in batches with
 * {@code FOR UPDATE SKIP LOCKED}, hands them to a pool as its source, renews their leases while
 * they are held, and settles each one, fenced by owner and claim, from the pool's settler
 * (WP-22). The database is the caller's, with its JDBC driver; the embedded default,
 * {@code dev.drain.lab.LocalPostgres} (a real Postgres from Maven artifacts, with nothing to
 * install), is in the artifact {@code drain-lab}, which a project opts into.
 */
@NullMarked
package dev.drain.jobtable;

import org.jspecify.annotations.NullMarked;
