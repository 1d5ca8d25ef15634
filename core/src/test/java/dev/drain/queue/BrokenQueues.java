package dev.drain.queue;

import java.util.ArrayList;
import java.util.List;

/**
 * Deliberately broken queues, so that each verification layer can show it catches a bug: a suite
 * that passes on these would prove nothing. Each variant is a {@link QueueUnderTest} over a real
 * {@link ShutdownQueue} ({@link QueueUnderTest.Forwarding}) that overrides one operation, rewritten
 * with the real queue's public operations, and leaves every other operation to the real queue.
 */
final class BrokenQueues {
    private BrokenQueues() {}

    /** Which broken variant, and how to make one. */
    enum Variant {
        /**
         * A sequential bug: the immediate shutdown drains the items but forgets to subtract them
         * from the unfinished count, so {@code join()} is never released (SQ-08). Visible in a
         * single thread: traces and the model catch it.
         */
        DRAIN_FORGETS_COUNT,
        /**
         * A concurrency bug: {@code getNowait} decides "empty" and "shut down" in two separate
         * critical sections, so a put and a shutdown that land in between make it throw
         * {@code QueueShutDown} while an item is queued (SQ-03, SQ-18). Invisible in a single
         * thread: only linearizability checking catches it.
         */
        SPLIT_CHECK_GET_NOWAIT;

        /** A new first-in-first-out queue with this variant's bug. */
        <T> QueueUnderTest<T> create(int maxsize) {
            ShutdownQueue<T> real = ShutdownQueue.fifo(maxsize);
            return switch (this) {
                case DRAIN_FORGETS_COUNT -> new DrainForgetsCount<>(real);
                case SPLIT_CHECK_GET_NOWAIT -> new SplitCheckGetNowait<>(real);
            };
        }
    }

    static final class DrainForgetsCount<T> extends QueueUnderTest.Forwarding<T> {
        DrainForgetsCount(ShutdownQueue<T> real) {
            super(real);
        }

        @Override
        public List<T> shutdown(boolean immediate) {
            real().shutdown(false);
            List<T> drained = new ArrayList<>();
            while (immediate) {
                try {
                    drained.add(real().getNowait()); // removes the item, but the task stays unfinished
                } catch (QueueEmpty | QueueShutDown e) {
                    break;
                }
            }
            return List.copyOf(drained);
        }
    }

    static final class SplitCheckGetNowait<T> extends QueueUnderTest.Forwarding<T> {
        SplitCheckGetNowait(ShutdownQueue<T> real) {
            super(real);
        }

        @Override
        public T getNowait() throws QueueShutDown, QueueEmpty {
            if (real().empty()) {
                // Bug: the queue may have been given an item and shut down since empty() looked.
                if (real().isShutdown()) {
                    throw new QueueShutDown();
                }
                throw new QueueEmpty();
            }
            return real().getNowait();
        }
    }
}
