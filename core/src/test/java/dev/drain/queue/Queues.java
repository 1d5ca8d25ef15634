package dev.drain.queue;

import dev.drain.support.Call;
import dev.drain.support.Outcome;
import dev.drain.support.Spawner;
import dev.drain.support.Waits;
import java.util.List;
import java.util.function.IntSupplier;
import java.util.function.Supplier;

/**
 * The steps the CPython ports share: starting a call that blocks in a queue and returning once it
 * waits in line (asyncio's {@code create_task(...)} followed by {@code await asyncio.sleep(0)}),
 * and acting on a queue while the threads that the actions wake stay in transit (asyncio's
 * synchronous calls with no {@code await} between them).
 */
final class Queues {
    private Queues() {}

    /** Starts {@code get()} on a new thread and returns once that thread waits in line. */
    static <T> Call<T> blockedGetter(Spawner spawn, ShutdownQueue<T> q, String name) {
        return inLine(q::waitingGetters, "get()", () -> spawn.call(name, q::get));
    }

    /** Starts {@code put(item)} on a new thread and returns once that thread waits in line. */
    static <T> Call<Void> blockedPutter(Spawner spawn, ShutdownQueue<T> q, String name, T item) {
        return inLine(q::waitingPutters, "put()", () -> spawn.run(name, () -> q.put(item)));
    }

    /** Starts {@code join()} on a new thread and returns once that thread waits for the count. */
    static Call<Void> blockedJoiner(Spawner spawn, ShutdownQueue<?> q, String name) {
        return inLine(q::waitingJoiners, "join()", () -> spawn.run(name, q::join));
    }

    /** Starts a call and waits until {@code waiting} has grown by one (counted before the start). */
    private static <V> Call<V> inLine(IntSupplier waiting, String method, Supplier<Call<V>> start) {
        int expected = waiting.getAsInt() + 1;
        Call<V> call = start.get();
        String name = call.thread().getName();
        Waits.until(name + " waits in " + method, () -> {
            if (call.isDone()) {
                throw new AssertionError(name + " ended instead of waiting in " + method + ": "
                        + call.outcome());
            }
            return waiting.getAsInt() == expected;
        });
        return call;
    }

    /**
     * Performs {@code steps} on the test's thread while holding the queue's lock, so that every
     * thread they wake stays in transit (woken but not yet running) until all of them are done.
     * A step that throws fails the test.
     */
    static void underLock(ShutdownQueue<?> q, Spawner.Action steps) {
        q.runLocked(() -> {
            try {
                steps.run();
            } catch (Exception e) {
                throw new AssertionError("a step taken under the queue's lock threw", e);
            }
        });
    }

    /** {@return how each call ended: its result as a string ("returned" for none), or the simple name of what it threw} */
    static List<String> endings(List<? extends Call<?>> calls) {
        return calls.stream().map(call -> switch (call.outcome()) {
            case Outcome.Returned<?> r -> r.value() == null ? "returned" : String.valueOf(r.value());
            case Outcome.Threw<?> t -> t.error().getClass().getSimpleName();
        }).toList();
    }

    /** {@return the name of the Python class that {@code kind} ports, as {@code str(queue)} prints it} */
    static String pythonName(QueueKind kind) {
        return switch (kind) {
            case FIFO -> "Queue";
            case LIFO -> "LifoQueue";
            case PRIORITY -> "PriorityQueue";
        };
    }
}
