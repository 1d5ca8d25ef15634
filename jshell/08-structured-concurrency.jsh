// 08: structured concurrency (JDK 25, a preview API: JEP 505), the ground the pool stands on, one idea at a
// time: open, fork, join, Subtask.get(); a Joiner; a failure cancels the siblings; close() waits for every
// subtask's thread. The pool's own use of it is dev.drain.pool.Structured (WP-17, decisions 0006 and 0007).

import java.util.concurrent.StructuredTaskScope.Joiner;
import java.util.concurrent.StructuredTaskScope.Subtask;
System.out.println("== 08 structured concurrency: StructuredTaskScope, one idea at a time ==");

{
    System.out.println("1. open() a scope, fork() subtasks (each on a new virtual thread), join() them all, then get():");
    try (var scope = StructuredTaskScope.open()) {
        Subtask<String> a = scope.fork(() -> "a on " + (Thread.currentThread().isVirtual() ? "a virtual thread" : "?"));
        Subtask<Integer> b = scope.fork(() -> 6 * 7);
        show("scope.join()  (waits for both)", () -> scope.join());
        show("a.state(), a.get()", () -> a.state() + ", " + a.get());
        show("b.state(), b.get()", () -> b.state() + ", " + b.get());
    } // close(): the scope is over; its threads are all gone
}

{
    System.out.println("2. A Joiner decides what join() returns and when it stops waiting:");
    try (var scope = StructuredTaskScope.open(Joiner.<Integer>allSuccessfulOrThrow())) {
        for (int i = 1; i <= 3; i++) {
            int n = i;
            scope.fork(() -> n * n);
        }
        show("allSuccessfulOrThrow: join()", () -> scope.join().map(Subtask::get).toList());
    }
    var slowOneInterrupted = new CountDownLatch(1);
    try (var scope = StructuredTaskScope.open(Joiner.<String>anySuccessfulResultOrThrow())) {
        scope.fork(() -> { try { awaitInterrupt(); return "slow"; } catch (InterruptedException e) { slowOneInterrupted.countDown(); throw e; } });
        scope.fork(() -> "fast");
        show("anySuccessfulResultOrThrow: join()", () -> scope.join());
        await("the slow one's interrupt", slowOneInterrupted);
        System.out.println("  the first success cancelled the scope: the slow subtask was interrupted");
    }
}

{
    System.out.println("3. A failure cancels the siblings (open()'s joiner is awaitAllSuccessfulOrThrow):");
    try (var scope = StructuredTaskScope.open()) {
        Subtask<String> sibling = scope.fork(() -> { awaitInterrupt(); return "never"; });
        scope.fork(() -> { throw new IOException("subtask 2 fails"); });
        show("scope.join()", () -> scope.join());
        show("sibling.state()  (interrupted, its result never counts)", () -> sibling.state());
    }
}

{
    System.out.println("4. close() returns only when every subtask's thread has ended, even after join() has thrown:");
    Thread owner = Thread.currentThread();
    var forked = new CopyOnWriteArrayList<Thread>();
    var joined = new AtomicBoolean();
    var cleanupMayEnd = new CountDownLatch(1);
    var scope = StructuredTaskScope.open(Joiner.awaitAllSuccessfulOrThrow(),
            config -> config.withThreadFactory(task -> { Thread t = Thread.ofVirtual().unstarted(task); forked.add(t); return t; }));
    var releaser = Call.start("releaser", () -> {
        until("the owner waits in close()", () -> joined.get() && parked(owner) && forked.get(0).isAlive());
        String seen = "the owner waited in close() while the cleanup ran";
        cleanupMayEnd.countDown();
        return seen;
    });
    try (scope) {
        scope.fork(() -> {
            try { awaitInterrupt(); } finally { await("the releaser", cleanupMayEnd); } // a slow cleanup after the cancel
            return null;
        });
        scope.fork(() -> { throw new IllegalStateException("subtask 2 fails"); });
        show("scope.join()  (returns as soon as the scope is cancelled)", () -> scope.join());
        joined.set(true);
    }
    System.out.println("  close() returned; the cleaning subtask's thread is alive: " + forked.get(0).isAlive());
    System.out.println(releaser.end());
}

tryIt("08", "with anySuccessfulResultOrThrow, one subtask fails and one returns \"ok\": what does join() return?",
        "try (var s = StructuredTaskScope.open(Joiner.<String>anySuccessfulResultOrThrow())) { s.fork(() -> { throw new IOException(\"no\"); }); s.fork(() -> \"ok\"); show(\"s.join()\", s::join); }");

/exit
