package dev.drain.snippets;

import dev.drain.pool.PoolAborted;
import dev.drain.pool.PoolFailure;
import dev.drain.pool.Results;
import dev.drain.pool.WorkerPool;
import dev.drain.queue.QueueShutDown;
import dev.drain.queue.ShutdownQueue;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeoutException;
import java.util.stream.IntStream;

/**
 * The code of the README's tour and of the javadoc's {@code {@snippet}}s, region by region. The
 * build compiles this file, {@code TourSnippetsTest} runs every region and checks what it prints,
 * and checks that README.md shows each region exactly as it is here.
 */
final class TourSnippets {
    private TourSnippets() {}

    static void queue() throws Exception {
        // @start region="queue"
        ShutdownQueue<Integer> queue = ShutdownQueue.fifo(2); // at most 2 items; 0 means unbounded
        queue.put(1);                       // blocks while the queue is full
        queue.putNowait(2);                 // throws QueueFull instead of blocking
        System.out.println(queue);          // <Queue maxsize=2 _queue=[1, 2] tasks=2>, as Python prints it
        int first = queue.get();            // blocks while the queue is empty
        queue.taskDone();                   // one item finished
        System.out.println(first + " taken, unfinished: " + queue.unfinishedTasks()); // 1 taken, unfinished: 1
        // @end
    }

    static void graceful() throws Exception {
        // @start region="graceful"
        ShutdownQueue<String> queue = new ShutdownQueue<>(0);
        queue.put("a");
        queue.put("b");
        queue.shutdown();                   // graceful: no more puts, what is queued still drains
        try {
            queue.put("c");
        } catch (QueueShutDown e) {
            System.out.println("put after shutdown: " + e.getMessage());
        }
        while (true) {                      // a consumer's loop ends by itself
            try {
                System.out.println("got " + queue.get());
                queue.taskDone();
            } catch (QueueShutDown e) {
                System.out.println("drained");
                break;
            }
        }
        // @end
    }

    static void immediate() throws Exception {
        // @start region="immediate"
        ShutdownQueue<String> queue = new ShutdownQueue<>(0);
        queue.put("a");
        queue.put("b");
        queue.put("c");
        String taken = queue.get();         // taken before the shutdown, not yet done
        List<String> dropped = queue.shutdown(true); // immediate: drop what is queued, hand it back
        System.out.println("dropped " + dropped + ", still unfinished: " + queue.unfinishedTasks());
        queue.taskDone();                   // the item taken before still counts until it is done
        System.out.println(taken + " done; join returns: " + queue.join(Duration.ZERO));
        // @end
    }

    static void pool() {
        // @start region="pool"
        WorkerPool<Integer, String> pool = WorkerPool.<Integer, String>builder(n -> "item " + n + " squared is " + n * n)
                .workers(4)                          // four items at a time
                .queueSize(8)                        // the source is never more than 8 + 4 + 1 items ahead
                .itemTimeout(Duration.ofSeconds(2))  // then interrupt, and again, three rounds in all
                .retryable(IOException.class, TimeoutException.class)
                .maxRetries(2)
                .build();
        try (Results<Integer, String> results = pool.run(IntStream.rangeClosed(1, 5).boxed())) {
            while (results.hasNext()) {
                System.out.println(results.next());  // in completion order, which may not be source order
            }
        } catch (PoolFailure failure) {              // only if some item failed permanently
            System.out.println(failure.failures());
        }
        System.out.println("threads left after close: " + pool.liveThreads()); // always 0
        // @end
    }

    static void stop() throws Exception {
        // @start region="stop"
        WorkerPool<Integer, Integer> pool = WorkerPool.<Integer, Integer>builder(n -> n).workers(2).build();
        try (Results<Integer, Integer> results = pool.run(IntStream.iterate(0, n -> n + 1).boxed())) { // endless
            results.next();
            Thread.ofVirtual().start(pool::requestStop).join(); // any thread; returns at once
            results.forEachRemaining(n -> { });      // queued and in-flight work drains, then the end
            System.out.println("stopped normally after " + results.stats().pulled() + " items");
        }
        WorkerPool<Integer, Integer> doomed = WorkerPool.<Integer, Integer>builder(n -> n).workers(2).build();
        try (Results<Integer, Integer> results = doomed.run(IntStream.iterate(0, n -> n + 1).boxed())) {
            doomed.abort();                          // emergency: drop the queue, cancel attempts
            results.forEachRemaining(n -> { });
        } catch (PoolAborted aborted) {              // the end of an aborted run names what was left
            System.out.println("aborted; nothing left running: " + (doomed.liveThreads() == 0));
        }
        // @end
    }
}
