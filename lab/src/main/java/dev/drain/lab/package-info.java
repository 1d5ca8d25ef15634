/**
 * drain's lab: the embedded engines that let its tests, its reports, its examples, its JShell scripts
 * and its benchmarks run with nothing installed, and a user try drain the same way:
 * {@link dev.drain.lab.LocalPostgres}, a real PostgreSQL started from Maven jars, for the job table
 * ({@code drain-jobtable}), and {@link dev.drain.lab.LocalKafka}, a KRaft broker in this JVM, for the
 * Kafka source ({@code drain-kafka}). A project opts in with the artifact {@code dev.drain:drain-lab},
 * usually in test scope; the adapters themselves never bring an engine (decision 0050).
 */
@NullMarked
package dev.drain.lab;

import org.jspecify.annotations.NullMarked;
