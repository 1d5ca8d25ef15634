package dev.drain.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.NavigableSet;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/** The commit metadata's map of done offsets at its bounds, by hand (the generated cases are {@link OffsetMapProperties}'). */
class OffsetMapTest {

    /** KC-4, KC-7: encode refuses done offsets spread wider than decode reads back, however short their run lengths would be. */
    @Test
    void encodeRefusesASpanDecodeWouldNotRead() {
        NavigableSet<Long> done = new TreeSet<>(List.of(1L, 1L + OffsetMap.MAX_SPAN));
        assertThatThrownBy(() -> OffsetMap.encode(0, done))
                .isInstanceOf(IllegalArgumentException.class);
        NavigableSet<Long> widest = new TreeSet<>(List.of(1L, OffsetMap.MAX_SPAN));
        assertThat(OffsetMap.decode(0, OffsetMap.encode(0, widest))).isEqualTo(widest);
    }

    /** KC-4: a run length so large that adding it would overflow decodes to nothing, never to offsets below the watermark. */
    @Test
    void anOverflowingRunDecodesToNothing() {
        java.io.ByteArrayOutputStream runs = new java.io.ByteArrayOutputStream();
        varint(runs, Long.MAX_VALUE); // a run not done that would wrap the next offset around
        varint(runs, 3); // then a done run
        String metadata = OffsetMap.RUNS + java.util.Base64.getUrlEncoder().withoutPadding().encodeToString(runs.toByteArray());
        assertThat(OffsetMap.decode(0, metadata)).isEmpty();
    }

    private static void varint(java.io.ByteArrayOutputStream out, long value) {
        long v = value;
        while ((v & ~0x7fL) != 0) {
            out.write((int) ((v & 0x7f) | 0x80));
            v >>>= 7;
        }
        out.write((int) v);
    }

    /** KC-4: a run-length map that claims a span wider than any commit could hold decodes to nothing, at once. */
    @Test
    void anImpossiblyWideRunDecodesToNothing() {
        // one run not done of length 0, then a done run of 2^62: nine LEB128 bytes
        byte[] runs = {0, (byte) 0x80, (byte) 0x80, (byte) 0x80, (byte) 0x80, (byte) 0x80, (byte) 0x80, (byte) 0x80, (byte) 0x80, 0x40};
        String metadata = OffsetMap.RUNS + java.util.Base64.getUrlEncoder().withoutPadding().encodeToString(runs);
        assertThat(OffsetMap.decode(0, metadata)).isEmpty();
    }
}
