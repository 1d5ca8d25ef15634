// 06: a WorkerPool run. Workers take items from a bounded intake and handle each on a thread of its
// own; results come back in the order they complete, not the order the source gave them; and when
// the run is over, every thread it started has finished.
// Clauses: WP-1 (bounded intake), WP-2 (exactly once, completion order), WP-10 (no leaks),
// WP-15 (the live counters in Results.stats()).

System.out.println("== 06 a pool run: results in completion order, stats, no thread left ==");

{
    // Item i may finish only once turn[i] is open; the consumer opens them newest first.
    List<CountDownLatch> turn = List.of(new CountDownLatch(1), new CountDownLatch(1), new CountDownLatch(1),
            new CountDownLatch(1));
    Handler<Integer, String> handler = item -> {
        if (!turn.get(item).await(5, TimeUnit.SECONDS)) { // bounded: a bug shows up as a failure
            throw new IllegalStateException("item " + item + " waited 5 s for its turn");
        }
        return "item " + item + " done";
    };
    WorkerPool<Integer, String> pool = WorkerPool.<Integer, String>builder(handler)
            .workers(4)
            .queueSize(2)
            .itemTimeout(Duration.ofSeconds(5))
            .name("demo06")
            .build();

    System.out.println(pool + ": four workers, so all four items are in flight at once.");
    System.out.println("The source gives 0, 1, 2, 3; item 3 may finish first, and each result lets the next older one finish:");
    turn.get(3).countDown();
    List<String> arrived = new ArrayList<>();
    try (Results<Integer, String> results = pool.run(List.of(0, 1, 2, 3))) {
        while (results.hasNext()) {
            String result = results.next();
            arrived.add(result);
            System.out.println("  results.next() -> " + result);
            int item = Integer.parseInt(result.split(" ")[1]);
            if (item > 0) {
                turn.get(item - 1).countDown();
            }
        }
        PoolStats stats = results.stats();
        System.out.println("results in completion order: " + arrived);
        System.out.println("outcome: " + results.outcome().orElseThrow());
        System.out.println("stats: pulled=" + stats.pulled() + " succeeded=" + stats.succeeded() + " failed=" + stats.failed() +
                " maxLead=" + stats.maxLead() + " (never above queueSize + workers + 1 = 7)");
    } // close(): returns once every thread of the run has finished
    System.out.println("pool.liveThreads() after close(): " + pool.liveThreads());
}

/exit
