/**
 * The contract report, the project's main job: {@link dev.drain.report.ContractReport} runs the
 * worker pool's contract cases on both intakes and prints which of the ten points each proves.
 * A module of its own, off the library's path (decision 0050); not API.
 */
@NullMarked
package dev.drain.report;

import org.jspecify.annotations.NullMarked;
