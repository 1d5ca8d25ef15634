// 03: an immediate shutdown, shutdown(true): a graceful shutdown (script 02) that also drops what is queued
// and hands it back. Items taken before it still count: join() waits for their taskDone(). Clauses: SQ-08
// (immediate shutdown, the drain, join), SQ-09 (repeated, mixed), SQ-10 (taskDone), SQ-11 (join).

System.out.println("== 03 immediate shutdown: shutdown(true) returns the dropped items ==");

var q = new ShutdownQueue<String>(0);
List<String> dropped = new ArrayList<>(); // the work left undone, recorded apart

{
    System.out.println("Three items queued; a consumer takes a and works on it; a coordinator waits in join():");
    q.put("a");
    q.put("b");
    q.put("c");
    show("q.get()  (the consumer has a)", () -> q.get());
    var joiner = Call.blocked("joiner  (waits in q.join())", q::waitingJoiners, () -> { q.join(); return null; });
    show("q", () -> q);
    System.out.println("shutdown(true) drops the rest and returns it, in the order get() would have:");
    show("q.shutdown(true)", () -> { dropped.addAll(q.shutdown(true)); return dropped; });
    show("q  (b and c are counted off; a is not done)", () -> q);
    show("q.waitingJoiners()  (join still waits for a)", () -> q.waitingJoiners());
    show("q.get()  (shut down, nothing left)", () -> q.get());
    show("q.put(\"d\")", () -> { q.put("d"); return null; });
    show("q.taskDone()  (the consumer is done with a)", () -> { q.taskDone(); return null; });
    System.out.println(joiner.end());
    System.out.println("join() returned, yet " + dropped + " never ran: after shutdown(true), a join() that returns is NOT success.");
    System.out.println("The work left undone is what shutdown(true) returned, recorded apart: dropped=" + dropped);
    show("q.taskDone()  (b and c are nobody's to finish)", () -> { q.taskDone(); return null; });
}

{
    System.out.println("Shutdown is sticky: again immediate drops nothing, graceful does not reopen or downgrade:");
    show("q.shutdown(true)", () -> q.shutdown(true));
    show("q.shutdown(false)", () -> q.shutdown(false));
    show("q", () -> q);
}

{
    System.out.println("Side by side with script 02: the same queue shut down gracefully keeps b and c for the consumers:");
    var g = new ShutdownQueue<String>(0);
    g.put("a");
    g.put("b");
    g.put("c");
    show("g.get()", () -> g.get());
    show("g.shutdown(false)  (drops nothing)", () -> g.shutdown(false));
    show("g", () -> g);
    show("g.get(), g.get()", () -> List.of(g.get(), g.get()));
    show("g.get()", () -> g.get());
}

tryIt("03", "a queue holds x and y and no consumer has taken anything. What does shutdown(true) return, " +
                "and does join(ZERO) say true although nothing was done?",
        "var e = new ShutdownQueue<String>(0);",
        "e.put(\"x\"); e.put(\"y\");",
        "show(\"e.shutdown(true)\", () -> e.shutdown(true));",
        "show(\"e.join(Duration.ZERO)\", () -> e.join(Duration.ZERO));");

/exit
