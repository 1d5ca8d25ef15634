package dev.drain.kafka;

import java.time.Duration;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * What an open source was built with ({@link KafkaSource.Builder}), as its parts read it: immutable,
 * so every thread may read it.
 *
 * @param group the consumer group's id
 * @param topics the topics consumed, in the order given
 * @param deadLetterSuffix the suffix of each topic's dead-letter topic (KC-5)
 * @param buffer how many deliveries the buffer holds before the partitions are paused (KC-2)
 * @param metadataBudget the longest commit metadata written (KC-7)
 * @param idleEnd how long nothing may be polled before the stream ends, or null for never
 * @param deadLetterTimeout how long a batch's dead letters may take (KC-5)
 * @param closeTimeout how long the consumer may take to leave its group, and the producer to finish
 * @param commitInterval the shortest time between two commits (KC-4)
 * @param commitTimeout the consumer's {@code default.api.timeout.ms}: how long one commit may take
 * @param batchesInFlight how many of the pool's settlement batches may wait for their commit at once (KC-4)
 */
record Settings(String group, List<String> topics, String deadLetterSuffix, int buffer, int metadataBudget,
        @Nullable Duration idleEnd, Duration deadLetterTimeout, Duration closeTimeout, Duration commitInterval,
        Duration commitTimeout, int batchesInFlight) {}
