package dev.drain.snippets;

import dev.drain.measure.JvmThreads;
import dev.drain.pool.PoolAborted;
import dev.drain.pool.PoolFailure;
import dev.drain.pool.Results;
import dev.drain.pool.WorkerPool;
import dev.drain.queue.QueueShutDown;
import dev.drain.queue.ShutdownQueue;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeoutException;
import java.util.stream.IntStream;

/**
 * The code of the javadoc's {@code {@snippet}}s and of the README's samples of the queue and the pool,
 * region by region; {@code queue}, {@code recipe}, {@code context} and {@code tree}, which the README's
 * tour once showed (the JShell lessons teach them now), stay as examples that run. The build compiles this
 * file, {@code TourSnippetsTest} runs every region and checks what it prints, and checks that README.md
 * shows each of its regions exactly as it is here.
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
        String taken = queue.get();                  // a consumer took "a" and works on it
        List<String> dropped = queue.shutdown(true); // the emergency: b and c are dropped, never processed
        queue.taskDone();                            // "a" is done
        boolean joined = queue.join(Duration.ZERO);  // true: nothing is outstanding now...
        System.out.println("join returned " + joined + " after " + taken + ", yet " + dropped + " never ran");
        // ...which is not success: record what shutdown(true) returned apart, as work left undone
        // @end
    }

    static void recipe() throws Exception {
        // @start region="recipe"
        ShutdownQueue<Integer> queue = new ShutdownQueue<>(4);
        List<Integer> done = new CopyOnWriteArrayList<>();
        Runnable consumer = () -> {
            while (true) {
                int item;
                try {
                    item = queue.get();
                } catch (QueueShutDown e) {
                    return;                          // shut down and drained: the normal way out
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt(); // cancelled: keep the interrupt, and stop
                    return;
                }
                try {
                    done.add(item * item);
                } finally {
                    queue.taskDone();                // in a finally: whatever happens, join() can trust the count
                }
            }
        };
        List<Thread> consumers = List.of(Thread.ofVirtual().start(consumer), Thread.ofVirtual().start(consumer));
        for (int item = 1; item <= 10; item++) {
            queue.put(item);                         // the producer
        }
        queue.shutdown();                            // 1. producers are done: graceful, what is queued still drains
        queue.join();                                // 2. the coordinator waits until every item is done...
        for (Thread c : consumers) {
            c.join();                                // 3. the consumers have left on QueueShutDown
        }
        System.out.println("work done: " + done.size() + " items"); // ...and only then declares the work done
        // @end
    }

    static void pool() {
        // @start region="pool"
        { // one block: JShell takes it whole, as one snippet
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
        }
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

    static void context() throws Exception {
        // @start region="context"
        ScopedValue<String> requestId = ScopedValue.newInstance(); // usually a static final field
        WorkerPool<Integer, String> pool = WorkerPool.<Integer, String>builder(
                n -> requestId.get() + " handled item " + n).name("tour").build();
        ScopedValue.where(requestId, "request-7").run(() -> {    // the caller binds its context...
            try (Results<Integer, String> results = pool.run(List.of(1))) {
                System.out.println(results.next());             // ...and the handler sees it: request-7 handled item 1
            }
        });
        // @end
    }

    static void tree() throws Exception {
        // @start region="tree"
        CountDownLatch started = new CountDownLatch(1);
        CountDownLatch finish = new CountDownLatch(1);
        WorkerPool<Integer, String> pool = WorkerPool.<Integer, String>builder(n -> {
            started.countDown();
            finish.await();                  // hold the attempt open while we look
            return "item " + n;
        }).workers(1).name("tree").build();
        try (Results<Integer, String> results = pool.run(List.of(1))) {
            started.await();
            JvmThreads.dump().tree("tree").forEach(System.out::println); // the JSON thread dump, as a tree
            finish.countDown();
            results.forEachRemaining(result -> { });
        }
        // tree (owned by main): tree-watchdog-1, tree-driver-2        the run's scope: the caller's
        //   tree-workers (owned by tree-driver-2): tree-worker-4        the driver's
        //     tree-attempt (owned by tree-worker-4): tree-attempt-5     a worker's, one per attempt
        // @end
    }
}
