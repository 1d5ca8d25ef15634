package dev.drain.kafka;

import java.io.ByteArrayOutputStream;
import java.util.Base64;
import java.util.NavigableSet;
import java.util.TreeSet;

/**
 * The done offsets above a partition's committed watermark, written into the commit's metadata
 * (KC-4, decision 0044), so that the next owner of the partition skips what was done above the
 * watermark instead of doing it again. The watermark itself is never done (it is the first offset
 * that is not), so the map starts at {@code watermark + 1}.
 *
 * <p>Two encodings, the shorter one written, each a prefix and then URL-safe base64 without
 * padding:
 * <ul>
 *   <li>{@code drain:1:b} a bitset: bit {@code i} (of byte {@code i / 8}, least significant bit
 *       first) is set when offset {@code watermark + 1 + i} is done; it ends at the last done
 *       offset's byte;</li>
 *   <li>{@code drain:1:r} run lengths: unsigned LEB128 varints, alternately the length of a run of
 *       offsets not done and of a run of done ones, starting with a run not done (possibly 0)
 *       at {@code watermark + 1}, and ending with the last run of done offsets.</li>
 * </ul>
 * A commit whose offsets are all done below the watermark has the empty string as metadata. A
 * metadata string that is not one of these (another committer's, or none) decodes to no offsets:
 * the next owner then does again what lies above the watermark, which costs duplicates, never a
 * loss.
 */
final class OffsetMap {
    static final String BITSET = "drain:1:b";
    static final String RUNS = "drain:1:r";
    /**
     * The widest span above the watermark a map may cover (2^20 offsets): a source pauses a
     * partition at half of it (KC-7), so a wider map is damaged, or not drain's, and decodes to
     * nothing; and no map is decoded into more than this many offsets.
     */
    static final long MAX_SPAN = 1L << 20;

    private OffsetMap() {}

    /**
     * {@return the metadata recording {@code done}, every element of which is above {@code watermark}}
     *
     * @throws IllegalArgumentException if an offset is not above the watermark, or the offsets span
     *     more than {@link #MAX_SPAN} above it (a map {@link #decode} would not read back)
     */
    static String encode(long watermark, NavigableSet<Long> done) {
        if (done.isEmpty()) {
            return "";
        }
        if (done.first() <= watermark) {
            throw new IllegalArgumentException("done offset " + done.first() + " is not above the watermark " + watermark);
        }
        if (done.last() - watermark > MAX_SPAN) { // the source pauses long before (KC-7): a map no reader would take
            throw new IllegalArgumentException("done offsets span " + (done.last() - watermark) + " above the watermark, more than "
                    + MAX_SPAN);
        }
        String bits = BITSET + base64(bitset(watermark, done));
        String runs = RUNS + base64(runs(watermark, done));
        return runs.length() < bits.length() ? runs : bits;
    }

    /** {@return the done offsets that {@code metadata} records above {@code watermark}; none if it is not drain's} */
    static NavigableSet<Long> decode(long watermark, String metadata) {
        NavigableSet<Long> done = new TreeSet<>();
        try {
            if (metadata.startsWith(BITSET)) {
                byte[] bits = Base64.getUrlDecoder().decode(metadata.substring(BITSET.length()));
                if ((long) bits.length * 8 > MAX_SPAN) {
                    return new TreeSet<>();
                }
                for (int i = 0; i < bits.length * 8; i++) {
                    if ((bits[i / 8] & (1 << (i % 8))) != 0) {
                        done.add(watermark + 1 + i);
                    }
                }
            } else if (metadata.startsWith(RUNS)) {
                byte[] runs = Base64.getUrlDecoder().decode(metadata.substring(RUNS.length()));
                long next = watermark + 1;
                boolean doneRun = false;
                for (int at = 0; at < runs.length; ) {
                    long length = 0;
                    int shift = 0;
                    byte b;
                    do {
                        if (shift > 56) {
                            return new TreeSet<>(); // a varint longer than any length below 2^63: damaged
                        }
                        b = runs[at++];
                        length |= (long) (b & 0x7f) << shift;
                        shift += 7;
                    } while ((b & 0x80) != 0);
                    if (length < 0 || length > MAX_SPAN - (next - watermark - 1)) {
                        return new TreeSet<>(); // damaged: no drain map is this wide (and no sum overflows)
                    }
                    if (doneRun) {
                        for (long o = next; o < next + length; o++) {
                            done.add(o);
                        }
                    }
                    next += length;
                    doneRun = !doneRun;
                }
            }
        } catch (IllegalArgumentException | ArrayIndexOutOfBoundsException e) {
            return new TreeSet<>(); // not drain's, or damaged: do again what lies above the watermark
        }
        return done;
    }

    private static byte[] bitset(long watermark, NavigableSet<Long> done) {
        long span = done.last() - watermark; // offsets watermark + 1 .. last: span bits
        byte[] bits = new byte[Math.toIntExact((span + 7) / 8)];
        for (long offset : done) {
            long i = offset - watermark - 1;
            bits[(int) (i / 8)] |= (byte) (1 << (int) (i % 8));
        }
        return bits;
    }

    private static byte[] runs(long watermark, NavigableSet<Long> done) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        long next = watermark + 1; // the first offset not yet written
        long runStart = -1;
        long previous = -2;
        for (long offset : done) {
            if (offset != previous + 1) { // a new run of done offsets starts here
                if (runStart >= 0) {
                    varint(out, previous + 1 - runStart);
                }
                varint(out, offset - next); // the offsets not done before it
                runStart = offset;
            }
            previous = offset;
            next = offset + 1;
        }
        varint(out, previous + 1 - runStart);
        return out.toByteArray();
    }

    private static void varint(ByteArrayOutputStream out, long value) {
        long v = value;
        while ((v & ~0x7fL) != 0) {
            out.write((int) ((v & 0x7f) | 0x80));
            v >>>= 7;
        }
        out.write((int) v);
    }

    private static String base64(byte[] bytes) {
        return Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
    }
}
