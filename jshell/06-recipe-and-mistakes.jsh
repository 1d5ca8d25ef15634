// 06: the deployment recipe (producers stop, then shutdown(); consumers call taskDone() in a finally and leave
// on QueueShutDown; the coordinator join()s, and only then is the work done), then five common mistakes, each
// the wrong way (a bounded wait, never a real hang), then the right way. Clauses: SQ-04 to SQ-11, SQ-13.

System.out.println("== 06 the deployment recipe, then five mistakes: the wrong way, then the right way ==");

// consumer(q, done, gate): the recipe's consumer. Handling an item waits at the gate, then records it in done.
Callable<String> consumer(ShutdownQueue<Integer> q, List<Integer> done, CountDownLatch gate) {
    return () -> {
        while (true) {
            int item;
            try {
                item = q.get();
            } catch (QueueShutDown e) {
                return "left on QueueShutDown";     // shut down and drained: the normal way out
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt(); // cancelled: keep the interrupt, and stop
                return "cancelled, interrupt kept: " + Thread.currentThread().isInterrupted();
            }
            try {
                await("the gate", gate);
                done.add(item);
            } finally {
                q.taskDone();                       // whatever happens, join() can trust the count
            }
        }
    };
}
CountDownLatch OPEN = new CountDownLatch(0); // a gate that is open

{
    System.out.println("The recipe: two consumers, a producer of ten items, shutdown(), then join():");
    var q = new ShutdownQueue<Integer>(4);
    List<Integer> done = new CopyOnWriteArrayList<>();
    var consumers = List.of(Call.start("consumer-1", consumer(q, done, OPEN)), Call.start("consumer-2", consumer(q, done, OPEN)));
    for (int item = 1; item <= 10; item++) q.put(item, BOUND); // 1. the producer (waits while full; bounded here)
    q.shutdown();                                               // 2. it stops: graceful, what is queued drains
    show("q.join(BOUND)  (3. the coordinator waits)", () -> q.join(BOUND));
    for (var c : consumers) System.out.println(c.end());
    System.out.println("  4. only now is the work done: " + done.size() + " items");
}

{
    System.out.println("(a) Wrong: a stop flag alone. The consumer waits in get() and never looks at the flag again:");
    var q = new ShutdownQueue<Integer>(0);
    var stop = new AtomicBoolean();
    var flagged = Call.blocked("consumer with a stop flag", q::waitingGetters, () -> { while (!stop.get()) q.get(); return null; });
    stop.set(true);
    show("stop.set(true); flagged.running(200 ms)", () -> flagged.running(Duration.ofMillis(200)));
    System.out.println("    Right: shutdown() wakes it, and its get() throws QueueShutDown:");
    q.shutdown();
    System.out.println(flagged.end());
}

{
    System.out.println("(b) Wrong: shutdown(true), then a join() that returns taken as success:");
    var q = new ShutdownQueue<Integer>(0);
    for (int item = 1; item <= 3; item++) q.put(item);
    List<Integer> dropped = q.shutdown(true);
    show("q.join(Duration.ZERO)  (\"all done\"?)", () -> q.join(Duration.ZERO));
    System.out.println("    Right: record what shutdown(true) returned, as work left undone: dropped=" + dropped);
}

{
    System.out.println("(c) Wrong: taskDone() after the work, so a failing item 2 skips it. Right: taskDone() in a finally:");
    for (boolean inFinally : List.of(false, true)) {
        var q = new ShutdownQueue<Integer>(0);
        for (int item = 1; item <= 3; item++) q.put(item);
        for (int n = 0; n < 3; n++) {
            try {
                if (q.get() == 2) throw new IllegalStateException("item 2 fails");
                if (!inFinally) q.taskDone();   // wrong: skipped when the work throws
            } catch (IllegalStateException failed) {
                // the failure is logged, and the loop goes on
            } finally {
                if (inFinally) q.taskDone();    // right: runs whatever happens
            }
        }
        show(inFinally ? "in a finally: q.join(200 ms)" : "after the work: q.join(200 ms)", () -> q.join(Duration.ofMillis(200)));
    }
}

{
    System.out.println("(d) Wrong: interrupting the consumer while the intake is open. Right: shutdown(), drain, join():");
    for (boolean shutdownFirst : List.of(false, true)) {
        var q = new ShutdownQueue<Integer>(0);
        List<Integer> done = new CopyOnWriteArrayList<>();
        for (int item = 1; item <= 4; item++) q.put(item);
        var gate = new CountDownLatch(1);
        var c = Call.start(shutdownFirst ? "shutdown(), open the gate" : "interrupt at item 1", consumer(q, done, gate));
        until("item 1 is taken", () -> q.qsize() == 3);
        if (shutdownFirst) { q.shutdown(); gate.countDown(); } else c.thread().interrupt();
        System.out.println(c.end() + "; done=" + done + ", q.join(200 ms) " + q.join(Duration.ofMillis(200)) + ", " + q);
        if (!shutdownFirst) System.out.println("    item 1 is cut short (its finally counted it done), 2, 3, 4 are left behind");
    }
}

{
    System.out.println("(e) Wrong: a loop that swallows QueueShutDown and InterruptedException (capped at 1000 here):");
    var q = new ShutdownQueue<Integer>(0);
    var swallowed = new AtomicInteger();
    var deaf = Call.blocked("swallowing consumer", q::waitingGetters, () -> {
        while (swallowed.get() < 1000) {
            try { q.get(); q.taskDone(); } catch (QueueShutDown | InterruptedException e) { swallowed.incrementAndGet(); }
        }
        return "gave up";
    });
    deaf.thread().interrupt();
    until("the interrupt is swallowed", () -> swallowed.get() == 1 && q.waitingGetters() == 1);
    System.out.println("  interrupted, it waits in get() again, interrupt status " + deaf.thread().isInterrupted());
    q.shutdown();
    System.out.println(deaf.end() + " after catching QueueShutDown " + (swallowed.get() - 1) + " times in a row: it spins");
    System.out.println("    Right: QueueShutDown is the normal exit, and an interrupt is restored (the recipe's consumer):");
    var q2 = new ShutdownQueue<Integer>(0);
    var polite = Call.blocked("recipe consumer, interrupted", q2::waitingGetters, consumer(q2, new ArrayList<>(), OPEN));
    polite.thread().interrupt();
    System.out.println(polite.end());
}

tryIt("06", "the recipe's consumer, on a queue shut down before anything was put: does it end, and how?",
        "var idle = new ShutdownQueue<Integer>(0); idle.shutdown();",
        "System.out.println(Call.start(\"idle consumer\", consumer(idle, new ArrayList<>(), OPEN)).end());");

/exit
