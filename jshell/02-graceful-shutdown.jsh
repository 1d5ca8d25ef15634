// 02: a graceful shutdown, shutdown() (= shutdown(false)): the queue stops growing, what is queued still
// drains, and every thread blocked in get() or put() is woken to re-check. Clauses: SQ-04 (nothing added
// after shutdown), SQ-05 (consumers drain), SQ-07 (every waiter woken), SQ-17 (str(queue) says shutdown).

System.out.println("== 02 graceful shutdown: items drain, puts fail, blocked threads are woken ==");

var q = new ShutdownQueue<String>(3);

{
    System.out.println("Two items queued, then shutdown(): puts fail at once, gets drain what is left.");
    q.put("a");
    q.put("b");
    show("q", () -> q);
    show("q.shutdown()", () -> { q.shutdown(); return null; });
    show("q", () -> q);
    show("q.put(\"c\")  (there is room, but no)", () -> { q.put("c"); return null; });
    show("q.putNowait(\"c\")", () -> { q.putNowait("c"); return null; });
    show("q.get()", () -> q.get());
    show("q.getNowait()", () -> q.getNowait());
    show("q.get()  (empty and shut down: no wait)", () -> q.get());
    show("q  (taken, not yet acknowledged: tasks=2)", () -> q);
}

{
    System.out.println("Two threads wait in get() on an empty queue; shutdown() wakes both, not just one:");
    var empty = new ShutdownQueue<String>(0);
    var getter1 = Call.blocked("getter-1", empty::waitingGetters, empty::get);
    var getter2 = Call.blocked("getter-2", empty::waitingGetters, empty::get);
    show("empty", () -> empty);
    show("empty.shutdown()", () -> { empty.shutdown(); return null; });
    System.out.println(getter1.end());
    System.out.println(getter2.end());
    show("empty", () -> empty);
}

{
    System.out.println("A thread waits in put() on a full queue; shutdown() wakes it, and its item is never added:");
    var full = new ShutdownQueue<String>(1);
    full.put("x");
    var putter = Call.blocked("putter  (waits in put(\"y\"))", full::waitingPutters, () -> { full.put("y"); return null; });
    show("full", () -> full);
    show("full.shutdown()", () -> { full.shutdown(); return null; });
    System.out.println(putter.end());
    show("full.get()  (the queued item still drains)", () -> full.get());
    show("full", () -> full);
}

tryIt("02", "q is shut down and drained, yet tasks=2. Do taskDone() and join() still work after a shutdown?",
        "show(\"q.taskDone(), twice\", () -> { q.taskDone(); q.taskDone(); return q; });",
        "show(\"q.join(Duration.ZERO)\", () -> q.join(Duration.ZERO));");

/exit
