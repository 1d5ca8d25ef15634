package dev.drain.report;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What one case showed on one intake: the columns of the report.
 *
 * @param name the case's name
 * @param intake {@code queue} or {@code sentinel}
 * @param results how many results the consumer received
 * @param order the completion-order check: {@code "completion"} if it held, {@code "WRONG"} if
 *     not, {@code "-"} where the case does not check it
 * @param attempts attempts per item, grouped: {@code "1×6 2×2"} is six items with one attempt and
 *     two with two
 * @param maxLead the largest lead of the source over finished work
 * @param leadBound {@code queueSize + workers + 1}
 * @param outcome how the run ended, in a few words
 * @param outcomeDetail the failures' items, types and messages, or the items dropped; empty for a
 *     normal end
 * @param contextOk whether every attempt saw its own item and attempt number in its context
 * @param metricsRaised how many calls to the metrics sink threw
 * @param taskDelta the pool's running threads after the run minus before
 * @param failedChecks the case's expectations that did not hold; empty if it passed
 * @param millis how long the case took
 */
record CaseResult(String name, String intake, int results, String order, String attempts, long maxLead,
                  long leadBound, String outcome, String outcomeDetail, boolean contextOk, long metricsRaised, int taskDelta,
                  List<String> failedChecks, long millis) {

    CaseResult {
        failedChecks = List.copyOf(failedChecks);
    }

    boolean leadOk() {
        return maxLead <= leadBound;
    }

    boolean passed() {
        return failedChecks.isEmpty();
    }

    Map<String, Object> toJson() {
        Map<String, Object> json = new LinkedHashMap<>();
        json.put("case", name);
        json.put("intake", intake);
        json.put("results", results);
        json.put("order", order);
        json.put("attempts", attempts);
        json.put("max_lead", maxLead);
        json.put("lead_bound", leadBound);
        json.put("lead_ok", leadOk());
        json.put("outcome", outcome);
        json.put("outcome_detail", outcomeDetail);
        json.put("ctx_ok", contextOk);
        json.put("metrics_raised", metricsRaised);
        json.put("task_delta", taskDelta);
        json.put("passed", passed());
        json.put("failed_checks", failedChecks);
        json.put("millis", millis);
        return json;
    }
}
