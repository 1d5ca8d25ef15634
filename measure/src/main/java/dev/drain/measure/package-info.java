/**
 * What drain's tests and reports measure and write with, outside the library: every live thread of
 * the JVM from a JSON thread dump ({@link dev.drain.measure.JvmThreads}, the leak measure of WP-10),
 * the static scan of WP-11 ({@link dev.drain.measure.ApiScan}), where a report comes from
 * ({@link dev.drain.measure.Provenance}), and JSON written and read ({@link dev.drain.measure.Json},
 * {@link dev.drain.measure.JsonReader}). It names nothing of drain, so that the core's tests and the
 * contract report (module {@code report/}) both use it without a cycle (decision 0050). Not API.
 */
@NullMarked
package dev.drain.measure;

import org.jspecify.annotations.NullMarked;
