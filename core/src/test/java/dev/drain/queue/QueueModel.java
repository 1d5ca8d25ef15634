package dev.drain.queue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * The specification ({@code specs/shutdown-queue.md}) as code: what a {@link ShutdownQueue} of
 * integers does for a client on a single thread, written to be checked against the clauses line by
 * line rather than to be fast or concurrent.
 *
 * <p>Only the operations that cannot block are modelled: the {@code Nowait} forms, the timed forms
 * with a zero or negative timeout, {@code taskDone}, {@code join} with a zero or negative timeout,
 * both shutdowns and the observers. With a single thread there are no waiters, so the model has
 * no lines of getters, putters or joiners, and nobody else can add an item, free a slot or finish
 * a task while the client would wait: a wait could only time out. The methods have the queue's
 * names and throw the queue's exceptions, so that a test runs the same operation on both.
 *
 * <p>Not thread-safe; one model per sequence of operations.
 */
final class QueueModel {
    private final QueueKind kind;
    private final int maxsize;

    /**
     * The items in storage order, as Python's {@code list(q._queue)} shows them: in order of
     * arrival for FIFO and LIFO, and laid out as Python's {@code heapq} lays out a heap for
     * PRIORITY (SQ-01).
     */
    private final List<Integer> items = new ArrayList<>();

    /** SQ-02, SQ-08, SQ-10: +1 per put, -1 per taskDone, -1 per drained item while above zero. */
    private int unfinished;

    /** SQ-07, SQ-09: set by the first shutdown of either kind and never cleared. */
    private boolean shutdown;

    QueueModel(QueueKind kind, int maxsize) {
        this.kind = kind;
        this.maxsize = maxsize;
    }

    // ---- puts ------------------------------------------------------------------------------

    /** SQ-02: shutdown is checked before room; a put stores the item and adds one unfinished task. */
    void putNowait(Integer item) throws QueueShutDown, QueueFull {
        if (shutdown) {
            throw new QueueShutDown(); // SQ-02, SQ-04: nothing is added after a shutdown, full or not
        }
        if (full()) {
            throw new QueueFull(); // SQ-02
        }
        add(item);
    }

    /**
     * SQ-15: a shutdown wins over the argument check, the argument check over room; a zero timeout
     * does not wait, and a longer one could only run out, since no other thread frees a slot.
     */
    void put(Integer item, Duration timeout) throws QueueShutDown, QueueFull {
        if (shutdown) {
            throw new QueueShutDown(); // SQ-15: even for a negative timeout; SQ-04
        }
        if (timeout.isNegative()) {
            throw new IllegalArgumentException("timeout must not be negative: " + timeout); // SQ-15
        }
        if (full()) {
            throw new QueueFull(); // SQ-15: the timeout passes with the queue still full
        }
        add(item);
    }

    // ---- gets ------------------------------------------------------------------------------

    /** SQ-03: an item is returned whenever there is one, shut down or not; the count is untouched. */
    Integer getNowait() throws QueueShutDown, QueueEmpty {
        if (items.isEmpty()) {
            if (shutdown) {
                throw new QueueShutDown(); // SQ-03, SQ-05: shut down and empty
            }
            throw new QueueEmpty(); // SQ-03
        }
        return removeNext();
    }

    /**
     * SQ-15: a shut-down empty queue wins over the argument check, the argument check over
     * emptiness; a zero timeout does not wait, and a longer one could only run out.
     */
    Integer get(Duration timeout) throws QueueShutDown, QueueEmpty {
        if (items.isEmpty() && shutdown) {
            throw new QueueShutDown(); // SQ-15: even for a negative timeout; SQ-05
        }
        if (timeout.isNegative()) {
            throw new IllegalArgumentException("timeout must not be negative: " + timeout); // SQ-15
        }
        if (items.isEmpty()) {
            throw new QueueEmpty(); // SQ-15: the timeout passes with the queue still empty
        }
        return removeNext(); // SQ-05: a graceful shutdown still lets the items out
    }

    // ---- task accounting -------------------------------------------------------------------

    /** SQ-10: one task fewer, the same before and after a shutdown; an error with none left. */
    void taskDone() {
        if (unfinished <= 0) {
            throw new IllegalStateException("taskDone() called too many times"); // SQ-10
        }
        unfinished--;
    }

    /**
     * SQ-11, SQ-15: true at once if no task is unfinished; a negative timeout is always an error
     * (shutdown does not matter to join); otherwise the timeout could only run out, since no other
     * thread calls taskDone.
     */
    boolean join(Duration timeout) {
        if (timeout.isNegative()) {
            throw new IllegalArgumentException("timeout must not be negative: " + timeout); // SQ-15
        }
        return unfinished == 0; // SQ-11: never QueueShutDown
    }

    // ---- shutdown --------------------------------------------------------------------------

    /**
     * SQ-07, SQ-08, SQ-09: marks the queue shut down for good; an immediate shutdown also removes
     * every item, in get order, one unfinished task per item but never below zero, and returns them.
     */
    List<Integer> shutdown(boolean immediate) {
        shutdown = true; // SQ-07, SQ-09: sticky, and a second call is no error
        if (!immediate) {
            return List.of(); // SQ-07: the items stay for consumers to drain
        }
        List<Integer> removed = new ArrayList<>();
        while (!items.isEmpty()) {
            removed.add(removeNext()); // SQ-08: in the order get would have returned them
            if (unfinished > 0) {
                unfinished--; // SQ-08: the clamp
            }
        }
        return List.copyOf(removed); // SQ-09: [] when already drained
    }

    // ---- observers (SQ-17) -----------------------------------------------------------------

    int qsize() {
        return items.size();
    }

    boolean empty() {
        return items.isEmpty();
    }

    /** SQ-01: only a bounded queue is ever full; a shut-down queue can be full. */
    boolean full() {
        return maxsize > 0 && items.size() >= maxsize;
    }

    int unfinishedTasks() {
        return unfinished;
    }

    boolean isShutdown() {
        return shutdown;
    }

    /** SQ-01: FIFO in arrival order, LIFO newest first, PRIORITY smallest first. */
    List<Integer> itemsInGetOrder() {
        List<Integer> order = new ArrayList<>(items);
        switch (kind) {
            case FIFO -> { }
            case LIFO -> Collections.reverse(order);
            case PRIORITY -> Collections.sort(order); // equal integers cannot be told apart
        }
        return List.copyOf(order);
    }

    /**
     * SQ-17: Python's {@code str(queue)}: the class name and maxsize, then only what is there:
     * the items in storage order, the unfinished count, the shutdown flag. (A single-threaded
     * client never leaves a getter or putter waiting, so {@code _getters[n]} and
     * {@code _putters[n]} never show.)
     */
    @Override
    public String toString() {
        StringBuilder s = new StringBuilder("<").append(switch (kind) {
            case FIFO -> "Queue";
            case LIFO -> "LifoQueue";
            case PRIORITY -> "PriorityQueue";
        });
        s.append(" maxsize=").append(maxsize);
        if (!items.isEmpty()) {
            s.append(" _queue=").append(items);
        }
        if (unfinished != 0) {
            s.append(" tasks=").append(unfinished);
        }
        if (shutdown) {
            s.append(" shutdown");
        }
        return s.append('>').toString();
    }

    // ---- storage (SQ-01) -------------------------------------------------------------------

    /** SQ-02: store the item and count one unfinished task. */
    private void add(Integer item) {
        items.add(item); // FIFO, LIFO: at the end; PRIORITY: as heapq.heappush, which appends first
        if (kind == QueueKind.PRIORITY) {
            riseTowardRoot(0, items.size() - 1);
        }
        unfinished++;
    }

    /** The next item in this kind's order: oldest (FIFO), newest (LIFO), smallest (PRIORITY, as heapq.heappop). */
    private Integer removeNext() {
        return switch (kind) {
            case FIFO -> items.removeFirst();
            case LIFO -> items.removeLast();
            case PRIORITY -> {
                Integer last = items.removeLast();
                if (items.isEmpty()) {
                    yield last;
                }
                Integer smallest = items.getFirst();
                items.set(0, last);
                sinkToLeafThenRise(0);
                yield smallest;
            }
        };
    }

    /**
     * heapq's sift toward the root: the item at {@code pos} trades places with its parent while
     * it is strictly smaller, never rising above {@code top}.
     */
    private void riseTowardRoot(int top, int pos) {
        while (pos > top) {
            int parent = (pos - 1) / 2;
            if (items.get(pos) >= items.get(parent)) {
                return;
            }
            Collections.swap(items, pos, parent);
            pos = parent;
        }
    }

    /**
     * heapq's refill after a pop: the item at {@code pos} moves down to a leaf, always past the
     * smaller child (the right one on a tie), and then rises back toward {@code pos}.
     */
    private void sinkToLeafThenRise(int pos) {
        int top = pos;
        for (int child = 2 * pos + 1; child < items.size(); child = 2 * pos + 1) {
            int right = child + 1;
            if (right < items.size() && items.get(child) >= items.get(right)) {
                child = right;
            }
            Collections.swap(items, pos, child);
            pos = child;
        }
        riseTowardRoot(top, pos);
    }
}
