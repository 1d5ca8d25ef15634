// 22: a batch or a service. A batch reads its results and stops at its first bad item (WP-6); a service does its
// work as a side effect, goes on past its bad items (WP-23, WP-25), stops with a deadline (WP-24), and waits before
// a retry without holding a worker (WP-28). Predict each answer before you read it.

System.out.println("== 22 a batch or a service ==");

// The same 20 items for both: item 7 is malformed, and no attempt will ever handle it.
void orMalformed(int item) {
    if (item == 7) {
        throw new IllegalArgumentException("item 7 is malformed");
    }
}

{
    // A batch: builder(handler), run(), read the results. Predict: how does it end, and is item 19 handled?
    var batch = WorkerPool.<Integer, Integer>builder(n -> { orMalformed(n); return n; }).workers(2).queueSize(2)
            .name("demo22-batch").build();
    RunOutcome<Integer> outcome = batch.drain(IntStream.range(0, 20).boxed());
    System.out.println("batch: " + outcome.getClass().getSimpleName() + ", failures "
            + outcome.failures().stream().map(ItemFailure::item).toList() + ", intake stopped at the first: "
            + (outcome instanceof RunOutcome.Failed<Integer>));
}

{
    // A service: forEach(side effect), drain(): the failure is settled as failed (a store would dead-letter it),
    // logged, counted, and the run goes on. Predict: how many items are done?
    AtomicInteger done = new AtomicInteger();
    var service = WorkerPool.<Integer>forEach(n -> { orMalformed(n); done.incrementAndGet(); }).workers(2)
            .queueSize(2).name("demo22-service").build();
    RunOutcome<Integer> outcome = service.drain(IntStream.range(0, 20).boxed());
    System.out.println("service: " + outcome.getClass().getSimpleName() + ", done " + done.get() + ", failures "
            + outcome.failures().stream().map(ItemFailure::item).toList());
}

{
    // A deploy: requestStop(within) is graceful until its deadline, then an abort. Handlers that never finish by
    // themselves: predict the outcome after a 200 ms deadline.
    CountDownLatch inFlight = new CountDownLatch(2);
    var stuck = WorkerPool.<Integer>forEach(n -> { inFlight.countDown(); awaitInterrupt(); }).workers(2)
            .itemTimeout(BOUND).name("demo22-deploy").build();
    Thread.ofVirtual().start(() -> {
        try {
            await("both in flight", inFlight);
        } catch (InterruptedException e) {
            return;
        }
        stuck.requestStop(Duration.ofMillis(200));
    });
    RunOutcome<Integer> outcome = stuck.drain(Stream.iterate(0, i -> i + 1));
    System.out.println("deploy: " + outcome.getClass().getSimpleName() + ", deadline passed: "
            + ((RunOutcome.Aborted<Integer>) outcome).deadlinePassed() + ", cancelled in flight: "
            + outcome.cancelled().size() + ", liveThreads " + stuck.liveThreads());
}

{
    // A backend down for a second, 8 items, 4 retries. Predict how many items end failed with immediate retries,
    // and with a backoff exponential from 200 ms (each wait drawn from [d/2, d]: at least 100+200+400+400 ms).
    for (Backoff backoff : List.of(Backoff.none(), Backoff.exponential(Duration.ofMillis(200), Duration.ofMillis(800)))) {
        long backAt = System.nanoTime() + Duration.ofSeconds(1).toNanos();
        var flaky = WorkerPool.<Integer>forEach(n -> {
                    if (System.nanoTime() < backAt) {
                        throw new java.io.IOException("the backend is down");
                    }
                }).workers(2).retryable(java.io.IOException.class).maxRetries(4).retryBackoff(backoff)
                .name("demo22-backoff").build();
        RunOutcome<Integer> outcome = flaky.drain(IntStream.range(0, 8).boxed());
        System.out.println("backoff " + backoff + ": failed " + outcome.failures().size() + " of 8");
    }
}

tryIt("22", "drain() on a batch pool whose item 3 fails: does it throw, or return? What does it return?",
        "var b = WorkerPool.<Integer, Integer>builder(n -> { if (n == 3) throw new IllegalStateException(\"bad\"); return n; }).name(\"try22\").build();",
        "System.out.println(\"drain returned \" + b.drain(List.of(1, 2, 3, 4)).getClass().getSimpleName());");

/exit
