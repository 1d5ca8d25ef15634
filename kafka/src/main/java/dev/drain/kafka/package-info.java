/**
 * A worker pool's source and settler on a Kafka consumer group ({@link dev.drain.kafka.KafkaSource}):
 * what the group commits is exactly what the run's books recorded (spec {@code specs/kafka-source.md}).
 * A broker in the JVM that needs nothing installed, {@code dev.drain.lab.LocalKafka}, is in the
 * artifact {@code drain-lab}, which a project opts into.
 */
@NullMarked
package dev.drain.kafka;

import org.jspecify.annotations.NullMarked;
