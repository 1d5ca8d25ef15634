// 13: stubborn handlers. An attempt that outlives itemTimeout is interrupted, and again each itemTimeout later,
// three rounds in all; one still running after round 3 is reported stuck at once (its item fails with
// StuckAttempt), and the run waits for it: the one documented limit. Clauses: WP-4, WP-3, WP-6, WP-8, WP-15.

System.out.println("== 13 stubborn handlers: swallowing 1, 2, or every interrupt ==");

{
    var release = new CountDownLatch(1);      // the only thing that ends item 3's handler
    Queue<Map.Entry<MetricsEvent, String>> events = new ConcurrentLinkedQueue<>(); // what the sink saw, in order
    // item 1 swallows 1 interrupt, item 2 swallows 2, item 3 every one
    var pool = WorkerPool.<Integer, String>builder(n -> swallowing(n == 3 ? Integer.MAX_VALUE : n, release))
            .workers(3)
            .itemTimeout(Duration.ofMillis(100))
            .metrics((event, detail) -> events.add(Map.entry(event, detail.replaceAll(" worker=\\d+", ""))))
            .name("demo13")
            .build();
    System.out.println(pool + ": three items at once, itemTimeout 100 ms");
    Results<Integer, String> results = pool.run(List.of(1, 2, 3));
    try (results) {
        until("item 3 is reported stuck", () -> events.stream().anyMatch(e -> e.getKey() == MetricsEvent.ATTEMPT_STUCK));
        System.out.println("item 3 is reported stuck while its handler still runs: pool.liveThreads() > 0 is " +
                (pool.liveThreads() > 0) + "; the run cannot end until the handler returns");
        release.countDown();                  // let it go; without this the run would wait for it
        while (results.hasNext()) {
            System.out.println("  result: " + results.next());
        }
    } catch (PoolFailure failure) {
        System.out.println("the iteration ends with PoolFailure:");
        failure.failures().forEach(f -> System.out.println("  item " + f.item() + ": " + f.cause().getClass().getSimpleName()));
    }
    PoolStats stats = results.stats();
    System.out.println("stats: timedOut=" + stats.timedOut() + " escalations=" + stats.escalations() +
            " (1 + 2 + 2: round 2 and round 3 are escalations) failed=" + stats.failed() + " liveThreads=" + stats.liveThreads());
    System.out.println("what the metrics sink saw, item by item, in order (worker ids left out):");
    for (int item = 1; item <= 3; item++) {
        String mine = "item=" + item + " ";
        events.stream().filter(e -> e.getKey() != MetricsEvent.ITEM_ACCEPTED && e.getValue().contains(mine))
                .forEach(e -> System.out.println("  " + e.getKey() + " " + e.getValue()));
    }
}

tryIt("13", "a handler that swallows 1 interrupt, under itemTimeout 500 ms, with TimeoutException retryable and " +
                "maxRetries(1): how many attempts, escalations, and what outcome?",
        "var again = WorkerPool.<Integer, String>builder(n -> swallowing(1, new CountDownLatch(1))).workers(1).itemTimeout(Duration.ofMillis(500)).retryable(TimeoutException.class).maxRetries(1).name(\"again\").build();",
        "var r = runToEnd(again, List.of(1)); System.out.println(r.end() + \"; escalations=\" + r.stats().escalations());");

/exit
