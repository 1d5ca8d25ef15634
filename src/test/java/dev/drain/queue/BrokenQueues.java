package dev.drain.queue;

import java.util.ArrayList;
import java.util.List;

/**
 * Deliberately broken queues, so that each verification layer can show it catches a bug: a suite
 * that passes on these would prove nothing. Each variant extends {@link ShutdownQueue} and breaks
 * one rule through its public methods only.
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
        <T> ShutdownQueue<T> create(int maxsize) {
            return switch (this) {
                case DRAIN_FORGETS_COUNT -> new DrainForgetsCount<>(maxsize);
                case SPLIT_CHECK_GET_NOWAIT -> new SplitCheckGetNowait<>(maxsize);
            };
        }
    }

    static final class DrainForgetsCount<T> extends ShutdownQueue<T> {
        DrainForgetsCount(int maxsize) {
            super(maxsize);
        }

        @Override
        public List<T> shutdown(boolean immediate) {
            super.shutdown(false);
            List<T> drained = new ArrayList<>();
            while (immediate) {
                try {
                    drained.add(getNowait()); // removes the item, but the task stays unfinished
                } catch (QueueEmpty | QueueShutDown e) {
                    break;
                }
            }
            return List.copyOf(drained);
        }
    }

    static final class SplitCheckGetNowait<T> extends ShutdownQueue<T> {
        SplitCheckGetNowait(int maxsize) {
            super(maxsize);
        }

        @Override
        public T getNowait() throws QueueShutDown, QueueEmpty {
            if (empty()) {
                // Bug: the queue may have been given an item and shut down since empty() looked.
                if (isShutdown()) {
                    throw new QueueShutDown();
                }
                throw new QueueEmpty();
            }
            return super.getNowait();
        }
    }
}
