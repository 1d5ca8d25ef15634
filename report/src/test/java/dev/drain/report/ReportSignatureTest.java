package dev.drain.report;

import static org.assertj.core.api.Assertions.assertThat;

import dev.drain.measure.ApiScan;
import org.junit.jupiter.api.Test;

/**
 * WP-11: the contract report's point 11 scans the library's two packages and the report's own,
 * from wherever their classes are: folders when {@code ./contract-report} runs it, the library's jar
 * when the build's tests do.
 */
class ReportSignatureTest {

    /** WP-11: the report's scan sees the public types of dev.drain.queue, dev.drain.pool and dev.drain.report, and finds no raw type and no bare Object in them. */
    @Test
    void theReportScansTheLibraryAndItself() {
        assertThat(ApiScan.publicTypes(ContractReport.SCANNED)).extracting(Class::getSimpleName)
                .contains("ShutdownQueue", "WorkerPool", "Results", "PoolFailure", "ItemContext", "ContractReport");
        assertThat(ApiScan.problems(ContractReport.SCANNED)).isEmpty();
    }
}
