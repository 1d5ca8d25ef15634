// 03: an immediate shutdown, shutdown(true): what a graceful shutdown does (script 02), and the
// queued items are removed at once and handed back to the caller, one unfinished task each.
// Items a consumer took before the shutdown are not touched: join() still waits for their taskDone().
// Clauses: SQ-08 (immediate shutdown, the drain, join), SQ-09 (repeated and mixed shutdowns),
// SQ-10 (taskDone ignores shutdown), SQ-11 (join).

System.out.println("== 03 immediate shutdown: shutdown(true) returns the dropped items ==");

// show(code, call): runs the call and prints what it returned or threw, like a Python REPL line.
void show(String code, Callable<?> call) {
    String result;
    try {
        Object value = call.call();
        result = value == null ? "ok" : "returns " + value;
    } catch (Exception e) {
        result = "throws " + e.getClass().getSimpleName() + " (" + e.getMessage() + ")";
    }
    System.out.printf("  %-48s -> %s%n", code, result);
}

var q = new ShutdownQueue<String>(0);

{
    System.out.println("Three items queued; a consumer takes one and is still working on it:");
    q.put("a");
    q.put("b");
    q.put("c");
    show("q.get()", () -> q.get());
    show("q", () -> q);
    System.out.println("shutdown(true) drops the rest and returns it, in the order get() would have:");
    show("q.shutdown(true)", () -> q.shutdown(true));
    show("q", () -> q);
    show("q.get()  (shut down, nothing left)", () -> q.get());
    show("q.put(\"d\")", () -> { q.put("d"); return null; });
}

{
    System.out.println("The drop subtracted b and c from the count; a is taken, so join() waits for its taskDone():");
    show("q.unfinishedTasks()", () -> q.unfinishedTasks());
    show("q.join(Duration.ZERO)", () -> q.join(Duration.ZERO));
    show("q.taskDone()  (the consumer is done with a)", () -> { q.taskDone(); return null; });
    show("q.join(Duration.ZERO)", () -> q.join(Duration.ZERO));
    show("q.taskDone()  (b and c are nobody's to finish)", () -> { q.taskDone(); return null; });
}

{
    System.out.println("Shutdown is sticky: again immediate drops nothing, graceful does not reopen or downgrade:");
    show("q.shutdown(true)", () -> q.shutdown(true));
    show("q.shutdown(false)", () -> q.shutdown(false));
    show("q", () -> q);
}

{
    System.out.println("Compare script 02: the same queue shut down gracefully keeps b and c for the consumers:");
    var g = new ShutdownQueue<String>(0);
    g.put("a");
    g.put("b");
    g.put("c");
    show("g.get()", () -> g.get());
    show("g.shutdown(false)  (drops nothing)", () -> g.shutdown(false));
    show("g", () -> g);
    show("g.get()", () -> g.get());
    show("g.get()", () -> g.get());
    show("g.get()", () -> g.get());
}

/exit
