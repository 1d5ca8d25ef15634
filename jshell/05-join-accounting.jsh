// 05: join() and the unfinished-task count: each put adds one, each taskDone() takes one off, an immediate
// shutdown takes one off per item it drops (never below zero), and join() checks once. Clauses: SQ-10, SQ-11
// (join waits for zero, once: quirk 6), SQ-08 (the clamp, probe B2; join after shutdown(true), probe B1).

System.out.println("== 05 join accounting: taskDone, join's single check, the clamp, join after shutdown(true) ==");

{
    System.out.println("Two items put, a thread waits in join(); a consumer gets and finishes them one by one:");
    var q = new ShutdownQueue<String>(0);
    q.put("x");
    q.put("y");
    var joiner = Call.blocked("joiner  (waits in q.join())", q::waitingJoiners, () -> { q.join(); return null; });
    show("q.get(); q.taskDone()", () -> { q.get(); q.taskDone(); return q; });
    show("q.waitingJoiners()  (one task left: still waiting)", () -> q.waitingJoiners());
    show("q.get(); q.taskDone()  (the count reaches zero)", () -> { q.get(); q.taskDone(); return q; });
    System.out.println(joiner.end());
}

{
    System.out.println("join() checks once (quirk 6). In one atomically() step the count reaches zero, which releases");
    System.out.println("the joiner, and a put raises it again before the joiner runs; the joiner returns all the same:");
    var once = new ShutdownQueue<Integer>(0);
    once.put(1);
    var joiner = Call.blocked("joiner  (waits in once.join())", once::waitingJoiners, () -> { once.join(); return null; });
    once.atomically(q -> {
        show("q.getNowait()", () -> q.getNowait());
        show("q.taskDone()  (zero: the joiner is released)", () -> { q.taskDone(); return null; });
        show("q.putNowait(2)  (before the joiner runs)", () -> { q.putNowait(2); return null; });
    });
    System.out.println(joiner.end());
    show("once  (asyncio returns; queue.Queue would wait)", () -> once);
}

{
    System.out.println("The clamp (B2): two taskDone() calls for items nobody took, then shutdown(true) drops both:");
    var clamp = new ShutdownQueue<String>(0);
    clamp.put("a");
    clamp.put("b");
    show("clamp.taskDone(); clamp.taskDone()", () -> { clamp.taskDone(); clamp.taskDone(); return clamp; });
    show("clamp.shutdown(true)", () -> clamp.shutdown(true));
    show("clamp.unfinishedTasks()  (0, not -2)", () -> clamp.unfinishedTasks());
}

{
    System.out.println("join() after shutdown(true) (B1): the drop does not release a joiner while a taken item is unfinished:");
    var taken = new ShutdownQueue<String>(0);
    taken.put("a");
    taken.put("b");
    taken.put("c");
    show("taken.get()  (a consumer is working on a)", () -> taken.get());
    var joiner = Call.blocked("joiner  (waits in taken.join())", taken::waitingJoiners, () -> { taken.join(); return null; });
    show("taken.shutdown(true)", () -> taken.shutdown(true));
    show("taken  (a is still unfinished)", () -> taken);
    show("taken.waitingJoiners()  (still waiting)", () -> taken.waitingJoiners());
    show("taken.taskDone()  (the consumer finishes a)", () -> { taken.taskDone(); return null; });
    System.out.println(joiner.end());
}

{
    System.out.println("A forgotten taskDone(): the consumer took every item and finished them, but acknowledged one only.");
    var forgot = new ShutdownQueue<String>(0);
    forgot.put("a");
    forgot.put("b");
    show("forgot.get(); forgot.taskDone(); forgot.get()", () -> { forgot.get(); forgot.taskDone(); return forgot.get(); });
    show("forgot.join(Duration.ofMillis(200))", () -> forgot.join(Duration.ofMillis(200)));
    System.out.println("  false: join() waits for a taskDone() that never comes. Untimed, this join() never returns.");
}

tryIt("05", "taskDone() called before get() (quirk 5): what is the count then, and what does the consumer's own " +
                "taskDone() do after its get()?",
        "var early = new ShutdownQueue<String>(0);",
        "early.put(\"a\"); early.taskDone(); show(\"early\", () -> early);",
        "show(\"early.get(); early.taskDone()\", () -> { early.get(); early.taskDone(); return null; });");

/exit
