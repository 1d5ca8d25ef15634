package dev.drain.kafka;

import java.util.List;
import java.util.NavigableSet;
import java.util.Objects;
import java.util.TreeSet;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.jspecify.annotations.Nullable;

/**
 * What a source knows of one partition it is assigned (KC-4): the offsets it has polled and not
 * yet seen done (outstanding: in the buffer, in the pool, or released), and the done offsets above
 * the first of them. The committed watermark is the first outstanding offset, or the offset after
 * the last one polled when none is outstanding; the done offsets above it go into the commit's
 * metadata ({@link OffsetMap}). Records are polled in offset order, but offsets need not be
 * consecutive (a compacted topic, transaction markers): only offsets the source has seen count.
 *
 * <p>Not thread-safe: only the poll thread touches it.
 */
final class PartitionTrack {
    /** Which assignment of the partition this is: deliveries carry it, and a settlement of another one is stale. */
    final long assignment;
    /** Polled, and not yet done. */
    private final NavigableSet<Long> outstanding = new TreeSet<>();
    /**
     * Done, and not yet below a committed watermark: the commit's metadata is the part above the
     * watermark. Dropped only once a commit has written them, so that a failed commit is undone exactly.
     */
    private final NavigableSet<Long> doneAbove;
    /** The offset after the last one polled, or the committed offset the assignment started from. */
    private long next;
    /** What the last commit wrote, or what was committed when the assignment began; null if nothing was. */
    private @Nullable OffsetAndMetadata committed;
    /** {@link #toCommit()} as of the last change, or null: encoding the metadata is the costly part. */
    private @Nullable OffsetAndMetadata toCommit;

    /**
     * @param assignment the assignment's number
     * @param committed what the group had committed for the partition when it was assigned, or null
     * @param start where the consumer's position begins: the committed offset, or the reset's
     */
    PartitionTrack(long assignment, @Nullable OffsetAndMetadata committed, long start) {
        this.assignment = assignment;
        this.committed = committed;
        this.next = start;
        this.doneAbove = committed == null || committed.offset() != start
                ? new TreeSet<>()
                : OffsetMap.decode(start, committed.metadata());
    }

    /**
     * A polled record: {@return false if an earlier owner recorded it done (it is then not
     * delivered), true if it is outstanding now}
     */
    boolean polled(long offset) {
        toCommit = null;
        next = Math.max(next, offset + 1);
        if (doneAbove.contains(offset)) {
            return false;
        }
        outstanding.add(offset);
        return true;
    }

    /** A delivery settled as done (succeeded, or dead-lettered); {@return false if it was not outstanding} */
    boolean done(long offset) {
        toCommit = null;
        if (!outstanding.remove(offset)) {
            return false;
        }
        doneAbove.add(offset);
        return true;
    }

    /**
     * Undoes {@link #done} for offsets whose commit failed, so that a later commit does not write
     * them: exact, since nothing is dropped from the done offsets until a commit has written them.
     */
    void undo(List<Long> offsets) {
        toCommit = null;
        for (long offset : offsets) {
            doneAbove.remove(offset);
            outstanding.add(offset);
        }
    }

    /** {@return the offset to commit: the first one not done} */
    long watermark() {
        return outstanding.isEmpty() ? firstAboveDone() : outstanding.first();
    }

    /** {@return what a commit writes now: the watermark and the done offsets above it} */
    OffsetAndMetadata toCommit() {
        if (toCommit == null) {
            long watermark = watermark();
            toCommit = new OffsetAndMetadata(watermark, OffsetMap.encode(watermark, doneAbove.tailSet(watermark, false)));
        }
        return toCommit;
    }

    /** {@return whether {@link #toCommit()} differs from what was last committed} */
    boolean changed() {
        OffsetAndMetadata now = toCommit();
        return committed == null || committed.offset() != now.offset() || !Objects.equals(committed.metadata(), now.metadata());
    }

    /** A commit wrote {@code written}: the done offsets below its watermark are covered by it, and dropped. */
    void committed(OffsetAndMetadata written) {
        toCommit = null;
        committed = written;
        doneAbove.headSet(written.offset(), false).clear();
    }

    /** {@return how far above the watermark the last done offset is (0 with none): what the metadata's map spans} */
    long span() {
        return doneAbove.isEmpty() ? 0 : Math.max(0, doneAbove.last() - watermark());
    }

    /** {@return how many offsets are polled and not done} */
    int outstanding() {
        return outstanding.size();
    }

    /**
     * When nothing is outstanding, the watermark is {@code next}, or past it over the offsets from
     * {@code next} on that an earlier owner recorded done (records this assignment has not polled,
     * and will skip): those need no delivery.
     */
    private long firstAboveDone() {
        long w = next;
        while (doneAbove.contains(w)) {
            w++;
        }
        return w;
    }
}
