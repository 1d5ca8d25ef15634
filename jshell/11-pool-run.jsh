// 11: a WorkerPool run. Workers take items from a bounded intake and handle each on a thread of its own; results
// come back in the order they complete, and when the run is over every thread it started has finished.
// Clauses: WP-1 (bounded intake), WP-2 (exactly once, completion order), WP-10 (no leaks), WP-15 (stats), WP-17.

System.out.println("== 11 a pool run: results in completion order, stats, no thread left ==");

{
    // Item i may finish only once turn[i] is open; the consumer opens them newest first.
    List<CountDownLatch> turn = Stream.generate(() -> new CountDownLatch(1)).limit(4).toList();
    Handler<Integer, String> handler = item -> {
        await("item " + item + "'s turn", turn.get(item));
        return "item " + item + " done";
    };
    WorkerPool<Integer, String> pool = WorkerPool.<Integer, String>builder(handler)
            .workers(4)
            .queueSize(2)
            .itemTimeout(BOUND)
            .name("demo11")
            .build();

    System.out.println(pool + ": four workers, so all four items are in flight at once.");
    System.out.println("The source gives 0, 1, 2, 3; item 3 may finish first, and each result lets the next older one finish:");
    turn.get(3).countDown();
    List<String> arrived = new ArrayList<>();
    // The whole run in this one block: the thread that called run() owns the results (WP-17), and only it
    // iterates and closes them. runToEnd(pool, items) in startup.jsh is this loop, for the later scripts.
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
    System.out.println("pool after the run: " + pool);
}

tryIt("11", "one worker, the source 3, 1, 2: in what order do the results come?",
        "var one = WorkerPool.<Integer, String>builder(n -> \"item \" + n).workers(1).name(\"one\").build();",
        "System.out.println(runToEnd(one, List.of(3, 1, 2)).results());");

/exit
