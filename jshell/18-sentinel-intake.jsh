// 18: the pool's two intakes side by side: SHUTDOWN_QUEUE (a ShutdownQueue: one shutdown() call) and SENTINEL (a
// LinkedBlockingQueue with one stop marker per worker, the Python 3.12 way). Both meet the whole contract; the
// sentinel one by hand. specs/worker-pool.md, "The two intakes, side by side"; WP-1, WP-2, WP-7, WP-12.

System.out.println("== 18 the sentinel intake beside the SHUTDOWN_QUEUE intake: same runs, same results ==");

{
    System.out.println("The same runs on both intakes (3 workers, intake 2): ten items, then an abort after 6 pulled:");
    for (var intake : WorkerPool.IntakeKind.values()) {
        var pool = WorkerPool.<Integer, Integer>builder(n -> n * n).workers(3).queueSize(2).itemTimeout(BOUND)
                .intake(intake).name("demo18-" + intake).build();
        var ran = runToEnd(pool, IntStream.rangeClosed(1, 10).boxed().toList());
        System.out.printf("  %-14s results (sorted) %s, %s, pulled=%d succeeded=%d liveThreads=%d%n", intake,
                new TreeSet<>(ran.results()), ran.end(), ran.stats().pulled(), ran.stats().succeeded(), pool.liveThreads());
        var inFlight = new CountDownLatch(2);
        var doomed = WorkerPool.<Integer, Integer>builder(n -> { inFlight.countDown(); awaitInterrupt(); return n; })
                .workers(2).queueSize(3).itemTimeout(BOUND).intake(intake).name("demo18-abort-" + intake).build();
        Results<Integer, Integer> results = doomed.run(Stream.iterate(0, i -> i + 1));
        try (results) {
            await("both items in flight", inFlight);
            until("6 pulled, 6 accepted", () -> results.stats().pulled() == 6 && results.stats().accepted() == 6);
            doomed.abort();
            results.forEachRemaining(n -> { });
        } catch (PoolAborted e) {
            System.out.printf("  %-14s abort: discarded (sorted) %s, cancelled (sorted) %s, liveThreads=%d%n", intake,
                    new TreeSet<>(e.discarded()), new TreeSet<>(e.cancelled()), doomed.liveThreads());
        }
    }
}

// What SENTINEL does by hand, in miniature: an ArrayBlockingQueue, a STOP marker, one per worker.
Object STOP = new Object(); // the marker: a unique object, compared by identity
Callable<String> worker(BlockingQueue<Object> q) {
    return () -> {
        int handled = 0;
        while (q.take() != STOP) handled++; // each worker must take exactly one marker
        return "took its marker after " + handled + " item(s)";
    };
}

{
    System.out.println("By hand: 2 workers, room for 2; the end of input needs one marker per worker, each a free slot:");
    var q = new ArrayBlockingQueue<Object>(2);
    q.put(1);
    q.put(2);
    var producer = Call.start("producer  (puts 2 markers, the queue full)", () -> { q.put(STOP); q.put(STOP); return null; });
    until("the producer waits for room", () -> parked(producer.thread()));
    show("producer.running(200 ms)  (no worker, no room)", () -> producer.running(Duration.ofMillis(200)));
    var w1 = Call.start("worker-1", worker(q));
    var w2 = Call.start("worker-2", worker(q));
    System.out.println(producer.end());
    System.out.println(w1.end());
    System.out.println(w2.end());

    System.out.println("A miscount: 2 workers, 1 marker. One worker ends; the other waits for good (here: 200 ms):");
    var short1 = Call.start("worker-1", worker(q));
    var short2 = Call.start("worker-2", worker(q));
    q.put(STOP);
    until("one worker took the marker", () -> short1.ending().isDone() || short2.ending().isDone());
    var stranded = short1.ending().isDone() ? short2 : short1;
    show("the other worker: running(200 ms)", () -> stranded.running(Duration.ofMillis(200)));
    stranded.thread().interrupt();           // only an interrupt reaches it
    System.out.println(stranded.end() + "  (released by an interrupt)");
    var sq = new ShutdownQueue<Integer>(2);
    var g1 = Call.blocked("ShutdownQueue getter-1", sq::waitingGetters, sq::get);
    var g2 = Call.blocked("ShutdownQueue getter-2", sq::waitingGetters, sq::get);
    show("sq.shutdown()  (one call, however many workers)", () -> { sq.shutdown(); return null; });
    System.out.println(g1.end());
    System.out.println(g2.end());
}

System.out.println("""
        What else SENTINEL arranges by hand (specs/worker-pool.md): a stop is a flag the producer sees only once a slot
        frees up; an abort's drainTo can race with one more put, so every item taken is checked against the abort flag;
        after an abort the producer skips the markers, and for no other reason, or a worker waits forever.""");

tryIt("18", "requestStop() on a SENTINEL pool before its run: does it end the same way as on SHUTDOWN_QUEUE?",
        "var s = WorkerPool.<Integer, Integer>builder(n -> n).intake(WorkerPool.IntakeKind.SENTINEL).name(\"s\").build(); s.requestStop();",
        "var r = runToEnd(s, List.of(1, 2, 3)); System.out.println(\"pulled=\" + r.stats().pulled() + \", \" + r.outcome());");

/exit
