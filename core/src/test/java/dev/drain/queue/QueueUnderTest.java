package dev.drain.queue;

import java.time.Duration;
import java.util.List;

/**
 * The queue as the verification layers see it: the operations that the trace replayer
 * ({@link TraceReplayer}), the model properties ({@link ShutdownQueueProperties}) and the
 * Lincheck operations ({@link ShutdownQueueLincheckTest}) call, and nothing else. It exists so that
 * those layers can be pointed at a deliberately broken queue ({@link BrokenQueues}) as well as at
 * the real one, while {@link ShutdownQueue} stays final (decision 0033).
 *
 * <p>Every operation runs on {@link #real()} by default, with the contract of the
 * {@code ShutdownQueue} method of the same name: {@link #of} is the real queue behind this
 * interface, and a broken variant overrides the operation it breaks, in terms of the others.
 * The layers call the operations only, never {@code real()}: a call that went around the interface
 * would go around the bug too.
 *
 * @param <T> the type of the items
 */
interface QueueUnderTest<T> {

    /** {@return the real queue every operation runs on unless overridden} For implementations only. */
    ShutdownQueue<T> real();

    /** {@return {@code queue} behind this interface, every operation its own} */
    static <T> QueueUnderTest<T> of(ShutdownQueue<T> queue) {
        return new Forwarding<>(queue);
    }

    /**
     * A real queue behind this interface: unchanged as it is, and the base of a broken variant,
     * which overrides the operation it breaks. A class, not a record or a lambda: Lincheck's model
     * checking cannot find the fields of those (the JDK refuses their offsets) and warns on the
     * console about each.
     */
    class Forwarding<T> implements QueueUnderTest<T> {
        private final ShutdownQueue<T> real;

        Forwarding(ShutdownQueue<T> real) {
            this.real = real;
        }

        @Override
        public final ShutdownQueue<T> real() {
            return real;
        }
    }

    default void put(T item) throws InterruptedException, QueueShutDown {
        real().put(item);
    }

    default void put(T item, Duration timeout) throws InterruptedException, QueueShutDown, QueueFull {
        real().put(item, timeout);
    }

    default void putNowait(T item) throws QueueShutDown, QueueFull {
        real().putNowait(item);
    }

    default T get() throws InterruptedException, QueueShutDown {
        return real().get();
    }

    default T get(Duration timeout) throws InterruptedException, QueueShutDown, QueueEmpty {
        return real().get(timeout);
    }

    default T getNowait() throws QueueShutDown, QueueEmpty {
        return real().getNowait();
    }

    default void taskDone() {
        real().taskDone();
    }

    default void join() throws InterruptedException {
        real().join();
    }

    default boolean join(Duration timeout) throws InterruptedException {
        return real().join(timeout);
    }

    default List<T> shutdown(boolean immediate) {
        return real().shutdown(immediate);
    }

    default int qsize() {
        return real().qsize();
    }

    default boolean empty() {
        return real().empty();
    }

    default boolean full() {
        return real().full();
    }

    default boolean isShutdown() {
        return real().isShutdown();
    }

    default int unfinishedTasks() {
        return real().unfinishedTasks();
    }

    default int waitingGetters() {
        return real().waitingGetters();
    }

    default int waitingPutters() {
        return real().waitingPutters();
    }

    default int waitingJoiners() {
        return real().waitingJoiners();
    }

    /** {@link ShutdownQueue#itemsInGetOrder()}, the package-private observer. */
    default List<T> itemsInGetOrder() {
        return real().itemsInGetOrder();
    }

    /** {@link ShutdownQueue#isParkedInLine(Thread)}, the package-private observer. */
    default boolean isParkedInLine(Thread thread) {
        return real().isParkedInLine(thread);
    }

    /**
     * Runs {@code steps} as one atomic step, as {@link ShutdownQueue#atomically} does. The steps call
     * this interface's non-blocking operations, not the real queue's, which would miss a broken
     * variant's bug.
     */
    default void atomically(Runnable steps) {
        real().atomically(q -> steps.run());
    }

    /** {@return {@link ShutdownQueue#toString()}: Python's {@code str(queue)}} */
    default String repr() {
        return real().toString();
    }
}
