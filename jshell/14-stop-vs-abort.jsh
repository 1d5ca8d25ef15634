// 14: the two ways to stop a pool early. requestStop() is the graceful one (a deployment): nothing more is pulled,
// everything pulled is handled, the run ends normally. abort() is the emergency: queued items are dropped, attempts
// interrupted, and the iteration ends with PoolAborted naming them. Clauses: WP-7, WP-12, WP-2, WP-10.

System.out.println("== 14 requestStop() versus abort() ==");

{
    // 2 workers, an intake of 2, an endless source 0, 1, 2, ...; each handler waits at a gate. With both workers
    // busy and the intake full, the producer has pulled one more item and waits to put it: 5 pulled, 2 in
    // flight, 2 queued, 1 held.
    CountDownLatch inFlight = new CountDownLatch(2);
    CountDownLatch gate = new CountDownLatch(1);
    Map<Integer, Integer> handledBy = new ConcurrentHashMap<>();
    Handler<Integer, Integer> handler = item -> {
        handledBy.put(item, ItemContext.current().worker());
        inFlight.countDown();
        await("the gate", gate);
        return item;
    };
    var pool = WorkerPool.<Integer, Integer>builder(handler).workers(2).queueSize(2).itemTimeout(BOUND)
            .name("demo14-stop").build();

    System.out.println("requestStop(): once 5 items are pulled (2 in flight, 2 queued, 1 held by the producer):");
    List<Integer> delivered = new ArrayList<>();
    Results<Integer, Integer> results = pool.run(Stream.iterate(0, i -> i + 1));
    try (results) {
        until("both items in flight", () -> inFlight.getCount() == 0);
        // accepted counts the item the producer holds too: it is accepted before it is put (WP-8's order).
        until("5 pulled, 5 accepted", () -> results.stats().pulled() == 5 && results.stats().accepted() == 5);
        pool.requestStop(); // returns at once
        gate.countDown();   // now let the handlers finish
        while (results.hasNext()) {
            delivered.add(results.next());
        }
    }
    System.out.println("  the iteration ends normally; outcome: " + results.outcome().orElseThrow());
    System.out.println("  pulled " + results.stats().pulled() + ", delivered (sorted): " + new TreeSet<>(delivered));
    System.out.println("  item 4, held by the producer when the stop came, went into the intake and was handled by worker "
            + handledBy.get(4) + ": never more than 2 handlers at once (WP-21)");
    System.out.println("  liveThreads after close(): " + pool.liveThreads());
}

{
    // The same, with an intake of 3 and handlers that never finish on their own: only the abort's interrupt
    // ends them. 6 items pulled, 2 in flight, 3 queued, 1 held.
    CountDownLatch inFlight = new CountDownLatch(2);
    Handler<Integer, Integer> handler = item -> {
        inFlight.countDown();
        awaitInterrupt(); // nothing else ends it
        return item;
    };
    var pool = WorkerPool.<Integer, Integer>builder(handler).workers(2).queueSize(3).itemTimeout(BOUND)
            .name("demo14-abort").build();

    System.out.println("abort(): once 6 items are pulled (2 in flight, 3 queued, 1 held by the producer):");
    Results<Integer, Integer> results = pool.run(Stream.iterate(0, i -> i + 1));
    try (results) {
        until("both items in flight", () -> inFlight.getCount() == 0);
        until("6 pulled, 6 accepted", () -> results.stats().pulled() == 6 && results.stats().accepted() == 6);
        pool.abort(); // returns at once
        while (results.hasNext()) {
            System.out.println("  result: " + results.next());
        }
    } catch (PoolAborted e) {
        System.out.println("  the iteration ends with PoolAborted: " + e.getMessage());
        System.out.println("  discarded (never started, sorted): " + new TreeSet<>(e.discarded()));
        System.out.println("  cancelled (interrupted in flight, sorted): " + new TreeSet<>(e.cancelled()));
    }
    PoolStats stats = results.stats();
    System.out.println("  stats: pulled=" + stats.pulled() + " succeeded=" + stats.succeeded() +
            " discarded=" + stats.discarded() + " cancelled=" + stats.cancelled() + " liveThreads=" + stats.liveThreads());
}

tryIt("14", "requestStop() called before run(): how many items does the run pull, and how does it end?",
        "var early = WorkerPool.<Integer, Integer>builder(n -> n).name(\"early\").build(); early.requestStop();",
        "var r = runToEnd(early, List.of(1, 2, 3)); System.out.println(\"pulled=\" + r.stats().pulled() + \", \" + r.outcome());");

/exit
