/**
 * The durable cases of the contract report ({@code specs/contract-report.md}, "The durable
 * cases"), and the external witnesses they and the job table's crash tests read: not API. Run by
 * {@code ./contract-report} after the pool's cases, on the embedded PostgreSQL of
 * {@link dev.drain.jobtable.LocalPostgres}.
 */
@NullMarked
package dev.drain.jobtable.report;

import org.jspecify.annotations.NullMarked;
