/**
 * The durable cases of the contract report ({@code specs/contract-report.md}, "The durable
 * cases"): not API. Run by {@code ./contract-report} after the pool's cases, on the embedded
 * PostgreSQL of {@link dev.drain.lab.LocalPostgres}; they read the witnesses outside the adapter
 * that the job table's crash tests read too ({@code dev.drain.jobtable.witness}, in the job
 * table's test jar).
 */
@NullMarked
package dev.drain.report.durable;

import org.jspecify.annotations.NullMarked;
