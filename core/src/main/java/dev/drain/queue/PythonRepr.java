package dev.drain.queue;

import java.util.List;

/**
 * The state {@link ShutdownQueue#toString()} shows, copied under the queue's lock, and the text
 * of Python's {@code str(queue)} built from it outside the lock (the items' own {@code toString}
 * is user code, which must not run while the queue is locked).
 *
 * @param className {@code Queue}, {@code LifoQueue} or {@code PriorityQueue}
 * @param maxsize the bound
 * @param items the items in storage order
 * @param getters blocked getters
 * @param putters blocked putters
 * @param tasks unfinished tasks
 * @param shutdown whether the queue is shut down
 */
record PythonRepr(String className, int maxsize, List<?> items, int getters, int putters, int tasks, boolean shutdown) {

    /** {@return for example {@code <Queue maxsize=2 _queue=[1, 2] _putters[1] tasks=2 shutdown>}} */
    @Override
    public String toString() {
        StringBuilder s = new StringBuilder("<").append(className).append(" maxsize=").append(maxsize);
        if (!items.isEmpty()) {
            s.append(" _queue=").append(items);
        }
        if (getters != 0) {
            s.append(" _getters[").append(getters).append(']');
        }
        if (putters != 0) {
            s.append(" _putters[").append(putters).append(']');
        }
        if (tasks != 0) {
            s.append(" tasks=").append(tasks);
        }
        if (shutdown) {
            s.append(" shutdown");
        }
        return s.append('>').toString();
    }
}
