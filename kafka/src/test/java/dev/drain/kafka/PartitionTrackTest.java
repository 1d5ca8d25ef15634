package dev.drain.kafka;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.NavigableSet;
import java.util.TreeSet;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.junit.jupiter.api.Test;

/** What a source knows of one partition, and what it commits. */
class PartitionTrackTest {

    private static PartitionTrack polled(long from, long to) {
        PartitionTrack track = new PartitionTrack(1, null, from);
        for (long o = from; o < to; o++) {
            assertThat(track.polled(o)).isTrue();
        }
        return track;
    }

    /** KC-4: the watermark is the first outstanding offset, and the done offsets above it are the metadata. */
    @Test
    void theWatermarkIsTheFirstOffsetNotDone() {
        PartitionTrack track = polled(0, 6);
        assertThat(track.watermark()).isZero();
        track.done(0);
        track.done(2);
        track.done(3);
        assertThat(track.watermark()).isEqualTo(1);
        assertThat(OffsetMap.decode(1, track.toCommit().metadata())).containsExactly(2L, 3L);
        track.done(1);
        assertThat(track.toCommit().offset()).isEqualTo(4);
        assertThat(track.toCommit().metadata()).isEmpty();
    }

    /** KC-4: with nothing outstanding, the watermark is the offset after the last one polled, gaps in the offsets included. */
    @Test
    void offsetsNeedNotBeConsecutive() {
        PartitionTrack track = new PartitionTrack(1, null, 0);
        track.polled(0);
        track.polled(5); // 1..4 compacted away, or transaction markers
        track.done(5);
        assertThat(track.watermark()).isZero();
        track.done(0);
        assertThat(track.watermark()).isEqualTo(6);
    }

    /** KC-3, KC-4: what an earlier owner's commit recorded done is not delivered, and the watermark passes it. */
    @Test
    void whatAnEarlierOwnerRecordedDoneIsSkipped() {
        NavigableSet<Long> done = new TreeSet<>(List.of(12L, 13L));
        PartitionTrack track = new PartitionTrack(2, new OffsetAndMetadata(10, OffsetMap.encode(10, done)), 10);
        assertThat(track.changed()).as("the same commit as the earlier owner's").isFalse();
        assertThat(track.polled(10)).isTrue();
        assertThat(track.polled(11)).isTrue();
        assertThat(track.polled(12)).isFalse();
        assertThat(track.polled(13)).isFalse();
        track.done(11);
        assertThat(track.watermark()).isEqualTo(10);
        track.done(10);
        assertThat(track.watermark()).isEqualTo(14);
    }

    /** KC-6: a released offset stays outstanding, so the watermark never passes it. */
    @Test
    void aReleasedOffsetHoldsTheWatermark() {
        PartitionTrack track = polled(0, 3);
        track.done(0);
        track.done(2); // 1 released: nothing is done with it
        assertThat(track.watermark()).isEqualTo(1);
        assertThat(OffsetMap.decode(1, track.toCommit().metadata())).containsExactly(2L);
    }

    /** KC-7: undoing the marks of a failed commit gives back exactly the commit before them. */
    @Test
    void undoIsExact() {
        PartitionTrack track = polled(0, 5);
        track.done(1);
        OffsetAndMetadata before = track.toCommit();
        track.committed(before);
        track.done(0);
        track.done(3);
        assertThat(track.changed()).isTrue();
        track.undo(List.of(0L, 3L));
        assertThat(track.toCommit()).isEqualTo(before);
        assertThat(track.changed()).isFalse();
    }

    /** KC-4: a commit drops what it covers, and a settlement of an offset not outstanding changes nothing. */
    @Test
    void aCommitCoversWhatIsBelowIt() {
        PartitionTrack track = polled(0, 3);
        track.done(0);
        track.committed(track.toCommit());
        assertThat(track.done(0)).as("settled twice").isFalse();
        assertThat(track.done(7)).as("never polled").isFalse();
        assertThat(track.toCommit().offset()).isEqualTo(1);
    }
}
