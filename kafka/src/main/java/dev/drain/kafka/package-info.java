/**
 * A worker pool's source and settler on a Kafka consumer group ({@link dev.drain.kafka.KafkaSource}):
 * what the group commits is exactly what the run's books recorded (spec {@code specs/kafka-source.md}).
 * A broker in the JVM that needs nothing installed, {@code dev.drain.lab.LocalKafka}, is in the
 * artifact {@code drain-lab}, which a project opts into.
 */
@NullMarked
package dev.drain.kafka;

import org.jspecify.annotations.NullMarked;

/*
 * Inside the source: each class owns the state of one thread, or says what guards what it shares.
 *
 *   KafkaSource   the public face: it builds the parts below, and closes them in order.
 *   PollLoop      the poll thread and what it alone touches: the consumer, and through it
 *   Tracks        the assigned partitions' tracks (with a concurrent map of which assignment is
 *                 current, for the other threads),
 *   Commits       the commits of the batches handed over, and
 *   Rebalance     the rebalance callbacks, which the consumer runs on the poll thread.
 *   Exchange      what the poll thread shares with the stream's reader, the settler thread and any
 *                 closer: the buffer, the batches handed over, the stream's and the source's phase.
 *   Records       the stream's iterator, on the pool's producer: a client of the exchange's lock.
 *   GroupSettler  the settler, on the pool's settler thread: it writes the DeadLetters and hands
 *                 each batch over as a Request, whose future the poll thread completes at the
 *                 commit; the pool keeps up to batchesInFlight of them waiting (decision 0053).
 *   Resources     the producer and the deserializers, closed once the poll thread has ended.
 *   Opening       Builder.open(), on the caller's thread.
 *
 * Locks, in the one order in which they may be taken:
 *   1. Resources.closeLock (a monitor): held while the producer and the deserializers close; a
 *      deserializer's close may call KafkaSource.close(), which then takes the exchange's lock.
 *   2. Exchange.lock (a ReentrantLock, with the conditions deliveredOrEnded and roomOrWork): guards
 *      the exchange's state and the stream's own (Records). Nothing holding it takes closeLock or
 *      waits for anything but its own conditions; the one call out of the package made under it
 *      is KafkaConsumer.wakeup() (decision 0047), which takes only the consumer's own lock, one the
 *      poll thread never holds while it waits for this one.
 * A Request's state is a compare-and-set, not a lock, and its future is completed with no lock
 * held, so whatever runs on its completion (the pool's answer to its settler thread, which takes
 * only the pool's own hand-off lock) runs outside both.
 */
