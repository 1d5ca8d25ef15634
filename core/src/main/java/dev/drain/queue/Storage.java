package dev.drain.queue;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.NoSuchElementException;

/**
 * Where a {@link ShutdownQueue} keeps its items, and in which order it hands them out: the three
 * storage hooks ({@code _init}, {@code _put}, {@code _get}) that Python's {@code Queue},
 * {@code LifoQueue} and {@code PriorityQueue} override. Everything else, shutdown included, is
 * the same for the three orders.
 *
 * <p>Not thread-safe: the owning queue calls it only while holding its lock.
 *
 * @param <T> the item type
 */
sealed interface Storage<T> permits Storage.Fifo, Storage.Lifo, Storage.Heap {

    /** Python's class name for this order, which {@link ShutdownQueue#toString()} prints. */
    String pythonName();

    void add(T item);

    /** Removes the next item in this storage's order. Call only when {@link #size()} is positive. */
    T remove();

    int size();

    default boolean isEmpty() {
        return size() == 0;
    }

    /** The items as Python's {@code list(self._queue)} lists them (storage order, for the repr). */
    List<T> inStorageOrder();

    /** The items in the order {@link #remove()} would return them. */
    List<T> inRemovalOrder();

    /** First in, first out: {@code asyncio.Queue} (a deque, appended right, popped left). */
    final class Fifo<T> implements Storage<T> {
        private final ArrayDeque<T> items = new ArrayDeque<>();

        @Override public String pythonName() { return "Queue"; }
        @Override public void add(T item) { items.addLast(item); }
        @Override public T remove() { return items.removeFirst(); }
        @Override public int size() { return items.size(); }
        @Override public List<T> inStorageOrder() { return List.copyOf(items); }
        @Override public List<T> inRemovalOrder() { return List.copyOf(items); }
    }

    /** Last in, first out: {@code asyncio.LifoQueue} (a list, appended and popped at the end). */
    final class Lifo<T> implements Storage<T> {
        private final ArrayDeque<T> items = new ArrayDeque<>();

        @Override public String pythonName() { return "LifoQueue"; }
        @Override public void add(T item) { items.addLast(item); }
        @Override public T remove() { return items.removeLast(); }
        @Override public int size() { return items.size(); }
        @Override public List<T> inStorageOrder() { return List.copyOf(items); }

        @Override
        public List<T> inRemovalOrder() {
            List<T> order = new ArrayList<>(items.size());
            items.descendingIterator().forEachRemaining(order::add);
            return List.copyOf(order);
        }
    }

    /**
     * Smallest first: {@code asyncio.PriorityQueue}, a binary min-heap in a list that moves items
     * exactly as CPython's {@code heapq.heappush} and {@code heapq.heappop} (its C accelerator) do.
     *
     * <p>Why not {@link java.util.PriorityQueue}: both are binary heaps, but {@code heappop} refills
     * the root differently (it walks the hole down to a leaf along the smaller children, then
     * sifts the last item up from there), so the two lay the same items out differently. Matching
     * heapq keeps the queue's {@code toString()} identical to Python's repr, and makes the order
     * of items that compare equal but are not the same object the order Python would give them.
     *
     * <p>Every move is a swap of two slots, as in CPython's {@code _heapqmodule.c}, and never a
     * "hole" that is filled at the end: a comparator that throws in the middle of a sift then
     * leaves the list a permutation of its items, laid out exactly as CPython leaves it (decision
     * 0018, SQ-20).
     */
    final class Heap<T> implements Storage<T> {
        private final ArrayList<T> heap = new ArrayList<>();
        private final Comparator<? super T> order;

        Heap(Comparator<? super T> order) {
            this.order = order;
        }

        @Override public String pythonName() { return "PriorityQueue"; }
        @Override public int size() { return heap.size(); }
        @Override public List<T> inStorageOrder() { return List.copyOf(heap); }

        /** heappush: append, then sift the new item toward the root. */
        @Override
        public void add(T item) {
            heap.add(item);
            siftTowardRoot(0, heap.size() - 1);
        }

        /** heappop: the last item takes the root's place, the root is returned, and the new root sifts down. */
        @Override
        public T remove() {
            if (heap.isEmpty()) {
                throw new NoSuchElementException();
            }
            T last = heap.removeLast();
            if (heap.isEmpty()) {
                return last;
            }
            T smallest = heap.set(0, last);
            siftFromRoot(0); // if the comparator throws here, the smallest is lost, as in CPython
            return smallest;
        }

        @Override
        public List<T> inRemovalOrder() {
            Heap<T> copy = new Heap<>(order);
            copy.heap.addAll(heap);
            List<T> sorted = new ArrayList<>(heap.size());
            while (!copy.isEmpty()) {
                sorted.add(copy.remove());
            }
            return List.copyOf(sorted);
        }

        private boolean less(T a, T b) {
            return order.compare(a, b) < 0;
        }

        private void swap(int i, int j) {
            heap.set(i, heap.set(j, heap.get(i)));
        }

        /** heapq's {@code _siftdown}: swaps the item at {@code pos} with its parent while it is strictly smaller, never above {@code top}. */
        private void siftTowardRoot(int top, int pos) {
            while (pos > top) {
                int parent = (pos - 1) >>> 1;
                if (!less(heap.get(pos), heap.get(parent))) {
                    return;
                }
                swap(pos, parent);
                pos = parent;
            }
        }

        /**
         * heapq's {@code _siftup}: swaps the item at {@code start} with its smaller child (the right
         * one when they tie) down to a leaf, then lets it rise back toward {@code start}.
         */
        private void siftFromRoot(int start) {
            int end = heap.size();
            int pos = start;
            for (int child = 2 * pos + 1; child < end; child = 2 * pos + 1) {
                int right = child + 1;
                if (right < end && !less(heap.get(child), heap.get(right))) {
                    child = right;
                }
                swap(pos, child);
                pos = child;
            }
            siftTowardRoot(start, pos);
        }
    }
}
