// startup.jsh: the imports and the helpers the scripts share. jshell/drain-jshell and JShellScriptsTest
// evaluate it before every script; in a session, /list -start shows it and /methods lists the helpers.
import dev.drain.queue.*;
import dev.drain.pool.*;
// ClosingQueue (script 07) is a foil shown beside ShutdownQueue: dev.drain.foils is not part of the library.
import dev.drain.foils.*;
import dev.drain.measure.JvmThreads; // the JSON thread dump as a tree (drain-measure's, not the library's)
import java.time.*;
import java.util.*;
import java.util.concurrent.*;
import java.util.concurrent.atomic.*;
import java.util.function.*;
import java.util.stream.*;

// BOUND: the longest any wait in the scripts may take; a bug then shows as an exception, never a hang.
Duration BOUND = Duration.ofSeconds(5);

// show(code, call): runs the call and prints what it returned or threw, like a line typed at Python's prompt.
void show(String code, Callable<?> call) {
    String result;
    try {
        Object value = call.call();
        result = value == null ? "ok" : "returns " + value;
    } catch (Exception e) {
        result = "throws " + e.getClass().getSimpleName() + (e.getMessage() == null ? "" : " (" + e.getMessage() + ")");
    }
    System.out.printf("  %-50s -> %s%n", code, result);
}

// until(what, condition): polls the condition until it holds, for at most BOUND (no guessed sleeps).
void until(String what, BooleanSupplier condition) {
    long deadline = System.nanoTime() + BOUND.toNanos();
    for (int polls = 0; !condition.getAsBoolean(); polls++) {
        if (System.nanoTime() - deadline > 0) {
            throw new IllegalStateException("waited " + BOUND + " until " + what);
        }
        if (polls > 100) {
            java.util.concurrent.locks.LockSupport.parkNanos(100_000); // back off between polls: 0.1 ms
        }
    }
}

// await(what, latch): waits for the latch for at most BOUND, and says what did not happen if it times out.
void await(String what, CountDownLatch latch) throws InterruptedException {
    if (!latch.await(BOUND.toNanos(), TimeUnit.NANOSECONDS)) {
        throw new IllegalStateException("waited " + BOUND + " for " + what);
    }
}

// awaitInterrupt(): a wait that only an interrupt ends (it throws InterruptedException); bounded by BOUND.
void awaitInterrupt() throws InterruptedException {
    await("an interrupt", new CountDownLatch(1));
}

// swallowing(n, release): a stubborn handler: swallows its first n interrupts; the next one ends it, or release does.
String swallowing(int n, CountDownLatch release) throws InterruptedException {
    for (int swallowed = 0; ; swallowed++) {
        try {
            await("an interrupt or the release", release);
            return "released after swallowing " + swallowed + " interrupt(s)";
        } catch (InterruptedException e) {
            if (swallowed == n) throw e; // interrupt n + 1 ends it
        }
    }
}

// A call on a thread of its own. Call.start(name, work) starts it on a virtual thread;
// Call.blocked(name, line, work) also returns only once the call waits in line (line counts the
// waiters: q::waitingGetters, q::waitingPutters, q::waitingJoiners). running(d): still running
// after waiting d for it? end(): waits for the call (at most BOUND) and says how it ended.
record Call(Thread thread, CompletableFuture<String> ending) {
    static Call start(String name, Callable<?> work) {
        var ending = new CompletableFuture<String>();
        Thread thread = Thread.ofVirtual().name(name).start(() -> {
            try {
                Object value = work.call();
                ending.complete(value == null ? "returned" : "returned " + value);
            } catch (Exception e) {
                ending.complete("threw " + e.getClass().getSimpleName());
            }
        });
        return new Call(thread, ending);
    }

    static Call blocked(String name, IntSupplier line, Callable<?> work) {
        int before = line.getAsInt();
        Call call = start(name, work);
        until(name + " waits in line", () -> line.getAsInt() != before || call.ending().isDone());
        if (line.getAsInt() == before) {
            throw new IllegalStateException(name + " did not wait in line: it " + call.ending().join());
        }
        return call;
    }

    boolean running(Duration wait) throws InterruptedException {
        return !thread.join(wait);
    }

    String end() throws Exception {
        String how = ending.get(BOUND.toNanos(), TimeUnit.NANOSECONDS);
        if (!thread.join(BOUND)) {
            throw new IllegalStateException(thread.getName() + " is still running");
        }
        return String.format("  %-50s -> %s", thread.getName(), how);
    }
}

// parked(thread): whether the thread waits (parked, with or without a timeout): for calls with no line to count.
boolean parked(Thread thread) {
    return thread.getState() == Thread.State.WAITING || thread.getState() == Thread.State.TIMED_WAITING;
}

// Ran and runToEnd(pool, items): one whole run on this thread: run(), the iteration to its end, close().
// Results belong to the thread that called run() (WP-17), and JShell promises nothing about which thread
// runs a snippet (its local execution engine starts a new one for each), so a run is used within one
// snippet: a { block }, or a method such as this one. Script 11 writes the loop out.
record Ran<T, R>(List<R> results, String end, RunOutcome<T> outcome, PoolStats stats) {}

<T, R> Ran<T, R> runToEnd(WorkerPool<T, R> pool, Iterable<? extends T> items) {
    List<R> results = new ArrayList<>();
    String end = "ended normally";
    Results<T, R> run = pool.run(items);
    try (run) {
        while (run.hasNext()) {
            results.add(run.next());
        }
    } catch (PoolFailure | PoolAborted e) {
        end = "threw " + e.getClass().getSimpleName() + ": " + e.getMessage();
    }
    return new Ran<>(results, end, run.outcome().orElseThrow(), run.stats());
}

// tryIt(script, predict, lines): the exercise every script ends with: a question, and the lines that answer it.
void tryIt(String script, String predict, String... lines) {
    System.out.println("== Try it ==");
    System.out.println("Predict: " + predict);
    System.out.println("Then run them (./jshell/drain-jshell -i " + script + " keeps the script's variables):");
    for (String line : lines) {
        System.out.println("  jshell> " + line);
    }
}
