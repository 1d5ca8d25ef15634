package dev.drain.kafka;

import static org.assertj.core.api.Assertions.assertThat;
import static org.quicktheories.QuickTheory.qt;

import java.util.List;
import java.util.NavigableSet;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;
import org.quicktheories.core.Gen;
import org.quicktheories.generators.Generate;
import org.quicktheories.generators.SourceDSL;

/**
 * KC-4: the commit metadata's map of done offsets, over generated sets: dense, sparse, runs, at
 * watermarks near zero and near the top of the offsets. {@code -Dqt.examples=N} sets how many.
 */
class OffsetMapProperties {
    static final long SEED = Long.getLong("qt.seed", 20261204L);
    static final int EXAMPLES = Integer.getInteger("qt.examples", 2_000);

    /** A watermark and the done offsets above it. */
    record Done(long watermark, NavigableSet<Long> offsets) {}

    static Gen<Done> dones() {
        Gen<Long> watermarks = Generate.pick(List.of(0L, 1L, 1_000L, 1L << 40, Long.MAX_VALUE / 2));
        Gen<List<Integer>> gaps = SourceDSL.lists().of(Generate.range(1, 300).mix(Generate.constant(1), 60))
                .ofSizeBetween(0, 400);
        return watermarks.zip(gaps, (watermark, steps) -> {
            NavigableSet<Long> offsets = new TreeSet<>();
            long at = watermark;
            for (int step : steps) {
                at += step;
                offsets.add(at);
            }
            return new Done(watermark, offsets);
        });
    }

    /** KC-4: decoding what was encoded gives back exactly the done offsets above the watermark. */
    @Test
    void decodingTheEncodingGivesTheSetBack() {
        qt().withFixedSeed(SEED).withExamples(EXAMPLES).forAll(dones())
                .checkAssert(d -> assertThat(OffsetMap.decode(d.watermark(), OffsetMap.encode(d.watermark(), d.offsets())))
                        .isEqualTo(d.offsets()));
    }

    /** KC-4: the encoding written is never longer than the bitset of the span it covers, base64'd, with its prefix. */
    @Test
    void theEncodingIsNoLongerThanTheBitset() {
        qt().withFixedSeed(SEED).withExamples(EXAMPLES).forAll(dones()).checkAssert(d -> {
            String metadata = OffsetMap.encode(d.watermark(), d.offsets());
            if (d.offsets().isEmpty()) {
                assertThat(metadata).isEmpty();
            } else {
                long bytes = (d.offsets().last() - d.watermark() + 7) / 8;
                assertThat((long) metadata.length()).isLessThanOrEqualTo(OffsetMap.BITSET.length() + (bytes * 4 + 2) / 3);
            }
        });
    }

    /** KC-4: metadata that is not drain's, or is damaged, decodes to no offsets, and never throws. */
    @Test
    void foreignOrDamagedMetadataDecodesToNothing() {
        Gen<String> noise = SourceDSL.strings().basicLatinAlphabet().ofLengthBetween(0, 60);
        Gen<String> damaged = Generate.pick(List.of(OffsetMap.BITSET, OffsetMap.RUNS)).zip(noise, (prefix, rest) -> prefix + rest);
        qt().withFixedSeed(SEED).withExamples(EXAMPLES).forAll(noise.mix(damaged)).checkAssert(metadata -> {
            NavigableSet<Long> decoded = OffsetMap.decode(5, metadata);
            if (!metadata.startsWith("drain:1:")) {
                assertThat(decoded).isEmpty();
            }
            assertThat(decoded).allSatisfy(o -> assertThat(o).isGreaterThan(5L).isLessThanOrEqualTo(5 + OffsetMap.MAX_SPAN));
        });
    }
}
