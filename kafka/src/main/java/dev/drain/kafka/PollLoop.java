package dev.drain.kafka;

import dev.drain.safe.Fatal;
import dev.drain.safe.Uninterruptibly;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import org.apache.kafka.clients.consumer.CloseOptions;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.Deserializer;
import org.jspecify.annotations.Nullable;

/**
 * The poll thread (KC-2, decision 0043): one platform daemon thread of the source's own, which
 * owns the {@code KafkaConsumer} (not thread-safe). It subscribes, polls, deserializes what it
 * polled into the {@link Exchange}'s buffer, pauses and resumes the partitions, runs the rebalance
 * callbacks ({@link Rebalance}) and makes every commit ({@link Commits}), until the source closes
 * or the consumer fails; then it closes the consumer, which leaves the group, and ends the stream.
 *
 * <p>It never waits for the pool: while the buffer holds {@code buffer} deliveries it pauses every
 * assigned partition and keeps polling, and resumes them once the buffer is down to half. What it
 * alone touches (the consumer, the {@link Tracks}, the fields marked so) is confined to it, as its
 * methods assert; it publishes what others read through volatile fields and atomics.
 *
 * @param <K> the key type
 * @param <V> the value type
 */
final class PollLoop<K, V> {
    /** How long one poll waits for records: the granularity of the idle end and of the pauses. */
    static final Duration POLL = Duration.ofMillis(100);

    private final Settings settings;
    /** Used by this thread only, once it has started (other threads call only its wakeup, through the exchange). */
    private final KafkaConsumer<byte[], byte[]> consumer;
    /** The user's; called by this thread only. */
    private final Deserializer<K> keys;
    private final Deserializer<V> values;
    private final Exchange<K, V> exchange;
    private final Resources resources;
    private final Thread thread;
    private final Tracks tracks;
    private final Commits<K, V> commits;
    /** Written by this thread, read by any thread. */
    private final AtomicLong skippedAsDone = new AtomicLong();
    /** Set while the buffer is full, until it is down to half (KC-2); this thread only. */
    private boolean full;
    /** The partitions this thread has paused, as of its last look; written by it, read by tests. */
    private volatile Set<TopicPartition> pausedNow = Set.of();
    /** Each assigned partition's watermark and outstanding count, as of this thread's last look, for toString. */
    private volatile String tracked = "{}";

    PollLoop(Settings settings, KafkaConsumer<byte[], byte[]> consumer, Deserializer<K> keys, Deserializer<V> values,
            Exchange<K, V> exchange, Resources resources) {
        this.settings = settings;
        this.consumer = consumer;
        this.keys = keys;
        this.values = values;
        this.exchange = exchange;
        this.resources = resources;
        this.thread = Thread.ofPlatform().daemon().name("drain-kafka-poll-" + settings.group()).unstarted(this::pollUntilClosed);
        this.tracks = new Tracks(thread);
        this.commits = new Commits<>(settings, consumer, exchange, tracks, thread);
    }

    void start() {
        thread.start();
    }

    private void pollUntilClosed() {
        Throwable failed = null;
        try {
            consumer.subscribe(settings.topics(), new Rebalance<>(consumer, exchange, tracks, commits, this));
            long lastRecord = System.nanoTime();
            @Nullable Duration idleEnd = settings.idleEnd();
            while (!exchange.isClosing()) {
                if (commits.due()) {
                    commits.serve();
                }
                pauseOrResume();
                if (full) {
                    // Every partition is paused: the consumer keeps the records it fetched for paused
                    // partitions and looks at them on every poll, which then spins until its timeout
                    // (KAFKA-21084). So the thread waits for room in the buffer, a batch due for its
                    // commit, or the close, for at most POLL, looks again, and then polls without
                    // waiting, only to run the rebalance callbacks and stay in its group.
                    exchange.awaitRoomOrWork(commits.dueAt());
                    if (commits.due()) {
                        commits.serve();
                    }
                    pauseOrResume();
                }
                ConsumerRecords<byte[], byte[]> polled;
                Duration timeout = exchange.enterPoll(full, commits.dueAt());
                try {
                    polled = consumer.poll(timeout);
                } catch (WakeupException e) {
                    continue; // the settler handed over a batch, or close() was called
                } finally {
                    exchange.polling(false);
                }
                deliver(polled);
                if (!polled.isEmpty() || tracks.isEmpty() || !pausedNow.isEmpty() || exchange.bufferSize() > 0) {
                    lastRecord = System.nanoTime(); // idle only when assigned, polling and handed out
                }
                if (idleEnd != null && System.nanoTime() - lastRecord > idleEnd.toNanos()) {
                    exchange.becomeIdle();
                }
            }
            commits.serve(); // what was handed over before the close
        } catch (Throwable e) { // the consumer failed for good, or a callback did: the source cannot go on
            failed = e;
            exchange.failing(e);
        } finally {
            try {
                // leaving the group revokes every partition: what settled is committed (a wakeup does
                // not cut a close short: the consumer ignores it there)
                consumer.close(CloseOptions.timeout(settings.closeTimeout()));
            } catch (Throwable e) {
                failed = add(failed, e);
            }
            if (resources.leftToThePollThread()) { // close() was called by a deserializer, on this thread: it could not wait for it
                try {
                    resources.closeOnce();
                } catch (RuntimeException e) {
                    failed = add(failed, e);
                }
            }
            exchange.end(failed);
        }
    }

    private static Throwable add(@Nullable Throwable failed, Throwable e) {
        if (failed == null) {
            return e;
        }
        failed.addSuppressed(e);
        return failed;
    }

    /** Buffers the polled records that are not already done, deserialized, in poll order. */
    private void deliver(ConsumerRecords<byte[], byte[]> polled) {
        assert Thread.currentThread() == thread;
        List<Delivery<K, V>> delivered = new ArrayList<>(polled.count());
        for (ConsumerRecord<byte[], byte[]> record : polled) {
            TopicPartition partition = new TopicPartition(record.topic(), record.partition());
            PartitionTrack track = tracks.get(partition);
            if (track == null) {
                continue; // unreachable: a consumer returns records of assigned partitions only
            }
            if (!track.polled(record.offset())) {
                skippedAsDone.incrementAndGet();
                continue;
            }
            delivered.add(delivery(partition, record, track.assignment));
        }
        if (!delivered.isEmpty()) {
            exchange.deliver(delivered);
        }
    }

    private Delivery<K, V> delivery(TopicPartition partition, ConsumerRecord<byte[], byte[]> record, long assignment) {
        RecordHeaders headers = new RecordHeaders(record.headers().toArray()); // the deserializers may change them, as Kafka's may
        K key = null;
        V value = null;
        UnreadableRecord unreadable = null;
        try {
            // as a KafkaConsumer calls them: with null for a record without a key, or a tombstone
            key = keys.deserialize(record.topic(), headers, record.key());
            value = values.deserialize(record.topic(), headers, record.value());
        } catch (Throwable e) {
            // a deserializer is the user's code: whatever it throws, a stack it overflows on a deeply
            // nested record included, makes that one record unreadable; the JVM's own trouble (out of
            // memory, an internal error) fails the source (KC-3)
            if (Fatal.isBeyondTheCall(e)) {
                throw e;
            }
            unreadable = new UnreadableRecord("the record " + partition + "@" + record.offset() + " could not be deserialized: "
                    + e.getClass().getName(), e);
        }
        headers.setReadOnly();
        return new Delivery<>(partition, record.offset(), record.timestamp(), key, value, unreadable, headers,
                record.key(), record.value(), assignment);
    }

    /**
     * Pauses every assigned partition while the buffer is full, and a partition whose commit
     * metadata nears the budget until it is back under half of it (KC-2, KC-7); resumes the rest.
     */
    private void pauseOrResume() {
        assert Thread.currentThread() == thread;
        Set<TopicPartition> assigned = consumer.assignment();
        Set<TopicPartition> pausedForMetadata = tracks.pausedForMetadata(settings.metadataBudget());
        // paused at a full buffer, resumed once it is down to half: not a pause and a resume per record
        int buffered = exchange.bufferSize();
        if (buffered >= settings.buffer()) {
            full = true;
        } else if (buffered <= settings.buffer() / 2) {
            full = false;
        }
        Set<TopicPartition> pause = new HashSet<>();
        Set<TopicPartition> resume = new HashSet<>();
        Set<TopicPartition> paused = consumer.paused();
        for (TopicPartition partition : assigned) {
            boolean shouldPause = full || pausedForMetadata.contains(partition);
            if (shouldPause && !paused.contains(partition)) {
                pause.add(partition);
            } else if (!shouldPause && paused.contains(partition)) {
                resume.add(partition);
            }
        }
        if (!pause.isEmpty()) {
            consumer.pause(pause);
        }
        if (!resume.isEmpty()) {
            consumer.resume(resume);
        }
        pausedNow = Set.copyOf(consumer.paused());
        tracked = tracks.describe();
    }

    /** {@return whether every partition is paused for a full buffer}; this thread only (a rebalance callback). */
    boolean full() {
        assert Thread.currentThread() == thread;
        return full;
    }

    /**
     * Makes a blocking call of the consumer's, again when a wakeup cuts it short: a wakeup only asks
     * the poll thread to look at its requests, which it does next (Spring Kafka #4622 lost a commit
     * to a wakeup that landed in it). Outside {@code poll} only a wakeup that a poll left pending can
     * land, once ({@code Exchange.wakeIfPolling}); the bound of 10 tries only keeps a consumer that cut a
     * call short more often than that from holding the poll thread.
     */
    static <R> R despiteWakeups(Supplier<R> call) {
        for (int tries = 0; ; tries++) {
            try {
                return call.get();
            } catch (WakeupException e) {
                if (tries >= 10) {
                    throw e;
                }
            }
        }
    }

    // ---- read by other threads ------------------------------------------------------------------

    /** {@return whether the caller is the poll thread} */
    boolean isPollThread() {
        return Thread.currentThread() == thread;
    }

    /** {@return the tracks of the assigned partitions: other threads may ask only which assignment is current} */
    Tracks tracks() {
        return tracks;
    }

    Commits<K, V> commits() {
        return commits;
    }

    /** {@return how many polled records were not delivered, since an earlier owner's commit recorded them done} */
    long skippedAsDone() {
        return skippedAsDone.get();
    }

    /** {@return the partitions paused at this thread's last look} */
    Set<TopicPartition> paused() {
        return pausedNow;
    }

    /** {@return each assigned partition's watermark and outstanding count at this thread's last look} */
    String tracked() {
        return tracked;
    }

    /**
     * Joins the poll thread once the source is closing: it ends after its last commits (each
     * bounded by {@code default.api.timeout.ms}) and the consumer's close ({@code closeTimeout});
     * only user code on it (a deserializer that never returns) could hold it longer. Past that
     * bound it is interrupted, and joined for another {@code closeTimeout}. The caller's interrupts
     * do not cut the joins short.
     *
     * An interrupt that comes meanwhile is set again on return (a poll thread left running would
     * outlive the source).
     *
     * @throws IllegalStateException if the thread did not end even so
     */
    void awaitEnd() {
        Duration closeTimeout = settings.closeTimeout();
        Duration bound = closeTimeout.plus(settings.commitTimeout().multipliedBy(2));
        if (!Uninterruptibly.join(thread, bound)) {
            thread.interrupt();
            if (!Uninterruptibly.join(thread, closeTimeout)) {
                throw new IllegalStateException("the poll thread of the Kafka source of " + settings.topics()
                        + " did not end within " + bound.plus(closeTimeout) + ", even interrupted: " + stackOf(thread));
            }
        }
    }

    private static String stackOf(Thread thread) {
        StringBuilder text = new StringBuilder();
        for (StackTraceElement frame : thread.getStackTrace()) {
            text.append("\n\tat ").append(frame);
        }
        return text.toString();
    }
}
