// 02: a graceful shutdown, shutdown() (= shutdown(false)): the queue stops growing, the items
// already in it still drain, and every thread blocked in get() or put() is woken to re-check.
// Clauses: SQ-04 (nothing is added after shutdown), SQ-05 (consumers drain), SQ-07 (graceful
// shutdown wakes every waiter), SQ-17 (str(queue) shows "shutdown").

System.out.println("== 02 graceful shutdown: items drain, puts fail, blocked threads are woken ==");

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

// A call made on a thread of its own. Call.blocked(name, line, work) starts work on a new virtual
// thread and returns once that thread waits in line (line counts the waiters: q::waitingGetters,
// q::waitingPutters or q::waitingJoiners); it polls the count, for at most 5 s, no guessed sleep.
// end() waits for the call, at most 5 s, and for its thread, and says how the call ended.
record Call(Thread thread, CompletableFuture<String> ending) {
    static Call blocked(String name, IntSupplier line, Callable<?> work) {
        int before = line.getAsInt();
        var ending = new CompletableFuture<String>();
        Thread thread = Thread.ofVirtual().name(name).start(() -> {
            try {
                Object value = work.call();
                ending.complete(value == null ? "returned" : "returned " + value);
            } catch (Exception e) {
                ending.complete("threw " + e.getClass().getSimpleName());
            }
        });
        long deadline = System.nanoTime() + Duration.ofSeconds(5).toNanos();
        while (line.getAsInt() == before) {
            if (ending.isDone() || System.nanoTime() - deadline > 0) {
                throw new IllegalStateException(name + " did not wait in line: " + ending.getNow("still running"));
            }
            Thread.yield();
        }
        return new Call(thread, ending);
    }

    String end() throws Exception {
        String how = ending.get(5, TimeUnit.SECONDS);
        if (!thread.join(Duration.ofSeconds(5))) {
            throw new IllegalStateException(thread.getName() + " is still running");
        }
        return String.format("  %-48s -> %s", thread.getName(), how);
    }
}

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

/exit
