/**
 * A worker pool's source and settler on a Kafka consumer group ({@link dev.drain.kafka.KafkaSource}):
 * what the group commits is exactly what the run's books recorded (spec {@code specs/kafka-source.md}),
 * and {@link dev.drain.kafka.LocalKafka}, a cluster in this JVM that needs nothing installed.
 */
@NullMarked
package dev.drain.kafka;

import org.jspecify.annotations.NullMarked;
