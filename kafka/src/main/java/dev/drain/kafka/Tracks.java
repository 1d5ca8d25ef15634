package dev.drain.kafka;

import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BiConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.jspecify.annotations.Nullable;

/**
 * The partitions a source is assigned, with what it knows of each ({@link PartitionTrack}): the
 * poll thread's, which assigns and forgets them in the rebalance callbacks (KC-8), marks what is
 * polled and settled, and commits. Other threads see only which assignment of each partition is
 * current ({@link #holds}, {@link #assigned}), through a concurrent map the poll thread keeps.
 */
final class Tracks {
    private final Thread pollThread;
    /** Each assigned partition's track; poll thread only. */
    private final Map<TopicPartition, PartitionTrack> tracks = new HashMap<>();
    /** Partitions paused because their done offsets above the watermark near the metadata budget; poll thread only. */
    private final Set<TopicPartition> pausedForMetadata = new HashSet<>();
    /** Numbers the assignments; poll thread only. */
    private long assignments;
    /**
     * Each assigned partition's assignment number: written by the poll thread with {@link #tracks},
     * read by any thread (the settler skips the dead letters of a partition no longer held).
     */
    private final Map<TopicPartition, Long> current = new ConcurrentHashMap<>();

    Tracks(Thread pollThread) {
        this.pollThread = pollThread;
    }

    /** {@return the track of {@code partition}, or null if it is not assigned}; poll thread only. */
    @Nullable PartitionTrack get(TopicPartition partition) {
        assert Thread.currentThread() == pollThread;
        return tracks.get(partition);
    }

    /** Tracks a partition assigned from {@code start}, with what the group had committed for it (or null); poll thread only. */
    void assign(TopicPartition partition, @Nullable OffsetAndMetadata committed, long start) {
        assert Thread.currentThread() == pollThread;
        long assignment = ++assignments;
        tracks.put(partition, new PartitionTrack(assignment, committed, start));
        current.put(partition, assignment);
    }

    /** Forgets partitions revoked or lost; poll thread only. */
    void forget(Collection<TopicPartition> partitions) {
        assert Thread.currentThread() == pollThread;
        for (TopicPartition partition : partitions) {
            tracks.remove(partition);
            current.remove(partition);
            pausedForMetadata.remove(partition);
        }
    }

    /** {@return whether no partition is assigned}; poll thread only. */
    boolean isEmpty() {
        assert Thread.currentThread() == pollThread;
        return tracks.isEmpty();
    }

    /** Calls {@code action} with each assigned partition and its track; poll thread only. */
    void forEach(BiConsumer<TopicPartition, PartitionTrack> action) {
        assert Thread.currentThread() == pollThread;
        tracks.forEach(action);
    }

    /**
     * {@return the partitions to pause for their commit metadata (KC-7)}: each whose metadata passes
     * three quarters of {@code budget} or whose map spans more than half of {@link OffsetMap#MAX_SPAN},
     * until it is back under half of each. Poll thread only; the set is read-only.
     */
    Set<TopicPartition> pausedForMetadata(int budget) {
        assert Thread.currentThread() == pollThread;
        for (Map.Entry<TopicPartition, PartitionTrack> e : tracks.entrySet()) {
            int length = e.getValue().toCommit().metadata().length();
            long span = e.getValue().span();
            if (length > budget * 3 / 4 || span > OffsetMap.MAX_SPAN / 2) {
                pausedForMetadata.add(e.getKey());
            } else if (length < budget / 2 && span < OffsetMap.MAX_SPAN / 4) {
                pausedForMetadata.remove(e.getKey());
            }
        }
        return Collections.unmodifiableSet(pausedForMetadata);
    }

    /** {@return each assigned partition's watermark and outstanding count, for toString}; poll thread only. */
    String describe() {
        assert Thread.currentThread() == pollThread;
        StringBuilder text = new StringBuilder("{");
        tracks.forEach((partition, track) -> text.append(text.length() > 1 ? ", " : "").append(partition).append("=")
                .append(track.watermark()).append("+").append(track.outstanding()));
        return text.append("}").toString();
    }

    /** {@return whether {@code assignment} is the current assignment of {@code partition}}; any thread. */
    boolean holds(TopicPartition partition, long assignment) {
        return Objects.equals(current.get(partition), assignment);
    }

    /** {@return the partitions assigned now}; any thread. */
    Set<TopicPartition> assigned() {
        return Set.copyOf(current.keySet());
    }
}
