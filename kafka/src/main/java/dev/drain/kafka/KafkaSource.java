package dev.drain.kafka;

import com.google.errorprone.annotations.concurrent.GuardedBy;
import dev.drain.pool.ItemFailure;
import dev.drain.pool.Settlement;
import dev.drain.pool.Settler;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Objects;
import java.util.Set;
import java.util.Spliterator;
import java.util.Spliterators;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;
import java.util.stream.Stream;
import java.util.stream.StreamSupport;
import org.apache.kafka.clients.consumer.CloseOptions;
import org.apache.kafka.clients.consumer.CommitFailedException;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.ConsumerRebalanceListener;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.ConsumerRecords;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.PartitionInfo;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.ApiException;
import org.apache.kafka.common.errors.RebalanceInProgressException;
import org.apache.kafka.common.errors.RetriableException;
import org.apache.kafka.common.errors.WakeupException;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.ByteArrayDeserializer;
import org.apache.kafka.common.serialization.ByteArraySerializer;
import org.apache.kafka.common.serialization.Deserializer;
import org.jspecify.annotations.Nullable;

/**
 * A worker pool's source and settler on a Kafka consumer group (spec {@code specs/kafka-source.md},
 * decision 0043): the pool pulls {@link #records()} and settles through {@link #settler()}, so that
 * what the group commits is exactly what the run's books recorded.
 *
 * <p><b>Threads.</b> One platform thread of the source's own, the <em>poll thread</em>, owns the
 * {@code KafkaConsumer} (which is not thread-safe): it polls, runs the rebalance callbacks and does
 * every commit. It never waits for the pool: it hands records to a buffer that the pool's producer
 * takes from, and while the buffer holds {@code buffer} deliveries it pauses every assigned
 * partition and keeps polling, so that the group never evicts it for not polling (KC-2).
 *
 * <p><b>Commits.</b> Per partition, the committed offset is the <em>watermark</em>: the first
 * offset polled and not yet settled done; the done offsets above it go into the commit's metadata
 * ({@link OffsetMap}), so that the next owner skips them (KC-4). A delivery is done when it
 * succeeded, or when it failed for good and its dead letter has been written to the dead-letter
 * topic ({@code <topic>-dlt} by default) (KC-5). A released delivery (discarded, cancelled) is
 * never done, so the watermark cannot pass it: the next stream of this source delivers it again,
 * or the partition's next owner does (KC-6). The settler returns only once the commit that records
 * its batch has succeeded: what the run's books call settled is what the group has committed. A
 * commit the group refuses, a dead letter that cannot be written, or metadata that no longer fits
 * fails the batch (the pool then names it unsettled, WP-22) and is undone, so that no later commit
 * writes it; a commit whose outcome is unknown (a timeout) fails its batch too, but is kept, so
 * that no later commit moves the offset back (KC-7).
 *
 * <p><b>Rebalances</b> (KC-8), with the consumer group protocol of KIP-848 by default, which moves
 * only the partitions that change owner: when partitions are revoked, their buffered records are
 * dropped (never pulled, they are the next owner's), what was settled is committed, and later
 * settlements of their deliveries are dropped and counted ({@link #staleSettlements()}), never
 * committed: the new owner delivers them again. When partitions are lost (this member was fenced),
 * nothing of them can be committed: the settlements already handed over fail, the later ones are
 * stale.
 *
 * <p><b>Ending.</b> The stream of deliveries ends when the source is closed, when the poll thread
 * fails (the stream then throws {@link KafkaSourceException}, which ends the run as a failing
 * source does, WP-7), or, with {@link Builder#endWhenIdle}, when nothing has been polled for that
 * long. {@link #close()} ends the stream, commits what was settled, leaves the group and joins the
 * poll thread. A forgotten {@code close()} does not keep the JVM alive (the poll thread is a
 * daemon), but until the JVM exits that thread keeps the member in its group, holding its
 * partitions: close the source.
 *
 * <p>Every method may be called from any thread. Settlements handed to the settler happen-before
 * the commit that writes them. Null arguments are refused with {@link NullPointerException}.
 *
 * @param <K> the records' key type
 * @param <V> the records' value type
 */
public final class KafkaSource<K, V> implements AutoCloseable {
    /** How long one poll waits for records: the granularity of the idle end and of the pauses. */
    private static final Duration POLL = Duration.ofMillis(100);
    /** The longest dead letter's failure text, in characters. */
    static final int MAX_ERROR = 2_000;

    private final String group;
    private final List<String> topics;
    private final String deadLetterSuffix;
    private final int capacity;
    private final int metadataBudget;
    private final @Nullable Duration idleEnd;
    private final Duration deadLetterTimeout;
    private final Duration closeTimeout;
    private final Duration commitInterval;
    /** The consumer's {@code default.api.timeout.ms}: how long one commit may take. */
    private final Duration commitTimeout;
    private final Deserializer<K> keys;
    private final Deserializer<V> values;
    /** Used by the poll thread only, once it has started. */
    private final KafkaConsumer<byte[], byte[]> consumer;
    /** Thread-safe: the settler thread writes the dead letters with it. */
    private final KafkaProducer<byte[], byte[]> deadLetters;
    private final Thread poller;
    private final GroupSettler settler = new GroupSettler();
    /** Held by the one {@link #close()} that closes the producer and the deserializers. */
    private final Object closeLock = new Object();
    /** Set by that close. */
    @GuardedBy("closeLock")
    private boolean resourcesClosed;
    /** Set by a {@link #close()} that a deserializer made on the poll thread; read by it when it ends. */
    private volatile boolean closedFromThePollThread;

    /** Guards the buffer, the requests, the stream and the ending. */
    private final ReentrantLock lock = new ReentrantLock();
    /**
     * Signalled when a delivery is buffered, when the stream should end (closed, idle, the poll
     * thread gone), and when the stream is closed: the stream's reader waits for the first two, a
     * second stream for the third, so it is signalled to all.
     */
    private final Condition deliveredOrEnded = lock.newCondition();
    /**
     * Signalled when the stream takes the buffer down to half, when a batch is handed over, and
     * when the source closes: the poll thread, with every partition paused, waits for any of them.
     */
    private final Condition roomOrWork = lock.newCondition();
    /** Polled, delivered to the buffer, not yet taken by the stream, in poll order. */
    @GuardedBy("lock")
    private final ArrayDeque<Delivery<K, V>> buffer = new ArrayDeque<>();
    /** Settlement batches the settler has handed over and the poll thread has not served. */
    @GuardedBy("lock")
    private final ArrayDeque<Request<K, V>> requests = new ArrayDeque<>();
    /**
     * Deliveries this source holds that a run released, or whose commit was refused: the next
     * stream hands them out first (KC-6, KC-7); dropped with their partition when it goes.
     */
    @GuardedBy("lock")
    private final List<Delivery<K, V>> redeliver = new ArrayList<>();
    /** Whether a stream of deliveries is open. */
    @GuardedBy("lock")
    private boolean streamOpen;
    /** Set by {@link #close()}: the poll thread ends. */
    @GuardedBy("lock")
    private boolean closing;
    /**
     * Set while the poll thread is inside {@code poll} and outside the rebalance callbacks: the
     * only time a wakeup is made ({@link #wakeIfPolling}, decision 0047). The poll thread clears
     * it under the lock when it leaves, so a wakeup in progress has returned by then.
     */
    @GuardedBy("lock")
    private boolean polling;
    /** Set by the poll thread when nothing was polled for {@code idleEnd}. */
    @GuardedBy("lock")
    private boolean idle;
    /** Set when the poll thread has ended. */
    @GuardedBy("lock")
    private boolean ended;
    /**
     * What the poll thread failed with, if it did: set before it answers the batches it was
     * committing, so that a settler that saw the failure finds the stream failed too, and again,
     * with what closing added, with {@link #ended}.
     */
    @GuardedBy("lock")
    private @Nullable Throwable failure;

    /** The assignment of each partition this source holds, for the settler thread to skip stale dead letters. */
    private final Map<TopicPartition, Long> current = new ConcurrentHashMap<>();
    private final AtomicLong staleSettlements = new AtomicLong();
    private final AtomicLong commits = new AtomicLong();
    private final AtomicLong refusedCommits = new AtomicLong();
    private final AtomicLong skippedAsDone = new AtomicLong();
    private final AtomicLong deadLettersWritten = new AtomicLong();

    // The poll thread's own state.
    /** The partitions this source is assigned, with what it knows of each; poll thread only. */
    private final Map<TopicPartition, PartitionTrack> tracks = new HashMap<>();
    /** Partitions paused because their done offsets above the watermark near the metadata budget; poll thread only. */
    private final Set<TopicPartition> pausedForMetadata = new HashSet<>();
    /** Numbers the assignments; poll thread only. */
    private long assignments;
    /** Set while the buffer is full, until it is down to half (KC-2); poll thread only. */
    private boolean full;
    /** When the last commit began (System.nanoTime); poll thread only. */
    private long lastCommit = System.nanoTime() - TimeUnit.DAYS.toNanos(1);
    /** The partitions the poll thread has paused, as of its last look; written by it, read by tests. */
    private volatile Set<TopicPartition> pausedNow = Set.of();
    /** Each assigned partition's watermark and outstanding count, as of the poll thread's last look, for {@link #toString()}. */
    private volatile String tracked = "{}";

    private KafkaSource(Builder<K, V> b, KafkaConsumer<byte[], byte[]> consumer, KafkaProducer<byte[], byte[]> deadLetters) {
        this.group = b.group();
        this.topics = List.copyOf(b.topics);
        this.deadLetterSuffix = b.deadLetterSuffix;
        this.capacity = b.buffer;
        this.metadataBudget = b.metadataBudget;
        this.idleEnd = b.idleEnd;
        this.deadLetterTimeout = b.deadLetterTimeout;
        this.closeTimeout = b.closeTimeout;
        this.commitInterval = b.commitInterval;
        this.commitTimeout = b.commitTimeout();
        this.keys = b.keys;
        this.values = b.values;
        this.consumer = consumer;
        this.deadLetters = deadLetters;
        this.poller = Thread.ofPlatform().daemon().name("drain-kafka-poll-" + group).unstarted(this::pollUntilClosed);
    }

    /**
     * Starts describing a source.
     *
     * @param consumerConfig the consumer's settings: {@code bootstrap.servers} and {@code group.id}
     *     at least; the source sets {@code enable.auto.commit=false} and its own byte-array
     *     deserializers, and {@code group.protocol=consumer} and {@code auto.offset.reset=earliest}
     *     unless given
     * @param keys the records' key deserializer
     * @param values the records' value deserializer
     * @param <K> the key type
     * @param <V> the value type
     * @return a builder
     */
    public static <K, V> Builder<K, V> builder(Map<String, ?> consumerConfig, Deserializer<K> keys, Deserializer<V> values) {
        return new Builder<>(consumerConfig, keys, values);
    }

    /**
     * The deliveries, for {@code WorkerPool.run(Stream)}, in poll order (so in offset order within
     * a partition), each once; first, those an earlier run released, or whose commit was refused,
     * while this source still holds their partitions (KC-6, KC-7). {@code hasNext} waits for the next
     * record; the stream ends as the class says. Closing the stream leaves the buffered deliveries to
     * a later stream of this source, or, once the source is closed, to the partitions' next owner.
     *
     * @return a stream to be consumed by one thread at a time (the pool's producer)
     * @throws IllegalStateException if another stream of this source is open, or the source is closed
     */
    public Stream<Delivery<K, V>> records() {
        lock.lock();
        try {
            if (closing || ended) {
                throw new IllegalStateException("the Kafka source of " + topics + " is closed");
            }
            if (streamOpen) {
                throw new IllegalStateException("a stream of the Kafka source of " + topics + " is already open");
            }
            streamOpen = true;
            if (!redeliver.isEmpty()) { // what an earlier run left undone, in offset order within each partition
                redeliver.sort(java.util.Comparator.comparing((Delivery<K, V> d) -> d.topicPartition().toString())
                        .thenComparingLong(Delivery::offset));
                for (int i = redeliver.size() - 1; i >= 0; i--) {
                    buffer.addFirst(redeliver.get(i));
                }
                redeliver.clear();
            }
        } finally {
            lock.unlock();
        }
        Records records = new Records();
        return StreamSupport.stream(Spliterators.spliteratorUnknownSize(records, Spliterator.ORDERED | Spliterator.NONNULL), false)
                .onClose(records::close);
    }

    /**
     * The settler to give the pool ({@code WorkerPool.Builder.settler}): for each batch it writes the
     * dead letters of the failures, hands the batch to the poll thread, and returns once the commit
     * that records it has succeeded (KC-4, KC-5). Each batch waits for its commit, so the pool's
     * {@code settleBatch} bounds the rate: at most {@code settleBatch} records per
     * {@linkplain Builder#commitInterval commit interval}, or per commit round trip if that is
     * longer. With the pool's default batch of 64 and the default interval that is 6,400 records a
     * second (measured: about 6,160 at 512 workers and a handler that returns at once); give the
     * pool a larger {@code settleBatch} for more (batches of 512 reached about 40,000, against a
     * bound of 51,200).
     *
     * @return this source's settler (always the same one)
     */
    public Settler<Delivery<K, V>> settler() {
        return settler;
    }

    /** {@return the consumer group's id} */
    public String group() {
        return group;
    }

    /** {@return how many settlements were dropped because their partition had been revoked or lost (KC-8)} */
    public long staleSettlements() {
        return staleSettlements.get();
    }

    /** {@return how many commits succeeded} */
    public long commits() {
        return commits.get();
    }

    /** {@return how many commits the group refused (this member no longer owned a partition)} */
    public long refusedCommits() {
        return refusedCommits.get();
    }

    /** {@return how many polled records were not delivered, since an earlier owner's commit recorded them done (KC-3)} */
    public long skippedAsDone() {
        return skippedAsDone.get();
    }

    /** {@return how many dead letters were written} */
    public long deadLetters() {
        return deadLettersWritten.get();
    }

    /** {@return the partitions the poll thread had paused at its last look (KC-2), for tests} */
    Set<TopicPartition> paused() {
        return pausedNow;
    }

    /** {@return the partitions this source is assigned now} */
    public Set<TopicPartition> assignment() {
        return Set.copyOf(current.keySet());
    }

    /**
     * {@return the source's state now, for debugging: its group, each assigned partition's
     * watermark and outstanding offsets, what is paused and buffered, and its counters}
     */
    @Override
    public String toString() {
        int buffered;
        int handedOver;
        String phase;
        lock.lock();
        try {
            buffered = buffer.size();
            handedOver = requests.size();
            phase = ended ? (failure != null ? "FAILED" : "CLOSED") : closing ? "CLOSING" : idle ? "IDLE" : "POLLING";
        } finally {
            lock.unlock();
        }
        return "KafkaSource[" + phase + ", group " + group + ", partitions " + tracked + ", paused " + pausedNow + ", buffered "
                + buffered + ", batches handed over " + handedOver + ", commits " + commits + ", refused " + refusedCommits
                + ", stale " + staleSettlements + ", skipped " + skippedAsDone + ", dead letters " + deadLettersWritten + "]";
    }

    /**
     * Ends the stream, commits what was settled, leaves the group (its partitions go to the other
     * members at once), joins the poll thread, and closes the dead-letter producer and the
     * deserializers. Settlements handed over afterwards fail (their records go to the partitions'
     * next owner). Idempotent, and callable from any thread (from a deserializer, it only asks the
     * poll thread to end).
     *
     * @throws RuntimeException what a deserializer's {@code close} threw, once everything is closed
     */
    @Override
    public void close() {
        lock.lock();
        try {
            closing = true;
            deliveredOrEnded.signalAll();
            roomOrWork.signalAll();
            if (Thread.currentThread() != poller) {
                wakeIfPolling();
            }
        } finally {
            lock.unlock();
        }
        if (Thread.currentThread() == poller) {
            closedFromThePollThread = true; // from a deserializer: the poll thread ends, and closes the rest, when it returns
            return;
        }
        boolean interrupted = false;
        try {
            // The poll thread ends after its last commits (each bounded by default.api.timeout.ms) and
            // the consumer's close (closeTimeout); only user code on it (a deserializer that never
            // returns) could hold it longer. Past the bound it is interrupted, and then given up on.
            long bound = closeTimeout.plus(commitTimeout.multipliedBy(2)).toNanos();
            interrupted = joinPoller(bound);
            if (poller.isAlive()) {
                poller.interrupt();
                interrupted |= joinPoller(closeTimeout.toNanos());
            }
            if (poller.isAlive()) {
                throw new IllegalStateException("the poll thread of the Kafka source of " + topics + " did not end within "
                        + Duration.ofNanos(bound).plus(closeTimeout) + ", even interrupted: " + stackOf(poller));
            }
            closeResourcesOnce();
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** Joins the poll thread for at most {@code nanos}, whatever interrupts the caller; {@return whether it was interrupted} */
    private boolean joinPoller(long nanos) {
        boolean interrupted = false;
        long deadline = System.nanoTime() + nanos;
        while (poller.isAlive()) {
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                break;
            }
            try {
                poller.join(Duration.ofNanos(left));
            } catch (InterruptedException e) {
                interrupted = true; // keep waiting: a poll thread left running would outlive the source
            }
        }
        return interrupted;
    }

    private static String stackOf(Thread thread) {
        StringBuilder text = new StringBuilder();
        for (StackTraceElement frame : thread.getStackTrace()) {
            text.append("\n\tat ").append(frame);
        }
        return text.toString();
    }

    /** Closes the producer and the deserializers, the first time only. */
    private void closeResourcesOnce() {
        synchronized (closeLock) {
            if (!resourcesClosed) { // else an earlier call closed them
                resourcesClosed = true;
                closeResources();
            }
        }
    }

    /** Closes the dead-letter producer and the deserializers, each whatever the others threw; throws the first failure. */
    private void closeResources() {
        RuntimeException failed = null;
        for (AutoCloseable each : List.<AutoCloseable>of(() -> deadLetters.close(closeTimeout), keys, values)) {
            try {
                each.close();
            } catch (Exception e) { // the deserializers' close is the user's code
                RuntimeException thrown = e instanceof RuntimeException r ? r : new IllegalStateException(e);
                if (failed == null) {
                    failed = thrown;
                } else {
                    failed.addSuppressed(thrown);
                }
            }
        }
        if (failed != null) {
            throw failed;
        }
    }

    // ---- the poll thread ------------------------------------------------------------------------

    private void start() {
        poller.start();
    }

    private void pollUntilClosed() {
        Throwable failed = null;
        try {
            consumer.subscribe(topics, new Rebalance());
            long lastRecord = System.nanoTime();
            while (!isClosing()) {
                if (System.nanoTime() - lastCommit >= commitInterval.toNanos()) {
                    serve();
                }
                pauseOrResume();
                if (full) {
                    // Every partition is paused: the consumer keeps the records it fetched for paused
                    // partitions and looks at them on every poll, which then spins until its timeout
                    // (KAFKA-21084). So the thread waits for room in the buffer, a batch due for its
                    // commit, or the close, for at most POLL, looks again, and then polls without
                    // waiting, only to run the rebalance callbacks and stay in its group.
                    awaitRoomOrWork();
                    if (System.nanoTime() - lastCommit >= commitInterval.toNanos()) {
                        serve();
                    }
                    pauseOrResume();
                }
                ConsumerRecords<byte[], byte[]> polled;
                Duration timeout = enterPoll();
                try {
                    polled = consumer.poll(timeout);
                } catch (WakeupException e) {
                    continue; // the settler handed over a batch, or close() was called
                } finally {
                    polling(false);
                }
                deliver(polled);
                if (!polled.isEmpty() || tracks.isEmpty() || !pausedNow.isEmpty() || bufferSize() > 0) {
                    lastRecord = System.nanoTime(); // idle only when assigned, polling and handed out
                }
                if (idleEnd != null && System.nanoTime() - lastRecord > idleEnd.toNanos()) {
                    becomeIdle();
                }
            }
            serve(); // what was handed over before the close
        } catch (Throwable e) { // the consumer failed for good, or a callback did: the source cannot go on
            failed = e;
            failing(e);
        } finally {
            try {
                // leaving the group revokes every partition: what settled is committed (a wakeup does
                // not cut a close short: the consumer ignores it there)
                consumer.close(CloseOptions.timeout(closeTimeout));
            } catch (Throwable e) {
                if (failed == null) {
                    failed = e;
                } else {
                    failed.addSuppressed(e);
                }
            }
            if (closedFromThePollThread) { // close() was called by a deserializer, on this thread: it could not wait for it
                try {
                    closeResourcesOnce();
                } catch (RuntimeException e) {
                    if (failed == null) {
                        failed = e;
                    } else {
                        failed.addSuppressed(e);
                    }
                }
            }
            end(failed);
        }
    }

    /**
     * Waits, at most {@link #POLL}, until the buffer is down to half, a batch handed over is due for
     * its commit (KC-4's interval), or the source is closing. Poll thread only.
     */
    private void awaitRoomOrWork() throws InterruptedException {
        lock.lock();
        try {
            long deadline = System.nanoTime() + POLL.toNanos();
            while (buffer.size() > capacity / 2 && !closing) {
                long until = requests.isEmpty() ? deadline : Math.min(deadline, lastCommit + commitInterval.toNanos());
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
     * then), one handed over after it wakes the poll. Poll thread only.
     */
    private Duration enterPoll() {
        lock.lock();
        try {
            polling = true;
            if (full || closing) {
                return Duration.ZERO;
            }
            if (requests.isEmpty()) {
                return POLL;
            }
            return Duration.ofNanos(Math.max(0, commitInterval.toNanos() - (System.nanoTime() - lastCommit)));
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
    private boolean polling(boolean now) {
        lock.lock();
        try {
            boolean was = polling;
            polling = now;
            return was;
        } finally {
            lock.unlock();
        }
    }

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

    private int bufferSize() {
        lock.lock();
        try {
            return buffer.size();
        } finally {
            lock.unlock();
        }
    }

    private boolean isClosing() {
        lock.lock();
        try {
            return closing;
        } finally {
            lock.unlock();
        }
    }

    /** Buffers the polled records that are not already done, deserialized, in poll order. */
    private void deliver(ConsumerRecords<byte[], byte[]> polled) {
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
        if (delivered.isEmpty()) {
            return;
        }
        lock.lock();
        try {
            buffer.addAll(delivered);
            idle = false; // records again: a later stream waits for them
            deliveredOrEnded.signalAll();
        } finally {
            lock.unlock();
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
            if (e instanceof VirtualMachineError && !(e instanceof StackOverflowError)) {
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
        Set<TopicPartition> assigned = consumer.assignment();
        for (Map.Entry<TopicPartition, PartitionTrack> e : tracks.entrySet()) {
            int length = e.getValue().toCommit().metadata().length();
            long span = e.getValue().span();
            if (length > metadataBudget * 3 / 4 || span > OffsetMap.MAX_SPAN / 2) {
                pausedForMetadata.add(e.getKey());
            } else if (length < metadataBudget / 2 && span < OffsetMap.MAX_SPAN / 4) {
                pausedForMetadata.remove(e.getKey());
            }
        }
        // paused at a full buffer, resumed once it is down to half: not a pause and a resume per record
        int buffered = bufferSize();
        if (buffered >= capacity) {
            full = true;
        } else if (buffered <= capacity / 2) {
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
        StringBuilder text = new StringBuilder("{");
        tracks.forEach((partition, track) -> text.append(text.length() > 1 ? ", " : "").append(partition).append("=")
                .append(track.watermark()).append("+").append(track.outstanding()));
        tracked = text.append("}").toString();
    }

    /**
     * Serves the batches the settler handed over (KC-4): marks what is done, then commits every
     * partition whose watermark or metadata changed, in one {@code commitSync}; completes the
     * batches when it succeeded, and otherwise undoes the marks and fails them (KC-7).
     */
    private void serve() {
        List<Request<K, V>> round = new ArrayList<>();
        lock.lock();
        try {
            for (Request<K, V> request; (request = requests.poll()) != null; ) {
                if (request.take()) {
                    round.add(request);
                }
            }
        } finally {
            lock.unlock();
        }
        // Every batch taken here is answered before this method returns or throws: a settler waits for it.
        Map<TopicPartition, List<Long>> marked = new HashMap<>();
        List<Delivery<K, V>> markedDeliveries = new ArrayList<>();
        boolean sent = false; // whether a commit left this process: before that, a failure wrote nothing
        try {
            List<Delivery<K, V>> released = new ArrayList<>();
            for (Request<K, V> request : round) {
                for (Settlement<Delivery<K, V>> settlement : request.batch) {
                    Delivery<K, V> delivery = settlement.item();
                    PartitionTrack track = tracks.get(delivery.topicPartition());
                    if (track == null || track.assignment != delivery.assignment()) {
                        staleSettlements.incrementAndGet(); // revoked or lost since: the next owner delivers it again
                    } else if (settlement instanceof Settlement.Released<Delivery<K, V>>) {
                        released.add(delivery); // outstanding still: the next stream of this source gets it (KC-6)
                    } else if (track.done(delivery.offset())) {
                        marked.computeIfAbsent(delivery.topicPartition(), p -> new ArrayList<>()).add(delivery.offset());
                        markedDeliveries.add(delivery);
                    }
                }
            }
            redeliverLater(released);
            Map<TopicPartition, OffsetAndMetadata> commit = new HashMap<>();
            Map<PartitionTrack, OffsetAndMetadata> writing = new HashMap<>();
            for (Map.Entry<TopicPartition, PartitionTrack> e : tracks.entrySet()) {
                if (e.getValue().changed()) {
                    OffsetAndMetadata now = e.getValue().toCommit();
                    if (now.metadata().length() > metadataBudget || e.getValue().span() > OffsetMap.MAX_SPAN) {
                        throw new KafkaSourceException("the done offsets above the watermark " + now.offset() + " of " + e.getKey()
                                + " no longer fit in a commit's metadata (" + now.metadata().length() + " characters, the budget is "
                                + metadataBudget + "): a record below them has been in flight too long");
                    }
                    commit.put(e.getKey(), now);
                    writing.put(e.getValue(), now);
                }
            }
            if (!commit.isEmpty()) {
                lastCommit = System.nanoTime();
                sent = true;
                commitSync(commit);
                writing.forEach(PartitionTrack::committed);
                commits.incrementAndGet();
            }
        } catch (Throwable e) {
            if (!sent || refused(e)) {
                // Nothing was written: the marks are undone, so that no later commit writes them, and
                // their deliveries go to the next stream of this source (KC-7).
                if (e instanceof CommitFailedException || e instanceof RebalanceInProgressException) {
                    refusedCommits.incrementAndGet();
                }
                marked.forEach((partition, offsets) -> {
                    PartitionTrack track = tracks.get(partition);
                    if (track != null) {
                        track.undo(offsets);
                    }
                });
                redeliverLater(markedDeliveries);
            }
            // Otherwise the outcome is unknown (a timeout: the broker may have written it): the marks
            // are kept, so that no later commit moves the offset back; the batches are named
            // unsettled, and may be committed by the next commit all the same (KC-7).
            if (e instanceof Error) {
                failing(e); // before the settlers hear of it: the stream has failed by the time they have
            }
            for (Request<K, V> request : round) {
                request.done.completeExceptionally(e);
            }
            if (e instanceof Error error) {
                throw error; // the poll thread cannot go on: the source fails, and what is queued with it
            }
            return;
        }
        for (Request<K, V> request : round) {
            request.done.complete(null);
        }
    }

    /**
     * {@return whether a commit that was sent and failed certainly wrote nothing}: the group
     * refused it, or the broker answered with an error that is not worth a retry. A timeout, a lost
     * connection or an interrupt leave the outcome unknown (the broker may have written it).
     */
    private static boolean refused(Throwable e) {
        return e instanceof CommitFailedException || e instanceof RebalanceInProgressException
                || (e instanceof ApiException && !(e instanceof RetriableException));
    }

    /**
     * Keeps deliveries that this source still holds and did not get done (released, or whose commit
     * was refused) for the next stream, which hands them out first (KC-6, KC-7).
     */
    private void redeliverLater(List<Delivery<K, V>> deliveries) {
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

    /** Commits, again if a wakeup cut it short (a wakeup left pending by a poll may land here, KC-4). */
    private void commitSync(Map<TopicPartition, OffsetAndMetadata> commit) {
        despiteWakeups(() -> {
            consumer.commitSync(commit);
            return commit;
        });
    }

    /**
     * Makes a blocking call of the consumer's, again when a wakeup cuts it short: a wakeup only asks
     * the poll thread to look at its requests, which it does next (Spring Kafka #4622 lost a commit
     * to a wakeup that landed in it). Outside {@code poll} only a wakeup that a poll left pending can
     * land, once ({@link #wakeIfPolling}); the bound of 10 tries only keeps a consumer that cut a
     * call short more often than that from holding the poll thread.
     */
    private static <R> R despiteWakeups(Supplier<R> call) {
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

    /** Nothing polled for {@code idleEnd}: the stream ends once the buffer is empty. */
    private void becomeIdle() {
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

    /** The poll thread cannot go on: the stream fails from now on, while the thread closes the consumer. */
    private void failing(Throwable failed) {
        lock.lock();
        try {
            failure = failed;
            deliveredOrEnded.signalAll();
        } finally {
            lock.unlock();
        }
    }

    /** The poll thread has ended: fails every request left, and ends the stream. */
    private void end(@Nullable Throwable failed) {
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
            request.done.completeExceptionally(failed != null
                    ? new KafkaSourceException("the Kafka source of " + topics + " failed before committing", failed)
                    : new IllegalStateException("the Kafka source of " + topics + " closed before committing"));
        }
    }

    /** Drops the buffered deliveries of {@code partitions}: never pulled, they are the next owner's. */
    private void dropBuffered(Collection<TopicPartition> partitions) {
        lock.lock();
        try {
            buffer.removeIf(delivery -> partitions.contains(delivery.topicPartition()));
            redeliver.removeIf(delivery -> partitions.contains(delivery.topicPartition()));
        } finally {
            lock.unlock();
        }
    }

    /** The rebalance callbacks, which the consumer runs on the poll thread inside {@code poll} and {@code close} (KC-8). */
    private final class Rebalance implements ConsumerRebalanceListener {
        @Override
        public void onPartitionsAssigned(Collection<TopicPartition> partitions) {
            boolean was = polling(false); // no wakeup while this callback calls the consumer
            try {
                track(partitions);
            } finally {
                polling(was);
            }
        }

        @Override
        public void onPartitionsRevoked(Collection<TopicPartition> partitions) {
            boolean was = polling(false);
            try {
                dropBuffered(partitions);
                serve(); // what was settled is committed before the partitions go
                forget(partitions);
            } finally {
                polling(was);
            }
        }

        @Override
        public void onPartitionsLost(Collection<TopicPartition> partitions) {
            dropBuffered(partitions);
            failHandedOver(partitions);
            forget(partitions);
        }

        private void track(Collection<TopicPartition> partitions) {
            if (partitions.isEmpty()) {
                return;
            }
            // A wakeup that the poll left pending may land in these calls: a callback that threw
            // would leave the partitions assigned and untracked, so each call is made again.
            Map<TopicPartition, OffsetAndMetadata> committed = despiteWakeups(() -> consumer.committed(new HashSet<>(partitions)));
            for (TopicPartition partition : partitions) {
                OffsetAndMetadata from = committed.get(partition);
                long start = from != null ? from.offset() : despiteWakeups(() -> consumer.position(partition));
                long assignment = ++assignments;
                tracks.put(partition, new PartitionTrack(assignment, from, start));
                current.put(partition, assignment);
            }
            if (full) { // this poll must not fill the buffer further with the new partitions' records (KC-2)
                consumer.pause(partitions);
            }
        }

        private void forget(Collection<TopicPartition> partitions) {
            for (TopicPartition partition : partitions) {
                tracks.remove(partition);
                current.remove(partition);
                pausedForMetadata.remove(partition);
            }
        }

        /**
         * This member lost {@code partitions} without giving them up: nothing of them can be
         * committed, so the batches already handed over that settle any of them fail (KC-8).
         */
        private void failHandedOver(Collection<TopicPartition> partitions) {
            List<Request<K, V>> failing = new ArrayList<>();
            lock.lock();
            try {
                for (Iterator<Request<K, V>> it = requests.iterator(); it.hasNext(); ) {
                    Request<K, V> request = it.next();
                    if (request.touches(partitions) && request.take()) {
                        it.remove();
                        failing.add(request);
                    }
                }
            } finally {
                lock.unlock();
            }
            refusedCommits.addAndGet(failing.size());
            for (Request<K, V> request : failing) {
                request.done.completeExceptionally(new KafkaSourceException("this member of " + group + " lost " + partitions
                        + " before their settlements could be committed: the next owner delivers them again"));
            }
        }
    }

    // ---- the stream -----------------------------------------------------------------------------

    /** The one open stream's iterator: takes from the buffer, waiting for records. */
    private final class Records implements Iterator<Delivery<K, V>> {
        /** Set by close. */
        @GuardedBy("lock")
        private boolean closed;
        /**
         * The delivery a {@code hasNext()} that returned true took from the buffer for the next
         * {@code next()}: a close or a revocation between the two cannot take it away.
         */
        @GuardedBy("lock")
        private @Nullable Delivery<K, V> peeked;

        @Override
        public boolean hasNext() {
            lock.lock();
            try {
                while (true) {
                    if (peeked != null) {
                        return true;
                    }
                    if (closed || closing) {
                        return false; // what is buffered stays for a later stream, or the partitions' next owner
                    }
                    if (failure != null) {
                        throw new KafkaSourceException("the Kafka source of " + topics + " failed: " + failure, failure);
                    }
                    if (ended) {
                        return false;
                    }
                    if (!buffer.isEmpty()) {
                        peeked = buffer.removeFirst();
                        if (buffer.size() == capacity / 2) {
                            roomOrWork.signalAll();
                        }
                        return true;
                    }
                    if (idle) {
                        return false;
                    }
                    try {
                        deliveredOrEnded.await();
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt(); // the pool's stop: it reads this as its own doing (WP-7)
                        throw new KafkaSourceException("interrupted while waiting for records of " + topics, e);
                    }
                }
            } finally {
                lock.unlock();
            }
        }

        @Override
        public Delivery<K, V> next() {
            lock.lock();
            try {
                if (!hasNext()) {
                    throw new NoSuchElementException();
                }
                Delivery<K, V> next = Objects.requireNonNull(peeked);
                peeked = null;
                return next;
            } finally {
                lock.unlock();
            }
        }

        void close() {
            lock.lock();
            try {
                if (!closed) {
                    closed = true;
                    streamOpen = false;
                    if (peeked != null) { // promised by hasNext(), never taken: back to the buffer's head
                        buffer.addFirst(peeked);
                        peeked = null;
                    }
                    deliveredOrEnded.signalAll();
                }
            } finally {
                lock.unlock();
            }
        }
    }

    // ---- the settler ----------------------------------------------------------------------------

    /** One batch handed to the poll thread, and the commit's outcome. */
    private static final class Request<K, V> {
        static final int QUEUED = 0;
        static final int TAKEN = 1;
        static final int CANCELLED = 2;

        final List<Settlement<Delivery<K, V>>> batch;
        final CompletableFuture<@Nullable Void> done = new CompletableFuture<>();
        /** QUEUED until the poll thread takes it or the settler gives it up. */
        private final AtomicInteger state = new AtomicInteger(QUEUED);

        Request(List<Settlement<Delivery<K, V>>> batch) {
            this.batch = batch;
        }

        /** {@return whether the poll thread may serve it (it was not given up)} */
        boolean take() {
            return state.compareAndSet(QUEUED, TAKEN);
        }

        /** {@return whether the settler gave it up before the poll thread took it} */
        boolean cancel() {
            return state.compareAndSet(QUEUED, CANCELLED);
        }

        boolean touches(Collection<TopicPartition> partitions) {
            for (Settlement<Delivery<K, V>> settlement : batch) {
                if (partitions.contains(settlement.item().topicPartition())) {
                    return true;
                }
            }
            return false;
        }
    }

    private final class GroupSettler implements Settler<Delivery<K, V>> {
        @Override
        public void settle(List<Settlement<Delivery<K, V>>> batch) throws Exception {
            writeDeadLetters(batch);
            Request<K, V> request = new Request<>(List.copyOf(batch));
            lock.lock();
            try {
                if (closing || ended) {
                    throw new IllegalStateException("the Kafka source of " + topics + " is closed: " + batch.size()
                            + " settlements not committed (the partitions' next owner delivers them again)");
                }
                requests.add(request);
                roomOrWork.signalAll();
                wakeIfPolling(); // the poll thread serves it now, not at the end of its poll
            } finally {
                lock.unlock();
            }
            try {
                request.done.get();
            } catch (InterruptedException e) {
                if (request.cancel()) {
                    throw e; // not taken: nothing of it will be committed
                }
                // taken: its commit is under way, and its outcome must be known; the interrupt is kept
                awaitUninterruptibly(request.done);
                Thread.currentThread().interrupt();
                if (request.done.isCompletedExceptionally()) {
                    rethrow(request.done.exceptionNow());
                }
            } catch (ExecutionException e) {
                rethrow(Objects.requireNonNull(e.getCause(), "a commit failed without a cause"));
            }
        }

        private static void rethrow(Throwable cause) throws Exception {
            if (cause instanceof Exception exception) {
                throw exception;
            }
            throw (Error) cause;
        }

        /**
         * Writes the dead letter of every failure whose partition this source still holds, and
         * waits until the topic has them all (KC-5); throws if any could not be written.
         */
        private void writeDeadLetters(List<Settlement<Delivery<K, V>>> batch) throws Exception {
            List<Future<RecordMetadata>> sent = new ArrayList<>();
            List<Delivery<K, V>> letters = new ArrayList<>();
            long deadline = System.nanoTime() + deadLetterTimeout.toNanos(); // one timeout for the whole batch
            for (Settlement<Delivery<K, V>> settlement : batch) {
                if (settlement instanceof Settlement.Failed<Delivery<K, V>> failed
                        && Objects.equals(current.get(failed.item().topicPartition()), failed.item().assignment())) {
                    letters.add(failed.item());
                    if (System.nanoTime() - deadline > 0) { // out of time: the batch fails, and the rest is not sent
                        sent.add(CompletableFuture.failedFuture(new TimeoutException("no time left to send it")));
                        break;
                    }
                    try {
                        sent.add(deadLetters.send(deadLetter(failed.failure())));
                    } catch (RuntimeException e) { // no metadata for the topic within max.block.ms, a record too large
                        sent.add(CompletableFuture.failedFuture(e));
                        break; // the batch fails: the letters after it need not wait for their own timeout
                    }
                }
            }
            for (int i = 0; i < sent.size(); i++) {
                try {
                    sent.get(i).get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                } catch (ExecutionException | TimeoutException | CancellationException e) {
                    throw new KafkaSourceException("the dead letter of " + letters.get(i) + " could not be written to "
                            + letters.get(i).topic() + deadLetterSuffix + " within " + deadLetterTimeout + ": "
                            + (e instanceof ExecutionException ? e.getCause() : e) + "; the batch is not committed", e);
                }
            }
            deadLettersWritten.addAndGet(sent.size());
        }

        private ProducerRecord<byte[], byte[]> deadLetter(ItemFailure<Delivery<K, V>> failure) {
            Delivery<K, V> delivery = failure.item();
            List<Header> headers = new ArrayList<>();
            delivery.headers().forEach(headers::add);
            RecordHeaders letter = new RecordHeaders(headers);
            letter.add("drain.dlt.topic", delivery.topic().getBytes(StandardCharsets.UTF_8));
            letter.add("drain.dlt.partition", Integer.toString(delivery.partition()).getBytes(StandardCharsets.UTF_8));
            letter.add("drain.dlt.offset", Long.toString(delivery.offset()).getBytes(StandardCharsets.UTF_8));
            letter.add("drain.dlt.attempts", Integer.toString(failure.attempts()).getBytes(StandardCharsets.UTF_8));
            letter.add("drain.dlt.error", describe(failure).getBytes(StandardCharsets.UTF_8));
            return new ProducerRecord<>(delivery.topic() + deadLetterSuffix, null, delivery.timestamp(), delivery.rawKey(),
                    delivery.rawValue(), letter);
        }

        @Override
        public String toString() {
            return "the settler of the Kafka source of " + topics + " (group " + group + ")";
        }
    }

    private static void awaitUninterruptibly(CompletableFuture<@Nullable Void> done) {
        boolean interrupted = false;
        while (!done.isDone()) {
            try {
                done.get();
            } catch (InterruptedException e) {
                interrupted = true;
            } catch (ExecutionException e) {
                break;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    /** A failure's text for a dead letter: never throws, at most {@link #MAX_ERROR} characters, never half a character. */
    static String describe(ItemFailure<?> failure) {
        String text;
        try {
            text = failure.cause().toString();
        } catch (Throwable e) { // a cause's toString or getMessage is the user's code, and may throw anything
            text = failure.cause().getClass().getName() + " (whose toString() threw " + e.getClass().getName() + ")";
        }
        text = "after " + failure.attempts() + " attempts: " + text;
        if (text.length() <= MAX_ERROR) {
            return text;
        }
        int end = MAX_ERROR - 1;
        if (Character.isHighSurrogate(text.charAt(end - 1))) {
            end--;
        }
        return text.substring(0, end) + "…";
    }

    /**
     * How to open a source. {@link #topics} is required; every other setting has a default.
     *
     * @param <K> the key type
     * @param <V> the value type
     */
    public static final class Builder<K, V> {
        private final Map<String, Object> consumerConfig;
        private final Deserializer<K> keys;
        private final Deserializer<V> values;
        private final Set<String> topics = new LinkedHashSet<>();
        private final Map<String, Object> producerConfig = new HashMap<>();
        private String deadLetterSuffix = "-dlt";
        private int buffer = 1_024;
        private int metadataBudget = 4_000;
        private @Nullable Duration idleEnd;
        private Duration openTimeout = Duration.ofSeconds(30);
        private Duration deadLetterTimeout = Duration.ofSeconds(30);
        private Duration closeTimeout = Duration.ofSeconds(30);
        private Duration commitInterval = Duration.ofMillis(10);

        private Builder(Map<String, ?> consumerConfig, Deserializer<K> keys, Deserializer<V> values) {
            this.consumerConfig = new HashMap<>(Objects.requireNonNull(consumerConfig, "consumerConfig"));
            this.keys = Objects.requireNonNull(keys, "keys");
            this.values = Objects.requireNonNull(values, "values");
        }

        /**
         * The topics to consume; each must exist, and so must its dead-letter topic.
         *
         * @param names one or more topic names
         * @return this builder
         */
        public Builder<K, V> topics(String... names) {
            for (String name : names) {
                topics.add(Objects.requireNonNull(name, "topic"));
            }
            return this;
        }

        /**
         * Where a failure's dead letter goes: the topic's name with this suffix ({@code -dlt} by default).
         *
         * @param suffix a non-empty suffix
         * @return this builder
         */
        public Builder<K, V> deadLetterSuffix(String suffix) {
            if (Objects.requireNonNull(suffix, "suffix").isEmpty()) {
                throw new IllegalArgumentException("a dead-letter suffix is not empty: the dead letters would go back to the topic");
            }
            this.deadLetterSuffix = suffix;
            return this;
        }

        /**
         * Settings of the dead-letter producer, over the defaults: the consumer's
         * {@code bootstrap.servers}, {@code acks=all}, {@code enable.idempotence=true} and
         * {@code max.block.ms} of the dead-letter timeout.
         *
         * @param config producer settings
         * @return this builder
         */
        public Builder<K, V> deadLetterProducer(Map<String, ?> config) {
            producerConfig.putAll(Objects.requireNonNull(config, "config"));
            return this;
        }

        /**
         * How many deliveries the buffer holds before the poll thread pauses the partitions (KC-2);
         * {@code max.poll.records} is lowered to it, so that the buffer never holds more than twice it.
         *
         * @param deliveries 1 to 100,000 (1,024 by default)
         * @return this builder
         */
        public Builder<K, V> buffer(int deliveries) {
            if (deliveries < 1 || deliveries > 100_000) {
                throw new IllegalArgumentException("a buffer holds 1 to 100,000 deliveries, not " + deliveries);
            }
            this.buffer = deliveries;
            return this;
        }

        /**
         * The longest commit metadata the source writes (KC-7): the brokers' {@code offset.metadata.max.bytes}
         * (4,096 by default) or less; a partition is paused at three quarters of it.
         *
         * @param characters 64 to 1,000,000 (4,000 by default)
         * @return this builder
         */
        public Builder<K, V> metadataBudget(int characters) {
            if (characters < 64 || characters > 1_000_000) {
                throw new IllegalArgumentException("a metadata budget is 64 to 1,000,000 characters, not " + characters);
            }
            this.metadataBudget = characters;
            return this;
        }

        /**
         * Ends the stream once nothing has been polled for {@code idle} (a batch job, a test); by
         * default the stream runs until the source is closed.
         *
         * @param idle at least 100 ms
         * @return this builder
         */
        public Builder<K, V> endWhenIdle(Duration idle) {
            if (Objects.requireNonNull(idle, "idle").compareTo(POLL) < 0) {
                throw new IllegalArgumentException("an idle end is at least " + POLL + ", not " + idle);
            }
            this.idleEnd = idle;
            return this;
        }

        /**
         * How long {@link #open()} waits for the brokers to describe the topics.
         *
         * @param timeout positive
         * @return this builder
         */
        public Builder<K, V> openTimeout(Duration timeout) {
            this.openTimeout = positive(timeout, "openTimeout");
            return this;
        }

        /**
         * How long a batch's dead letters may take to be written before the batch fails (KC-5).
         *
         * @param timeout positive
         * @return this builder
         */
        public Builder<K, V> deadLetterTimeout(Duration timeout) {
            this.deadLetterTimeout = positive(timeout, "deadLetterTimeout");
            return this;
        }

        /**
         * The shortest time between two commits (KC-4): a batch handed over sooner waits for it, and
         * the settlements that come meanwhile wait in the pool for the next batch, so that at a low
         * rate a commit carries more than a few records. A settled batch still returns only once it
         * is committed; the interval only delays that. Zero commits each batch at once.
         *
         * <p>The interval also bounds the rate: the pool's settler waits for each batch's commit,
         * so at most {@code settleBatch} settlements are committed per interval (6,400 a second
         * with the pool's default batch of 64 and this default interval; see
         * {@link KafkaSource#settler()}). A longer interval makes fewer commits and costs less CPU
         * (with one worker and a 1 ms handler, 100 ms gave about 3 % more records a second with
         * batches of 512, decision 0049), but only while {@code settleBatch} holds more than the
         * records of one interval, with room to spare; below that it caps the run, and each batch
         * is acknowledged later.
         *
         * @param interval zero to a second (10 ms by default)
         * @return this builder
         */
        public Builder<K, V> commitInterval(Duration interval) {
            if (Objects.requireNonNull(interval, "interval").isNegative() || interval.compareTo(Duration.ofSeconds(1)) > 0) {
                throw new IllegalArgumentException("a commit interval is zero to a second, not " + interval);
            }
            this.commitInterval = interval;
            return this;
        }

        /**
         * How long {@link KafkaSource#close()} gives the consumer to leave its group, and the
         * producer to finish. The close also makes its last commits first, each bounded by the
         * consumer's {@code default.api.timeout.ms}.
         *
         * @param timeout positive
         * @return this builder
         */
        public Builder<K, V> closeTimeout(Duration timeout) {
            this.closeTimeout = positive(timeout, "closeTimeout");
            return this;
        }

        /**
         * Connects, checks that every topic and its dead-letter topic exist, and starts the poll
         * thread, which subscribes (KC-1). If anything fails, nothing is left running.
         *
         * @return the open source
         * @throws KafkaSourceException if the brokers cannot be reached within the open timeout, or
         *     a topic or a dead-letter topic does not exist; its message names them
         * @throws IllegalArgumentException if no topic, no {@code bootstrap.servers} or no
         *     {@code group.id} was given
         */
        public KafkaSource<K, V> open() {
            if (topics.isEmpty()) {
                throw new IllegalArgumentException("a Kafka source needs at least one topic");
            }
            Object servers = consumerConfig.get(ConsumerConfig.BOOTSTRAP_SERVERS_CONFIG);
            if (servers == null) {
                throw new IllegalArgumentException("a Kafka source needs bootstrap.servers in its consumer settings");
            }
            if (consumerConfig.get(ConsumerConfig.GROUP_ID_CONFIG) == null) {
                throw new IllegalArgumentException("a Kafka source needs group.id in its consumer settings");
            }
            Map<String, Object> config = new HashMap<>(consumerConfig);
            config.put(ConsumerConfig.ENABLE_AUTO_COMMIT_CONFIG, "false");
            config.putIfAbsent(ConsumerConfig.GROUP_PROTOCOL_CONFIG, "consumer");
            config.putIfAbsent(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG, "earliest");
            // a poll returns at most a buffer's worth: the buffer then never holds more than two
            int maxPoll = Integer.parseInt(String.valueOf(config.getOrDefault(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, "500")));
            config.put(ConsumerConfig.MAX_POLL_RECORDS_CONFIG, Integer.toString(Math.min(maxPoll, buffer)));
            KafkaConsumer<byte[], byte[]> consumer = null;
            KafkaProducer<byte[], byte[]> producer = null;
            try {
                consumer = new KafkaConsumer<>(config, new ByteArrayDeserializer(), new ByteArrayDeserializer());
                for (String topic : topics) {
                    mustExist(consumer, topic, servers);
                    mustExist(consumer, topic + deadLetterSuffix, servers);
                }
                producer = new KafkaProducer<>(producerSettings(servers), new ByteArraySerializer(), new ByteArraySerializer());
                for (String topic : topics) { // the dead letters are written with the producer's settings: it must reach them too
                    producer.partitionsFor(topic + deadLetterSuffix);
                }
                KafkaSource<K, V> source = new KafkaSource<>(this, consumer, producer);
                source.start();
                return source;
            } catch (RuntimeException | Error e) {
                if (consumer != null) {
                    try {
                        consumer.close(CloseOptions.timeout(Duration.ZERO));
                    } catch (RuntimeException suppressed) {
                        e.addSuppressed(suppressed);
                    }
                }
                if (producer != null) {
                    producer.close(Duration.ZERO);
                }
                if (e instanceof KafkaSourceException || e instanceof Error) {
                    throw e;
                }
                throw new KafkaSourceException("cannot open a Kafka source of " + topics + " at " + servers + ": " + e, e);
            }
        }

        /**
         * The dead-letter producer's settings: the consumer's settings that a producer also takes
         * (the servers, security, DNS; not the consumer's interceptors or client id), then
         * {@code acks=all}, idempotence and {@code max.block.ms} of the dead-letter timeout, then
         * {@link #deadLetterProducer}'s.
         */
        private Map<String, Object> producerSettings(Object servers) {
            Map<String, Object> producing = new HashMap<>();
            Set<String> producerNames = ProducerConfig.configNames();
            consumerConfig.forEach((name, value) -> {
                if (producerNames.contains(name) && !name.equals(ProducerConfig.CLIENT_ID_CONFIG)
                        && !name.equals(ProducerConfig.INTERCEPTOR_CLASSES_CONFIG) && !name.startsWith("key.")
                        && !name.startsWith("value.")) {
                    producing.put(name, value);
                }
            });
            producing.put(ProducerConfig.BOOTSTRAP_SERVERS_CONFIG, servers);
            producing.put(ProducerConfig.ACKS_CONFIG, "all");
            producing.put(ProducerConfig.ENABLE_IDEMPOTENCE_CONFIG, "true");
            // send() itself waits for the topic's metadata: no longer than a batch may wait for its letters
            producing.put(ProducerConfig.MAX_BLOCK_MS_CONFIG, Long.toString(deadLetterTimeout.toMillis()));
            producing.putAll(producerConfig);
            return producing;
        }

        private void mustExist(KafkaConsumer<byte[], byte[]> consumer, String topic, Object servers) {
            List<PartitionInfo> partitions;
            try {
                partitions = consumer.partitionsFor(topic, openTimeout);
            } catch (org.apache.kafka.common.errors.TimeoutException e) {
                throw new KafkaSourceException("cannot reach the Kafka brokers at " + servers + " within " + openTimeout
                        + " (describing the topic " + topic + ")", e);
            }
            if (partitions == null || partitions.isEmpty()) {
                throw new KafkaSourceException("there is no topic " + topic + " at " + servers
                        + (topic.endsWith(deadLetterSuffix) ? " (the dead-letter topic of " + topic.substring(0, topic.length()
                                - deadLetterSuffix.length()) + "; create it, or choose another suffix)" : ""));
            }
        }

        private String group() {
            return String.valueOf(consumerConfig.get(ConsumerConfig.GROUP_ID_CONFIG));
        }

        private Duration commitTimeout() {
            Object ms = consumerConfig.get(ConsumerConfig.DEFAULT_API_TIMEOUT_MS_CONFIG);
            return Duration.ofMillis(ms == null ? 60_000 : Long.parseLong(String.valueOf(ms)));
        }

        private static Duration positive(Duration d, String name) {
            if (Objects.requireNonNull(d, name).isNegative() || d.isZero()) {
                throw new IllegalArgumentException(name + " is positive, not " + d);
            }
            return d;
        }
    }
}
