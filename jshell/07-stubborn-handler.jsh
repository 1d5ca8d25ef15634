// 07: a handler that swallows an interrupt. An attempt that outlives itemTimeout fails with a
// TimeoutException, and its worker interrupts it; if it is still running itemTimeout later, it is
// interrupted again (and a third time after that). A handler that swallows one interrupt is
// stopped by the second: the escalation shows in the stats and in the metrics sink.
// Clauses: WP-3 (per-item timeout), WP-4 (escalating cancellation), WP-6 (PoolFailure),
// WP-8 and WP-15 (the metrics sink and the counters).

System.out.println("== 07 a stubborn handler: one interrupt swallowed, the second one stops it ==");

{
    Handler<Integer, Integer> stubborn = item -> {
        try {
            new CountDownLatch(1).await(5, TimeUnit.SECONDS); // nothing opens it: only an interrupt ends the wait
            throw new IllegalStateException("the pool never interrupted the attempt");
        } catch (InterruptedException swallowed) {
            System.out.println("  handler: interrupted at the timeout; swallows it and waits again");
            new CountDownLatch(1).await(5, TimeUnit.SECONDS); // the second interrupt ends this one
            throw new IllegalStateException("the pool interrupted the attempt only once");
        }
    };
    Queue<String> events = new ConcurrentLinkedQueue<>(); // the sink is called from many threads
    WorkerPool<Integer, Integer> pool = WorkerPool.<Integer, Integer>builder(stubborn)
            .workers(1)
            .itemTimeout(Duration.ofMillis(300))
            .metrics((event, detail) -> events.add(event + " " + detail))
            .name("demo07")
            .build();

    System.out.println(pool + ": one item, which swallows the first interrupt.");
    Results<Integer, Integer> results = pool.run(List.of(0));
    try (results) {
        while (results.hasNext()) {
            System.out.println("  result: " + results.next());
        }
    } catch (PoolFailure failure) {
        System.out.println("the iteration ends with PoolFailure: " + failure.getMessage());
    }
    PoolStats stats = results.stats();
    System.out.println("stats: timedOut=" + stats.timedOut() + " escalations=" + stats.escalations() +
            " failed=" + stats.failed() + " liveThreads=" + stats.liveThreads());
    System.out.println("the metrics sink saw, for the attempt (the worker's events, in order):");
    events.stream()
            .filter(e -> e.startsWith("attempt.") || e.startsWith("item.failed"))
            .forEach(e -> System.out.println("  " + e));
}

/exit
