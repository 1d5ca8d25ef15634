// 05: join() and the unfinished-task count. Each put adds one, each taskDone() takes one off, an
// immediate shutdown takes one off per item it drops (never below zero), and join() returns once
// the count has been zero since it was called: it checks once, as asyncio's join() does.
// Clauses: SQ-10 (taskDone ignores shutdown), SQ-11 (join waits for zero, once), SQ-08 (the
// clamp, probe B2; join after an immediate shutdown waits for items taken before it, probe B1).

System.out.println("== 05 join accounting: taskDone, join's single check, the clamp, join after shutdown(true) ==");

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
    System.out.println("Two items put, a thread waits in join(); a consumer gets and finishes them one by one:");
    var q = new ShutdownQueue<String>(0);
    q.put("x");
    q.put("y");
    var joiner = Call.blocked("joiner  (waits in q.join())", q::waitingJoiners, () -> { q.join(); return null; });
    show("q.get()", () -> q.get());
    show("q.taskDone()", () -> { q.taskDone(); return null; });
    show("q  (one task left)", () -> q);
    show("q.waitingJoiners()  (still waiting)", () -> q.waitingJoiners());
    show("q.get()", () -> q.get());
    show("q.taskDone()  (the count reaches zero)", () -> { q.taskDone(); return null; });
    System.out.println(joiner.end());
}

{
    System.out.println("""
            join() checks once. Under the test seam runLocked (reflection, as in script 04) the count reaches
            zero and a put raises it again before the joiner runs; the joiner returns all the same:""");
    var once = new ShutdownQueue<Integer>(0);
    once.put(1);
    var joiner = Call.blocked("joiner  (waits in once.join())", once::waitingJoiners, () -> { once.join(); return null; });
    underLock(once, () -> {
        show("once.get()", () -> once.get());
        show("once.taskDone()  (zero: the joiner is released)", () -> { once.taskDone(); return null; });
        show("once.put(2)  (before the joiner runs)", () -> { once.put(2); return null; });
    });
    System.out.println(joiner.end());
    show("once  (asyncio returns; queue.Queue would wait)", () -> once);
}

{
    System.out.println("The clamp (B2): two taskDone() calls for items nobody took, then shutdown(true) drops both:");
    var clamp = new ShutdownQueue<String>(0);
    clamp.put("a");
    clamp.put("b");
    show("clamp.taskDone()", () -> { clamp.taskDone(); return null; });
    show("clamp.taskDone()", () -> { clamp.taskDone(); return null; });
    show("clamp", () -> clamp);
    show("clamp.shutdown(true)", () -> clamp.shutdown(true));
    show("clamp.unfinishedTasks()  (0, not -2)", () -> clamp.unfinishedTasks());
    show("clamp.taskDone()", () -> { clamp.taskDone(); return null; });
}

{
    System.out.println("join() after shutdown(true) (B1): the drop does not release a joiner while a taken item is unfinished:");
    var taken = new ShutdownQueue<String>(0);
    taken.put("a");
    taken.put("b");
    taken.put("c");
    show("taken.get()  (a consumer is working on a)", () -> taken.get());
    var joiner = Call.blocked("joiner  (waits in taken.join())", taken::waitingJoiners, () -> { taken.join(); return null; });
    show("taken", () -> taken);
    show("taken.shutdown(true)", () -> taken.shutdown(true));
    show("taken  (a is still unfinished)", () -> taken);
    show("taken.waitingJoiners()  (still waiting)", () -> taken.waitingJoiners());
    show("taken.taskDone()  (the consumer finishes a)", () -> { taken.taskDone(); return null; });
    System.out.println(joiner.end());
}

/exit
