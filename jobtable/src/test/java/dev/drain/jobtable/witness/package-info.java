/**
 * The witnesses outside the adapter: what a handler did and what the database stored, whatever
 * {@link dev.drain.jobtable.JobTable} believes. The job table's crash tests read them, and so do the
 * contract report's durable cases (module {@code report/}), from this module's test jar
 * ({@code dev.drain:drain-jobtable:test-jar}, decision 0050). Test code, not API.
 */
@NullMarked
package dev.drain.jobtable.witness;

import org.jspecify.annotations.NullMarked;
