package dev.drain.bench;

import com.softwaremill.jox.Channel;
import dev.drain.queue.QueueShutDown;
import dev.drain.queue.ShutdownQueue;
import java.util.concurrent.BlockingQueue;

/**
 * The two blocking operations a hand-off needs, over each queue that is compared. Each fork of a
 * benchmark creates pipes of one kind only, so the call sites stay monomorphic and are inlined.
 */
interface Pipe {
    /** Adds {@code item}, waiting while the pipe is full. */
    void put(Integer item) throws Exception;

    /** Takes the next item, waiting while the pipe is empty. */
    Integer take() throws Exception;

    /** The queues compared; the names are the benchmarks' {@code queue} parameter values. */
    enum Kind {
        /** drain's queue: {@code put} and {@code get}. */
        ShutdownQueue,
        /** The baseline: one lock, two conditions, an array. */
        ArrayBlockingQueue,
        /** Two locks, a node per item. */
        LinkedBlockingQueue,
        /** jox's buffered {@code Channel}: lock-free segments, built for virtual threads. */
        JoxChannel;

        Pipe create(int capacity) {
            return switch (this) {
                case ShutdownQueue -> new OfShutdownQueue(capacity);
                case ArrayBlockingQueue -> new OfBlockingQueue(new java.util.concurrent.ArrayBlockingQueue<>(capacity));
                case LinkedBlockingQueue -> new OfBlockingQueue(new java.util.concurrent.LinkedBlockingQueue<>(capacity));
                case JoxChannel -> new OfJoxChannel(capacity);
            };
        }
    }

    final class OfShutdownQueue implements Pipe {
        private final ShutdownQueue<Integer> queue;

        OfShutdownQueue(int capacity) {
            this.queue = new ShutdownQueue<>(capacity);
        }

        @Override
        public void put(Integer item) throws InterruptedException, QueueShutDown {
            queue.put(item);
        }

        @Override
        public Integer take() throws InterruptedException, QueueShutDown {
            return queue.get();
        }
    }

    /** {@code ArrayBlockingQueue} and {@code LinkedBlockingQueue}: {@code put} and {@code take}. */
    final class OfBlockingQueue implements Pipe {
        private final BlockingQueue<Integer> queue;

        OfBlockingQueue(BlockingQueue<Integer> queue) {
            this.queue = queue;
        }

        @Override
        public void put(Integer item) throws InterruptedException {
            queue.put(item);
        }

        @Override
        public Integer take() throws InterruptedException {
            return queue.take();
        }
    }

    final class OfJoxChannel implements Pipe {
        private final Channel<Integer> channel;

        OfJoxChannel(int capacity) {
            this.channel = Channel.newBufferedChannel(capacity);
        }

        @Override
        public void put(Integer item) throws InterruptedException {
            channel.send(item);
        }

        @Override
        public Integer take() throws InterruptedException {
            return channel.receive();
        }
    }
}
