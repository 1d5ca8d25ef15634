package dev.drain.kafka;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.jspecify.annotations.Nullable;

/**
 * Where a source's threads meet: the state that more than one of them touches, under one lock
 * with two conditions. The poll thread ({@link PollLoop}) fills the buffer and serves the batches
 * handed over; the stream's reader, the pool's producer ({@link Records}), takes from the buffer;
 * the pool's settler thread ({@link GroupSettler}) hands batches over; any thread may close.
 * Each method says which thread calls it; the ones for the poll thread only are marked so. The
 * fields the stream reads and changes are package-private for {@link Records}, which holds this
 * lock for each of its steps; no other class touches them.
 *
 * <p>Nothing here blocks with the lock held but the two condition waits, and nothing here calls
 * out of the source with it held but {@link #wakeIfPolling}'s {@code wakeup()} (decision 0047).
 * A request's future is completed by its caller after the lock is released.
 *
 * @param <K> the key type
 * @param <V> the value type
 */
final class Exchange<K, V> {
    /** Guards every mutable field of this class, and the stream's own ({@link Records}). */
    final ReentrantLock lock = new ReentrantLock();
    /**
     * Signalled when a delivery is buffered, when the stream should end (closed, idle, the poll
     * thread gone), and when the stream is closed: the stream's reader waits for the first two, a
     * second stream for the third, so it is signalled to all.
     */
    final Condition deliveredOrEnded = lock.newCondition();
    /**
     * Signalled when the stream takes the buffer down to half, when a batch is handed over, and
     * when the source closes: the poll thread, with every partition paused, waits for any of them.
     */
    final Condition roomOrWork = lock.newCondition();

    /** How many deliveries the buffer holds before the poll thread pauses every partition (KC-2). */
    final int capacity;
    /** The topics, for the messages. */
    final List<String> topics;
    /** The poll thread's consumer: only its {@code wakeup()} is called here, by other threads. */
    private final KafkaConsumer<byte[], byte[]> consumer;

    /** Polled, delivered to the buffer, not yet taken by the stream, in poll order. */
    @GuardedBy("lock")
    final ArrayDeque<Delivery<K, V>> buffer = new ArrayDeque<>();
    /** Settlement batches the settler has handed over and the poll thread has not served. */
    @GuardedBy("lock")
    private final ArrayDeque<Request<K, V>> requests = new ArrayDeque<>();
    /**
     * Deliveries this source holds that a run released, or whose commit was refused: the next
     * stream hands them out first (KC-6, KC-7); dropped with their partition when it goes.
     */
    @GuardedBy("lock")
    final List<Delivery<K, V>> redeliver = new ArrayList<>();
    /** Whether a stream of deliveries is open. */
    @GuardedBy("lock")
    boolean streamOpen;
    /** Set by {@link #close}: the poll thread ends. */
    @GuardedBy("lock")
    boolean closing;
    /**
     * Set while the poll thread is inside {@code poll} and outside the rebalance callbacks: the
     * only time a wakeup is made ({@link #wakeIfPolling}, decision 0047). The poll thread clears
     * it under the lock when it leaves, so a wakeup in progress has returned by then.
     */
    @GuardedBy("lock")
    private boolean polling;
    /** Set by the poll thread when nothing was polled for {@code idleEnd}. */
    @GuardedBy("lock")
    boolean idle;
    /** Set when the poll thread has ended. */
    @GuardedBy("lock")
    boolean ended;
    /**
     * What the poll thread failed with, if it did: set before it answers the batches it was
     * committing, so that a settler that saw the failure finds the stream failed too, and again,
     * with what closing added, with {@link #ended}.
     */
    @GuardedBy("lock")
    @Nullable Throwable failure;

    Exchange(Settings settings, KafkaConsumer<byte[], byte[]> consumer) {
        this.capacity = settings.buffer();
        this.topics = settings.topics();
        this.consumer = consumer;
    }

    // ---- the poll thread ------------------------------------------------------------------------

    /**
     * Waits, at most {@link PollLoop#POLL}, until the buffer is down to half, a batch handed over is
     * due for its commit (at {@code commitDue}, a {@link System#nanoTime} value: KC-4's interval), or
     * the source is closing. Poll thread only.
     */
    void awaitRoomOrWork(long commitDue) throws InterruptedException {
        lock.lock();
        try {
            long deadline = System.nanoTime() + PollLoop.POLL.toNanos();
            while (buffer.size() > capacity / 2 && !closing) {
                long until = requests.isEmpty() ? deadline : Math.min(deadline, commitDue);
                long left = until - System.nanoTime();
                if (left <= 0) {
                    return;
                }
                roomOrWork.awaitNanos(left);
            }
        } finally {
            lock.unlock();
        }
    }

    /**
     * Marks the poll thread polling and {@return how long its poll may wait}, in one step under the
     * lock: a batch handed over before it is in the timeout (due now: not at all; due later: until
     * {@code commitDue}), one handed over after it wakes the poll. Poll thread only.
     *
     * @param full whether every partition is paused for a full buffer: the poll only runs the callbacks
     * @param commitDue when a batch handed over is due for its commit, a {@link System#nanoTime} value
     */
    Duration enterPoll(boolean full, long commitDue) {
        lock.lock();
        try {
            polling = true;
            if (full || closing) {
                return Duration.ZERO;
            }
            if (requests.isEmpty()) {
                return PollLoop.POLL;
            }
            return Duration.ofNanos(Math.max(0, commitDue - System.nanoTime()));
        } finally {
            lock.unlock();
        }
    }

    /**
     * Sets whether the poll thread is polling, under the lock: false when it leaves {@code poll} or
     * enters a rebalance callback (from then on no wakeup is made, and one in progress has
     * returned, as it is made under the lock), back to what it was when a callback ends. Poll
     * thread only.
     *
     * @param now whether it is polling from now on
     * @return whether it was polling
     */
    boolean polling(boolean now) {
        lock.lock();
        try {
            boolean was = polling;
            polling = now;
            return was;
        } finally {
            lock.unlock();
        }
    }

    int bufferSize() {
        lock.lock();
        try {
            return buffer.size();
        } finally {
            lock.unlock();
        }
    }

    boolean isClosing() {
        lock.lock();
        try {
            return closing;
        } finally {
            lock.unlock();
        }
    }

    /** Buffers deliveries the poll thread polled, in poll order, for the stream. Poll thread only. */
    void deliver(List<Delivery<K, V>> delivered) {
        lock.lock();
        try {
            buffer.addAll(delivered);
            idle = false; // records again: a later stream waits for them
            deliveredOrEnded.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /**
     * Keeps deliveries that this source still holds and did not get done (released, or whose commit
     * was refused) for the next stream, which hands them out first (KC-6, KC-7). Poll thread only.
     */
    void redeliverLater(List<Delivery<K, V>> deliveries) {
        if (deliveries.isEmpty()) {
            return;
        }
        lock.lock();
        try {
            redeliver.addAll(deliveries);
        } finally {
            lock.unlock();
        }
    }

    /** Drops the buffered deliveries of {@code partitions}: never pulled, they are the next owner's. Poll thread only. */
    void dropBuffered(Collection<TopicPartition> partitions) {
        lock.lock();
        try {
            buffer.removeIf(delivery -> partitions.contains(delivery.topicPartition()));
            redeliver.removeIf(delivery -> partitions.contains(delivery.topicPartition()));
        } finally {
            lock.unlock();
        }
    }

    /** Nothing polled for {@code idleEnd}: the stream ends once the buffer is empty. Poll thread only. */
    void becomeIdle() {
        lock.lock();
        try {
            if (!idle) {
                idle = true;
                deliveredOrEnded.signalAll();
            }
        } finally {
            lock.unlock();
        }
    }

    /** The poll thread cannot go on: the stream fails from now on, while the thread closes the consumer. Poll thread only. */
    void failing(Throwable failed) {
        lock.lock();
        try {
            failure = failed;
            deliveredOrEnded.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /** The poll thread has ended: fails every request left, and ends the stream. Poll thread only, once. */
    void end(@Nullable Throwable failed) {
        List<Request<K, V>> left;
        lock.lock();
        try {
            ended = true;
            failure = failed;
            left = new ArrayList<>(requests);
            requests.clear();
            deliveredOrEnded.signalAll();
        } finally {
            lock.unlock();
        }
        for (Request<K, V> request : left) {
            request.committed().completeExceptionally(failed != null
                    ? new KafkaSourceException("the Kafka source of " + topics + " failed before committing", failed)
                    : new IllegalStateException("the Kafka source of " + topics + " closed before committing"));
        }
    }

    /**
     * Takes every batch handed over that the settler has not withdrawn, in the order handed over;
     * the caller answers each. Poll thread only.
     */
    List<Request<K, V>> takeRequests() {
        List<Request<K, V>> taken = new ArrayList<>();
        lock.lock();
        try {
            for (Request<K, V> request; (request = requests.poll()) != null; ) {
                if (request.take()) {
                    taken.add(request);
                }
            }
        } finally {
            lock.unlock();
        }
        return taken;
    }

    /**
     * Takes the batches handed over that settle any of {@code partitions} and that the settler has
     * not withdrawn; the caller fails each. Poll thread only (a lost partition, KC-8).
     */
    List<Request<K, V>> takeRequestsTouching(Collection<TopicPartition> partitions) {
        List<Request<K, V>> taken = new ArrayList<>();
        lock.lock();
        try {
            for (Iterator<Request<K, V>> it = requests.iterator(); it.hasNext(); ) {
                Request<K, V> request = it.next();
                if (request.touches(partitions) && request.take()) {
                    it.remove();
                    taken.add(request);
                }
            }
        } finally {
            lock.unlock();
        }
        return taken;
    }

    // ---- the settler thread ---------------------------------------------------------------------

    /**
     * Queues {@code request} for the poll thread and wakes it if it is polling, so that it serves
     * the batch now, not at the end of its poll. Does not wait for the commit.
     *
     * @throws IllegalStateException if the source is closed: nothing of the batch will be committed
     */
    void handOver(Request<K, V> request) {
        lock.lock();
        try {
            if (closing || ended) {
                throw new IllegalStateException("the Kafka source of " + topics + " is closed: " + request.batch.size()
                        + " settlements not committed (the partitions' next owner delivers them again)");
            }
            requests.add(request);
            roomOrWork.signalAll();
            wakeIfPolling();
        } finally {
            lock.unlock();
        }
    }

    // ---- any thread -----------------------------------------------------------------------------

    /**
     * Asks the poll thread to end, and ends the stream: from now on nothing is handed over, and a
     * waiting reader or poll thread wakes.
     *
     * @param fromThePollThread whether the poll thread itself closes (a deserializer did): it is not polling
     */
    void close(boolean fromThePollThread) {
        lock.lock();
        try {
            closing = true;
            deliveredOrEnded.signalAll();
            roomOrWork.signalAll();
            if (!fromThePollThread) {
                wakeIfPolling();
            }
        } finally {
            lock.unlock();
        }
    }

    /** {@return the exchange's state now, for {@link KafkaSource#toString()}} */
    Snapshot snapshot() {
        lock.lock();
        try {
            String phase = ended ? (failure != null ? "FAILED" : "CLOSED") : closing ? "CLOSING" : idle ? "IDLE" : "POLLING";
            return new Snapshot(phase, buffer.size(), requests.size());
        } finally {
            lock.unlock();
        }
    }

    /**
     * The exchange's state at one moment.
     *
     * @param phase POLLING, IDLE, CLOSING, CLOSED or FAILED
     * @param buffered how many deliveries the buffer holds
     * @param handedOver how many batches are handed over and not yet served
     */
    record Snapshot(String phase, int buffered, int handedOver) {}

    /**
     * Wakes the poll thread if it is polling, with the lock held (decision 0047). The consumer's
     * wakeup completes the blocking call it finds inside a compare-and-set loop, and runs that
     * again on every lost race: one wakeup made while the poll thread retries a commit can cut
     * short every retry until the wakeup wins its race (seen: 11 in 3 ms). So a wakeup is made only
     * inside {@code poll}, which ends on it, and the poll thread waits for the lock before its next
     * call; a wakeup that {@code poll} did not use stays pending, and cuts the next call short once.
     */
    @GuardedBy("lock")
    private void wakeIfPolling() {
        if (polling) {
            consumer.wakeup();
        }
    }
}
