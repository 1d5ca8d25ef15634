package dev.drain.queue;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/** The three orders, for tests that run against each (CPython runs its shutdown tests on all three). */
public enum QueueKind {
    FIFO,
    LIFO,
    PRIORITY;

    /** A new queue of this kind. */
    public <T extends Comparable<? super T>> ShutdownQueue<T> create(int maxsize) {
        return switch (this) {
            case FIFO -> ShutdownQueue.fifo(maxsize);
            case LIFO -> ShutdownQueue.lifo(maxsize);
            case PRIORITY -> ShutdownQueue.priority(maxsize);
        };
    }

    /** The order in which {@code get} returns items that were put in {@code putOrder}. */
    public <T extends Comparable<? super T>> List<T> getOrder(List<T> putOrder) {
        List<T> order = new ArrayList<>(putOrder);
        switch (this) {
            case FIFO -> { }
            case LIFO -> Collections.reverse(order);
            case PRIORITY -> Collections.sort(order);
        }
        return List.copyOf(order);
    }
}
