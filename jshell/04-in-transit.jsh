// 04: threads in transit. A put wakes the longest-waiting getter (a get, the longest-waiting putter), but
// waking hands over nothing: the woken thread re-checks the queue when it runs, and sees any shutdown that
// came first. Clauses: SQ-06 (one wake-up, re-checked), SQ-12 (cases C3, C4, C5 of specs/probes.md), SQ-21.

System.out.println("== 04 in transit: a woken thread re-checks the queue when it runs (C3, C4, C5) ==");
System.out.println("""
        queue.atomically(q -> { ... }) runs non-blocking calls as one step (SQ-21), what asyncio does between two
        awaits: a thread that a step wakes cannot run before the step ends. Until then it is "in transit".""");

{
    System.out.println("C3: two getters wait; a put wakes getter-1; shutdown(true) drains the item before it runs.");
    var c3 = new ShutdownQueue<Integer>(0);
    var first = Call.blocked("C3 getter-1  (woken by the put)", c3::waitingGetters, c3::get);
    var second = Call.blocked("C3 getter-2", c3::waitingGetters, c3::get);
    c3.atomically(q -> {
        show("q.putNowait(7)", () -> { q.putNowait(7); return null; });
        show("q  (getter-1 left the line: in transit)", () -> q);
        show("q.shutdown(true)", () -> q.shutdown(true));
    });
    System.out.println(first.end());
    System.out.println(second.end());
    show("c3  (the item went to shutdown(true), not to getter-1)", () -> c3);
}

{
    System.out.println("C4: one getter waits; a put wakes it; a graceful shutdown() comes before it runs: the item stays.");
    var c4 = new ShutdownQueue<Integer>(0);
    var getter = Call.blocked("C4 getter  (woken by the put)", c4::waitingGetters, c4::get);
    c4.atomically(q -> {
        show("q.putNowait(7)", () -> { q.putNowait(7); return null; });
        show("q.shutdown()", () -> { q.shutdown(); return null; });
        show("q", () -> q);
    });
    System.out.println(getter.end());
    show("c4  (taken, not yet acknowledged: tasks=1)", () -> c4);
}

{
    System.out.println("C5: the queue is full, two putters wait; a get wakes putter-1; shutdown() comes before it runs.");
    var c5 = new ShutdownQueue<Integer>(1);
    c5.put(1);
    var first = Call.blocked("C5 putter-1  (woken by the get)", c5::waitingPutters, () -> { c5.put(2); return null; });
    var second = Call.blocked("C5 putter-2", c5::waitingPutters, () -> { c5.put(3); return null; });
    c5.atomically(q -> {
        show("q.getNowait()", () -> q.getNowait());
        show("q.shutdown()", () -> { q.shutdown(); return null; });
    });
    System.out.println(first.end());
    System.out.println(second.end());
    show("c5  (the freed slot stays empty)", () -> c5);
}

{
    System.out.println("A blocking call inside a step is refused: its wait would let other threads in.");
    var refuses = new ShutdownQueue<Integer>(0);
    show("refuses.atomically(q -> q.get())", () -> { refuses.atomically(q -> q.get()); return null; });
}

var b = new ShutdownQueue<Integer>(0);
var waiting = Call.blocked("getter  (woken by the put)", b::waitingGetters, b::get);

tryIt("04", "a getter waits on b. In one step we put 8 and take it ourselves (getNowait). Who gets 8, and " +
                "where is the woken getter once the step ends? (SQ-06: barging)",
        "b.atomically(q -> show(\"q.putNowait(8), then q.getNowait()\", () -> { q.putNowait(8); return q.getNowait(); }));",
        "until(\"the getter waits again\", () -> b.waitingGetters() == 1); show(\"b\", () -> b);",
        "b.shutdown(); System.out.println(waiting.end());");

/exit
