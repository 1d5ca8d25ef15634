// 04: threads in transit. A put wakes the longest-waiting getter (a get, the longest-waiting
// putter), but waking hands over nothing: the woken thread re-checks the queue when it runs. If a
// shutdown comes between the wake-up and the run, the thread sees the shut-down queue (Python:
// the woken task's future is resolved, but the task has not been scheduled yet).
// Clauses: SQ-06 (one wake-up per item or slot, re-checked on waking), SQ-12 (in transit: the
// cases C3, C4, C5 of specs/probes.md).
//
// To hold a woken thread in transit we need a step that JShell cannot give us: several calls
// while the queue's lock stays held, so that the woken thread cannot run until they are all done.
// ShutdownQueue.runLocked(Runnable) is that step. It is a package-private TEST SEAM, not API; we
// reach it by reflection, for this demonstration only.

System.out.println("""
        == 04 in transit: a woken thread re-checks the queue when it runs (C3, C4, C5) ==
        This script reaches the package-private TEST SEAM ShutdownQueue.runLocked(Runnable) by reflection,
        for the demonstration only (it is not API): it holds the queue's lock across several calls, so a
        thread woken by one of them cannot run until all are done: it is "in transit".""");

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

// underLock(q, steps): runs the steps while holding q's lock, so that a thread they wake cannot
// run until they are all done. It goes through ShutdownQueue.runLocked(Runnable), a package-private
// TEST SEAM (not API), reached by reflection: setAccessible works only because drain's classes are
// on the class path, in the unnamed module.
void underLock(ShutdownQueue<?> q, Runnable steps) throws ReflectiveOperationException {
    var runLocked = ShutdownQueue.class.getDeclaredMethod("runLocked", Runnable.class);
    runLocked.setAccessible(true);
    runLocked.invoke(q, steps);
}

{
    System.out.println("C3: two getters wait; a put wakes getter-1; shutdown(true) drains the item before it runs.");
    var c3 = new ShutdownQueue<Integer>(0);
    var first = Call.blocked("C3 getter-1  (woken by the put)", c3::waitingGetters, c3::get);
    var second = Call.blocked("C3 getter-2", c3::waitingGetters, c3::get);
    underLock(c3, () -> {
        show("c3.putNowait(7)", () -> { c3.putNowait(7); return null; });
        show("c3  (getter-1 left the line: in transit)", () -> c3);
        show("c3.shutdown(true)", () -> c3.shutdown(true));
    });
    System.out.println(first.end());
    System.out.println(second.end());
    show("c3", () -> c3);
}

{
    System.out.println("C4: one getter waits; a put wakes it; a graceful shutdown() comes before it runs: the item stays.");
    var c4 = new ShutdownQueue<Integer>(0);
    var getter = Call.blocked("C4 getter  (woken by the put)", c4::waitingGetters, c4::get);
    underLock(c4, () -> {
        show("c4.putNowait(7)", () -> { c4.putNowait(7); return null; });
        show("c4.shutdown()", () -> { c4.shutdown(); return null; });
        show("c4", () -> c4);
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
    underLock(c5, () -> {
        show("c5.getNowait()", () -> c5.getNowait());
        show("c5.shutdown()", () -> { c5.shutdown(); return null; });
    });
    System.out.println(first.end());
    System.out.println(second.end());
    show("c5  (the freed slot stays empty)", () -> c5);
}

/exit
