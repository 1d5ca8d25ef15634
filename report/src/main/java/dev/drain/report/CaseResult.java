package dev.drain.report;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * What one case showed on one intake: the columns of the report.
 *
 * @param name the case's name
 * @param intake {@code queue} or {@code sentinel}
 * @param settings the pool's settings ({@code WorkerPool.settings()})
 * @param results the results the consumer received, in the order it received them
 * @param order the completion-order check: {@code "completion"} if it held, {@code "WRONG"} if
 *     not, {@code "-"} where the case does not check it
 * @param attempts how many attempts each item got, by item
 * @param maxLead the largest lead of the source over settled work
 * @param leadBound {@code queueSize + workers + 1}
 * @param outcome how the run ended, in a few words
 * @param outcomeDetail the failures' items, types and messages, or the items dropped; empty for a
 *     normal end
 * @param contextOk whether every attempt saw its own item and attempt number in its context
 * @param metricsRaised how many calls to the metrics sink threw
 * @param taskDelta the live threads of the JVM after the run that were not alive before it, by
 *     thread id ({@code JvmThreads})
 * @param expectedTaskDelta what {@code taskDelta} must be: 0, or the threads the case's handlers
 *     leak on purpose to show that the measure sees them
 * @param failedChecks the case's expectations that did not hold; empty if it passed
 * @param millis how long the case took
 */
record CaseResult(String name, String intake, String settings, List<Integer> results, String order,
                  Map<Integer, Integer> attempts, long maxLead, long leadBound, String outcome, String outcomeDetail,
                  boolean contextOk, long metricsRaised, int taskDelta, int expectedTaskDelta, List<String> failedChecks,
                  long millis) {

    CaseResult {
        results = List.copyOf(results);
        attempts = new TreeMap<>(attempts);
        failedChecks = List.copyOf(failedChecks);
    }

    boolean leadOk() {
        return maxLead <= leadBound;
    }

    boolean taskDeltaOk() {
        return taskDelta == expectedTaskDelta;
    }

    boolean passed() {
        return failedChecks.isEmpty();
    }

    /** {@return the results, with runs of consecutive values shortened: {@code 5, 4, 0-3, 7}} */
    String resultsText() {
        if (results.isEmpty()) {
            return "none";
        }
        StringBuilder text = new StringBuilder();
        for (int i = 0; i < results.size(); ) {
            int j = i;
            while (j + 1 < results.size() && results.get(j + 1) == results.get(j) + 1) {
                j++;
            }
            text.append(text.isEmpty() ? "" : ", ").append(results.get(i));
            if (j > i + 1) {
                text.append('-').append(results.get(j));
            } else if (j == i + 1) {
                text.append(", ").append(results.get(j));
            }
            i = j + 1;
        }
        return text.toString();
    }

    /** {@return attempts by item: {@code 1 each (40 items)}, or {@code 0:1 1:2 2:3}} */
    String attemptsText() {
        if (attempts.isEmpty()) {
            return "none";
        }
        if (attempts.values().stream().allMatch(n -> n == 1)) {
            return "1 each (" + attempts.size() + (attempts.size() == 1 ? " item)" : " items)");
        }
        StringBuilder text = new StringBuilder();
        attempts.forEach((item, n) -> text.append(text.isEmpty() ? "" : " ").append(item).append(':').append(n));
        return text.toString();
    }

    /** {@return the results, and {@code (completion)} where the case checks completion order} */
    String resultsWithOrder() {
        return resultsText() + (order.equals("-") ? "" : " (" + order + ")");
    }

    /** {@return {@code task_delta}, and {@code (expected)} where the case leaks threads on purpose} */
    String taskDeltaText() {
        return taskDelta + (expectedTaskDelta == 0 ? "" : " (expected)");
    }

    /** {@return {@code yes} or {@code NO}, as the report shows a check} */
    static String yesNo(boolean holds) {
        return holds ? "yes" : "NO";
    }

    Map<String, Object> toJson() {
        Map<String, Object> json = new LinkedHashMap<>();
        json.put("case", name);
        json.put("intake", intake);
        json.put("settings", settings);
        json.put("results", results);
        json.put("order", order);
        Map<String, Object> byItem = new LinkedHashMap<>();
        attempts.forEach((item, n) -> byItem.put(String.valueOf(item), n));
        json.put("attempts", byItem);
        json.put("max_lead", maxLead);
        json.put("lead_bound", leadBound);
        json.put("lead_ok", leadOk());
        json.put("outcome", outcome);
        json.put("outcome_detail", outcomeDetail);
        json.put("ctx_ok", contextOk);
        json.put("metrics_raised", metricsRaised);
        json.put("task_delta", taskDelta);
        json.put("expected_task_delta", expectedTaskDelta);
        json.put("passed", passed());
        json.put("failed_checks", failedChecks);
        json.put("millis", millis);
        return json;
    }
}
