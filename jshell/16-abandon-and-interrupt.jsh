// 16: the consumer gives up. close() before the end abandons the run: queued items are discarded, attempts
// cancelled, and close() returns only when every thread of the run has finished; an interrupted consumer does the
// same, then gets CancellationException with its interrupt kept. Clauses: WP-13, WP-14, WP-17 (the owner).

System.out.println("== 16 abandon, an interrupted consumer, and results used from another thread ==");

// stuckAtStart(inFlight): a handler that counts itself in flight, then waits for the interrupt that cancels it.
Handler<Integer, Integer> stuckAtStart(CountDownLatch inFlight) {
    return item -> {
        inFlight.countDown();
        awaitInterrupt();
        return item;
    };
}

{
    System.out.println("close() before the end: 2 workers, intake 2, an endless source; 5 pulled (2 in flight, 2 queued, 1 held):");
    var inFlight = new CountDownLatch(2);
    var pool = WorkerPool.<Integer, Integer>builder(stuckAtStart(inFlight)).workers(2).queueSize(2).itemTimeout(BOUND)
            .name("demo16-close").build();
    Results<Integer, Integer> results = pool.run(Stream.iterate(0, i -> i + 1));
    try (results) {
        await("both items in flight", inFlight);
        until("5 pulled", () -> results.stats().pulled() == 5);
    } // close() here, before the end: the run is abandoned
    System.out.println("  close() returned; pool.liveThreads() = " + pool.liveThreads() + " (every thread had finished)");
    RunOutcome<Integer> outcome = results.outcome().orElseThrow();
    System.out.println("  outcome " + outcome.getClass().getSimpleName() + ": discarded (sorted) " + new TreeSet<>(outcome.discarded()) +
            ", cancelled (sorted) " + new TreeSet<>(outcome.cancelled()));
    System.out.println("  results.hasNext() after close(): " + results.hasNext());
}

{
    System.out.println("An interrupted consumer: it waits in hasNext() on a thread of its own, and that thread is interrupted:");
    var inFlight = new CountDownLatch(2);
    var iterating = new CountDownLatch(1);
    var pool = WorkerPool.<Integer, Integer>builder(stuckAtStart(inFlight)).workers(2).itemTimeout(BOUND)
            .name("demo16-interrupt").build();
    var consumer = Call.start("consumer", () -> {  // the whole run on the consumer's thread: it owns the results
        try (Results<Integer, Integer> results = pool.run(List.of(0, 1, 2))) {
            iterating.countDown();
            results.hasNext();
            return "no exception?";
        } catch (CancellationException e) {
            return e.getClass().getSimpleName() + " caused by " + e.getCause().getClass().getSimpleName() +
                    ", interrupt status kept: " + Thread.currentThread().isInterrupted() + ", liveThreads " + pool.liveThreads();
        }
    });
    await("the consumer iterating", iterating);
    await("both items in flight", inFlight);
    until("the consumer waits in hasNext()", () -> parked(consumer.thread()));
    consumer.thread().interrupt();
    System.out.println(consumer.end());
}

{
    System.out.println("Results belong to the thread that called run(); another thread gets WrongThreadException:");
    var inFlight = new CountDownLatch(1);
    var pool = WorkerPool.<Integer, Integer>builder(stuckAtStart(inFlight)).workers(1).itemTimeout(BOUND)
            .name("demo16-owner").build();
    try (Results<Integer, Integer> results = pool.run(List.of(0))) {
        var advice = new AtomicReference<String>();
        var other = Call.start("another thread's hasNext()", () -> {
            try { return results.hasNext(); } catch (WrongThreadException e) { advice.set(e.getMessage()); throw e; }
        });
        System.out.println(other.end());
        System.out.println("  its message: " + advice.get());
        await("the item in flight", inFlight);
        System.out.println(Call.start("another thread's pool.abort()  (any thread may)", () -> { pool.abort(); return null; }).end());
        results.forEachRemaining(r -> { });
    } catch (PoolAborted e) {
        System.out.println("  the owner's iteration ends with PoolAborted: " + e.getMessage());
    }
}

tryIt("16", "close() right after run(), before any result: what is the outcome, what does hasNext() say, any thread left?",
        "var quick = WorkerPool.<Integer, Integer>builder(stuckAtStart(new CountDownLatch(3))).workers(1).name(\"quick\").build();",
        "{ var qr = quick.run(List.of(1, 2, 3)); qr.close(); System.out.println(qr.outcome().orElseThrow().getClass().getSimpleName() + \", hasNext() \" + qr.hasNext() + \", liveThreads \" + quick.liveThreads()); }");

/exit
