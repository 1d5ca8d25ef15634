package dev.drain.kafka;

import dev.drain.pool.Settler;
import java.time.Duration;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.stream.Stream;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.common.TopicPartition;
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
    // The parts, and the one lock order, are described in package-info.java.

    private final String group;
    private final Exchange<K, V> exchange;
    private final PollLoop<K, V> poll;
    private final DeadLetters<K, V> deadLetters;
    private final GroupSettler<K, V> settler;
    private final Resources resources;

    /** Made by {@link Opening}: the parts of an open source, its poll thread not yet started. */
    KafkaSource(Settings settings, Deserializer<K> keys, Deserializer<V> values, KafkaConsumer<byte[], byte[]> consumer,
            KafkaProducer<byte[], byte[]> producer) {
        this.group = settings.group();
        this.exchange = new Exchange<>(settings, consumer);
        this.resources = new Resources(producer, keys, values, settings.closeTimeout());
        this.poll = new PollLoop<>(settings, consumer, keys, values, exchange, resources);
        this.deadLetters = new DeadLetters<>(settings, producer, poll.tracks());
        this.settler = new GroupSettler<>(settings, exchange, deadLetters);
    }

    void start() {
        poll.start();
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
        return Records.open(exchange);
    }

    /**
     * The settler to give the pool ({@code WorkerPool.Builder.settler}): for each batch it writes the
     * dead letters of the failures and hands the batch to the poll thread; the batch is settled once
     * the commit that records it has succeeded (KC-4, KC-5). Up to
     * {@linkplain Builder#batchesInFlight batchesInFlight} batches wait for their commits at once,
     * so a commit carries every batch that arrived in its interval, and the pool's
     * {@code settleBatch} does not cap the rate.
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
        return poll.commits().staleSettlements();
    }

    /** {@return how many commits succeeded} */
    public long commits() {
        return poll.commits().commits();
    }

    /** {@return how many commits the group refused (this member no longer owned a partition)} */
    public long refusedCommits() {
        return poll.commits().refusedCommits();
    }

    /** {@return how many polled records were not delivered, since an earlier owner's commit recorded them done (KC-3)} */
    public long skippedAsDone() {
        return poll.skippedAsDone();
    }

    /** {@return how many dead letters were written} */
    public long deadLetters() {
        return deadLetters.written();
    }

    /** {@return the partitions the poll thread had paused at its last look (KC-2), for tests} */
    Set<TopicPartition> paused() {
        return poll.paused();
    }

    /** {@return the partitions this source is assigned now} */
    public Set<TopicPartition> assignment() {
        return poll.tracks().assigned();
    }

    /**
     * {@return the source's state now, for debugging: its group, each assigned partition's
     * watermark and outstanding offsets, what is paused and buffered, and its counters}
     */
    @Override
    public String toString() {
        Exchange.Snapshot now = exchange.snapshot();
        return "KafkaSource[" + now.phase() + ", group " + group + ", partitions " + poll.tracked() + ", paused " + poll.paused()
                + ", buffered " + now.buffered() + ", batches handed over " + now.handedOver() + ", commits " + commits()
                + ", refused " + refusedCommits() + ", stale " + staleSettlements() + ", skipped " + skippedAsDone()
                + ", dead letters " + deadLetters() + "]";
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
        boolean fromThePollThread = poll.isPollThread();
        exchange.close(fromThePollThread);
        if (fromThePollThread) {
            resources.leaveToThePollThread(); // from a deserializer: the poll thread ends, and closes the rest, when it returns
            return;
        }
        poll.awaitEnd();
        boolean interrupted = Thread.interrupted(); // kept for the caller: the producer and the deserializers close without it
        try {
            resources.closeOnce();
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * How to open a source. {@link #topics} is required; every other setting has a default.
     *
     * @param <K> the key type
     * @param <V> the value type
     */
    public static final class Builder<K, V> {
        // Set on the thread that builds (a builder is not thread-safe), read by Opening in open().
        final Map<String, Object> consumerConfig;
        final Deserializer<K> keys;
        final Deserializer<V> values;
        final Set<String> topics = new LinkedHashSet<>();
        final Map<String, Object> producerConfig = new HashMap<>();
        String deadLetterSuffix = "-dlt";
        int buffer = 1_024;
        int metadataBudget = 4_000;
        @Nullable Duration idleEnd;
        Duration openTimeout = Duration.ofSeconds(30);
        Duration deadLetterTimeout = Duration.ofSeconds(30);
        Duration closeTimeout = Duration.ofSeconds(30);
        Duration commitInterval = Duration.ofMillis(10);
        int batchesInFlight = 32;

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
            if (Objects.requireNonNull(idle, "idle").compareTo(PollLoop.POLL) < 0) {
                throw new IllegalArgumentException("an idle end is at least " + PollLoop.POLL + ", not " + idle);
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
         * rate a commit carries more than a few records. A batch is still settled only once it is
         * committed; the interval only delays that. Zero commits each batch at once.
         *
         * <p>A longer interval makes fewer commits and costs less CPU, and acknowledges each batch
         * later; the rate it allows is {@link #batchesInFlight} batches per interval.
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
         * How many of the pool's settlement batches may wait for their commit at once (KC-4,
         * {@code Settler.batchesInFlight}): the next batch is handed to the poll thread while
         * earlier ones wait, so one commit carries every batch that arrived in its interval. The
         * pool's workers wait while {@code (3 + batchesInFlight) × settleBatch} settlements are not
         * yet committed. With 1, each batch waits for its own commit before the next is handed over,
         * and at most {@code settleBatch} settlements are committed per interval.
         *
         * @param batches 1 to 1,000 (32 by default)
         * @return this builder
         */
        public Builder<K, V> batchesInFlight(int batches) {
            if (batches < 1 || batches > 1_000) {
                throw new IllegalArgumentException("batchesInFlight is 1 to 1,000, not " + batches);
            }
            this.batchesInFlight = batches;
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
            return Opening.open(this);
        }

        private static Duration positive(Duration d, String name) {
            if (Objects.requireNonNull(d, name).isNegative() || d.isZero()) {
                throw new IllegalArgumentException(name + " is positive, not " + d);
            }
            return d;
        }
    }
}
