// 10: why ScopedValue. A binding is inherited by the subtasks a scope forks, cannot be changed (only rebound for a
// nested call), and ends with the call that made it; a ThreadLocal is not inherited, leaks between tasks on a
// reused thread, and is copied by hand. Clauses: WP-9 (context isolation), WP-17 (the caller's bindings).

import java.util.concurrent.StructuredTaskScope.Joiner;
System.out.println("== 10 why ScopedValue: inherited by forked subtasks, immutable, never leaking ==");

ScopedValue<String> REQUEST = ScopedValue.newInstance();          // the context we want handlers to see
ThreadLocal<String> local = new ThreadLocal<>();
InheritableThreadLocal<String> inheritable = new InheritableThreadLocal<>();

{
    System.out.println("1. The owner sets all three to request-1 and forks a subtask; what does the subtask see?");
    local.set("request-1");
    inheritable.set("request-1");
    ScopedValue.where(REQUEST, "request-1").call(() -> {
        var forkedMayLook = new CountDownLatch(1);
        try (var scope = StructuredTaskScope.open()) {
            var seen = scope.fork(() -> {
                await("the owner's change", forkedMayLook);
                String what = "ThreadLocal " + local.get() + ", InheritableThreadLocal " + inheritable.get() +
                        ", ScopedValue " + REQUEST.get();
                inheritable.set("changed by the subtask");
                return what;
            });
            inheritable.set("changed by the owner after the fork");
            forkedMayLook.countDown();
            scope.join();
            System.out.println("  the subtask saw: " + seen.get());
            System.out.println("  the owner sees: InheritableThreadLocal " + inheritable.get() +
                    " (copied at the fork, then the copies drift apart)");
        }
        System.out.println("  a ScopedValue has no set(); it is rebound for a nested call only: " +
                ScopedValue.where(REQUEST, "nested").call(() -> REQUEST.get()) + ", then " + REQUEST.get() + " again");
        return null;
    });
    System.out.println("  after the call that bound it: REQUEST.isBound() = " + REQUEST.isBound());
    local.remove();
    inheritable.remove();
}

{
    System.out.println("2. Two tasks, one after the other, on the one thread of an executor:");
    var executor = Executors.newSingleThreadExecutor();
    executor.submit(() -> local.set("task 1's user")).get(5, TimeUnit.SECONDS);
    System.out.println("  task 2 reads the ThreadLocal: " + executor.submit(() -> local.get()).get(5, TimeUnit.SECONDS) +
            "  (a leak: task 1 forgot local.remove())");
    executor.submit(() -> ScopedValue.where(REQUEST, "task 1's user").run(() -> { })).get(5, TimeUnit.SECONDS);
    System.out.println("  task 2 reads the ScopedValue: bound " + executor.submit(() -> REQUEST.isBound()).get(5, TimeUnit.SECONDS) +
            "  (the binding ended with task 1's call)");
    System.out.println("  and to hand a ThreadLocal to a task, you copy it by hand: capture, set() in the task, remove() after");
    executor.shutdown();
    executor.awaitTermination(5, TimeUnit.SECONDS);
}

{
    System.out.println("3. A pool: the caller binds REQUEST around run() (WP-17); two items meet at a barrier, and");
    System.out.println("   each handler forks a subtask of its own:");
    var bothInFlight = new CyclicBarrier(2);
    Map<Integer, String> seen = new ConcurrentSkipListMap<>();
    var pool = WorkerPool.<Integer, Integer>builder(item -> {
        bothInFlight.await(5, TimeUnit.SECONDS);              // both items are in flight, side by side
        try (var scope = StructuredTaskScope.open()) {
            var sub = scope.fork(() -> REQUEST.get() + ", item=" + ItemContext.current().item());
            scope.join();
            seen.put(item, "handler: " + REQUEST.get() + ", item=" + ItemContext.current().item() + ", attempt=" +
                    ItemContext.current().attempt() + ", ThreadLocal " + local.get() + "; its subtask: " + sub.get());
        }
        return item;
    }).workers(2).itemTimeout(BOUND).name("demo10").build();
    local.set("the caller's");
    var ran = ScopedValue.where(REQUEST, "request-7").call(() -> runToEnd(pool, List.of(0, 1)));
    seen.forEach((item, what) -> System.out.println("  item " + item + " " + what));
    System.out.println("  the run " + ran.end() + "; on the caller's thread, ItemContext.find() = " + ItemContext.find());
    local.remove();
}

tryIt("10", "a handler reads a ScopedValue the caller did NOT bind around run(). What happens to the item?",
        "var unbound = WorkerPool.<Integer, String>builder(n -> REQUEST.get()).workers(1).name(\"unbound\").build();",
        "System.out.println(runToEnd(unbound, List.of(1)).end());");

/exit
