// 09: the naive timeout and its hang, then the fix (decision 0007). A scope with a timeout interrupts its
// subtasks once, and close() then waits for them without a bound; the pool runs each attempt in a scope of its
// own, awaits it with its own deadline, and interrupts it again before close(). Clauses: WP-3, WP-4.

import java.util.concurrent.StructuredTaskScope.Joiner;
System.out.println("== 09 the naive timeout hangs on a handler that swallows an interrupt; the fix ==");

// naive(timeout, handler, joinTimedOut): on a thread of its own, the handler in a scope opened with
// config.withTimeout(timeout). join() throws at the timeout and cancels the scope (one interrupt); then close().
Call naive(Duration timeout, Callable<String> handler, CountDownLatch joinTimedOut) {
    return Call.start("naive scope", () -> {
        try (var scope = StructuredTaskScope.open(Joiner.<String>awaitAll(), config -> config.withTimeout(timeout))) {
            scope.fork(handler);
            try {
                scope.join();
            } catch (StructuredTaskScope.TimeoutException e) {
                joinTimedOut.countDown();  // the scope is cancelled: its subtask has been interrupted once
            }
        }                                  // close(): waits for the subtask's thread, however long it takes
        return "close() returned";
    });
}

{
    System.out.println("The naive way: a 100 ms timeout on a handler that swallows every interrupt:");
    var release = new CountDownLatch(1);
    var joinTimedOut = new CountDownLatch(1);
    var scope = naive(Duration.ofMillis(100), () -> swallowing(Integer.MAX_VALUE, release), joinTimedOut);
    await("join()'s timeout", joinTimedOut);
    System.out.println("  join() threw StructuredTaskScope.TimeoutException: the handler was interrupted, once");
    show("scope.running(300 ms)  (3 x the timeout, in close())", () -> scope.running(Duration.ofMillis(300)));
    release.countDown(); // only the handler itself can end it: here, a latch we hold
    System.out.println(scope.end() + ", once the handler was released by hand");
}

// attempt(timeout, handler): the fix, in miniature: the handler alone in a scope; the owner waits for its
// thread with its own deadline, and interrupts it again after each timeout, three rounds, before close().
String attempt(Duration timeout, Callable<String> handler) throws InterruptedException {
    var forked = new CopyOnWriteArrayList<Thread>();
    try (var scope = StructuredTaskScope.open(Joiner.<String>awaitAll(),
            config -> config.withThreadFactory(task -> { Thread t = Thread.ofVirtual().unstarted(task); forked.add(t); return t; }))) {
        var subtask = scope.fork(handler);
        int interrupts = 0;
        while (!forked.get(0).join(timeout) && interrupts < 3) { // our own deadline, each round
            forked.get(0).interrupt();
            interrupts++;
        }
        scope.join();  // the pool: still running after round 3 means stuck (reported, then waited for: WP-4's limit)
        return subtask.state() + " after " + interrupts + " interrupt(s): " + subtask.exception();
    }
}

{
    System.out.println("The fix in miniature, on handlers that swallow 1 and 2 interrupts:");
    show("attempt(100 ms, swallowing(1))", () -> attempt(Duration.ofMillis(100), () -> swallowing(1, new CountDownLatch(1))));
    show("attempt(100 ms, swallowing(2))", () -> attempt(Duration.ofMillis(100), () -> swallowing(2, new CountDownLatch(1))));
}

{
    System.out.println("The fix in the pool: WorkerPool's itemTimeout; item n swallows n interrupts:");
    var pool = WorkerPool.<Integer, String>builder(n -> swallowing(n, new CountDownLatch(1)))
            .workers(2).itemTimeout(Duration.ofMillis(100)).name("demo09").build();
    var ran = runToEnd(pool, List.of(1, 2));
    ran.outcome().failures().forEach(f -> System.out.println("  item " + f.item() + " failed after " + f.attempts() +
            " attempt: " + f.cause().getClass().getSimpleName() + ", stopped by interrupt " + (f.item() + 1)));
    System.out.println("  escalations=" + ran.stats().escalations() + " (1 for item 1, 2 for item 2), liveThreads=" + pool.liveThreads());
}

tryIt("09", "the naive scope, with a handler that stops at the first interrupt: does close() still hang?",
        "System.out.println(naive(Duration.ofMillis(100), () -> swallowing(0, new CountDownLatch(1)), new CountDownLatch(1)).end());");

/exit
