package dev.dht.storage;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Objects;

/**
 * One stored version of a key: a value or a tombstone, stamped with the {@link HybridLogicalClock} timestamp
 * of the write that produced it.
 *
 * <p>This class is the single definition of the binary layout used both on disk (LevelDB values) and on the
 * internal replica protocol (HTTP bodies):
 * <pre>
 * offset  size  field
 *      0     8  timestamp, big-endian signed long (hybrid logical clock: 48 bits of wall-clock
 *               milliseconds since the epoch, then a 16-bit counter; see HybridLogicalClock)
 *      8     1  flags: bit 0 set = tombstone; bits 1-7 reserved, written as 0
 *      9     n  value bytes (n = total length - 9; always 0 for a tombstone)
 * </pre>
 *
 * <p>Instances are immutable; the value array is never exposed for writing (callers must not modify the array
 * returned by {@link #value()}).
 */
public final class Record {
    /** Bytes before the value: 8 bytes timestamp + 1 byte flags. */
    public static final int HEADER_BYTES = 9;
    private static final byte FLAG_TOMBSTONE = 0x01;
    private static final byte[] EMPTY = new byte[0];

    private final long timestamp;
    private final boolean tombstone;
    private final byte[] value;

    private Record(long timestamp, boolean tombstone, byte[] value) {
        this.timestamp = checkTimestamp(timestamp);
        this.tombstone = tombstone;
        this.value = value;
    }

    /** A live value written at {@code timestamp}; {@code value} may be empty, never null. */
    public static Record value(long timestamp, byte[] value) {
        return new Record(timestamp, false, Objects.requireNonNull(value, "value"));
    }

    /** A deletion marker written at {@code timestamp}. */
    public static Record tombstone(long timestamp) {
        return new Record(timestamp, true, EMPTY);
    }

    /**
     * Decodes the layout described in the class comment.
     *
     * @throws IllegalArgumentException if the bytes are shorter than the header or a tombstone carries a value
     */
    public static Record decode(byte[] bytes) {
        return decode(bytes, 0, bytes.length);
    }

    /**
     * Decodes the {@code length} bytes at {@code offset} of {@code bytes}, copying only the value (for frames
     * read out of a larger buffer, without copying the record out first).
     *
     * @throws IllegalArgumentException as {@link #decode(byte[])}
     * @throws IndexOutOfBoundsException if the slice is not within {@code bytes}
     */
    public static Record decode(byte[] bytes, int offset, int length) {
        Objects.checkFromIndexSize(offset, length, bytes.length);
        boolean tombstone = tombstoneFlag(bytes, offset, length);
        long timestamp = ByteBuffer.wrap(bytes, offset, length).getLong();
        byte[] value = tombstone ? EMPTY : Arrays.copyOfRange(bytes, offset + HEADER_BYTES, offset + length);
        return new Record(timestamp, tombstone, value);
    }

    /** Checks the header and the tombstone's length of an encoded record; returns its tombstone flag. */
    private static boolean tombstoneFlag(byte[] bytes, int offset, int length) {
        if (length < HEADER_BYTES) {
            throw new IllegalArgumentException("record needs at least " + HEADER_BYTES + " bytes, got " + length);
        }
        boolean tombstone = (bytes[offset + 8] & FLAG_TOMBSTONE) != 0;
        if (tombstone && length != HEADER_BYTES) {
            throw new IllegalArgumentException("tombstone carries " + (length - HEADER_BYTES) + " value bytes");
        }
        return tombstone;
    }

    /** Encodes the layout described in the class comment; the result is a fresh array of {@link #encodedSize()} bytes. */
    public byte[] encode() {
        return encodeInto(ByteBuffer.allocate(encodedSize())).array();
    }

    /**
     * Writes {@link #encode()}'s bytes at {@code buffer}'s position, without an intermediate array; returns
     * {@code buffer}. Fails with {@link java.nio.BufferOverflowException} if fewer than {@link #encodedSize()}
     * bytes remain.
     */
    public ByteBuffer encodeInto(ByteBuffer buffer) {
        return buffer.putLong(timestamp).put(tombstone ? FLAG_TOMBSTONE : 0).put(value);
    }

    /** Size in bytes of {@link #encode()}. */
    public int encodedSize() {
        return HEADER_BYTES + value.length;
    }

    /**
     * Last-write-wins reconciliation: returns the record that supersedes the other. The higher timestamp wins;
     * at equal timestamps a tombstone wins; between two values with equal timestamps the one whose bytes compare
     * greater (unsigned, lexicographic) wins. The function is pure and commutative, so every replica that sees
     * the same two records picks the same one (the rule Cassandra uses for cells).
     */
    public static Record newest(Record a, Record b) {
        return a.compareVersion(b.timestamp, b.tombstone, b.value, 0, b.value.length) >= 0 ? a : b;
    }

    /** True if this record would win reconciliation against {@code other} and differs from it. */
    public boolean supersedes(Record other) {
        return compareVersion(other.timestamp, other.tombstone, other.value, 0, other.value.length) > 0;
    }

    /**
     * {@link #supersedes(Record)} against an encoded record ({@link #encode()}'s layout), without decoding it
     * into a copy: the storage engine's last-write-wins check reads the stored version only for this.
     *
     * @throws IllegalArgumentException if {@code encoded} is not a valid record, as {@link #decode(byte[])}
     */
    public boolean supersedesEncoded(byte[] encoded) {
        boolean otherTombstone = tombstoneFlag(encoded, 0, encoded.length);
        long otherTimestamp = checkTimestamp(ByteBuffer.wrap(encoded).getLong());
        return compareVersion(otherTimestamp, otherTombstone, encoded, HEADER_BYTES, encoded.length) > 0;
    }

    /**
     * The last-write-wins order of {@link #newest}, the one place that defines it: positive if this record wins
     * against the other version (its value is {@code otherBytes[from, to)}), 0 if they are the same version.
     */
    private int compareVersion(long otherTimestamp, boolean otherTombstone, byte[] otherBytes, int from, int to) {
        if (timestamp != otherTimestamp) {
            return Long.compare(timestamp, otherTimestamp);
        }
        if (tombstone != otherTombstone) {
            return tombstone ? 1 : -1;
        }
        return Arrays.compareUnsigned(value, 0, value.length, otherBytes, from, to);
    }

    private static long checkTimestamp(long timestamp) {
        if (timestamp < 0) {
            throw new IllegalArgumentException("timestamp must be >= 0, was " + timestamp);
        }
        return timestamp;
    }

    private boolean sameVersion(Record other) {
        return timestamp == other.timestamp && tombstone == other.tombstone && Arrays.equals(value, other.value);
    }

    /** Hybrid-logical-clock timestamp of the write (see {@link HybridLogicalClock}). */
    public long timestamp() {
        return timestamp;
    }

    /** True for a deletion marker. */
    public boolean isTombstone() {
        return tombstone;
    }

    /** The value bytes (empty for a tombstone). Do not modify the returned array. */
    public byte[] value() {
        return value;
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Record other && sameVersion(other);
    }

    @Override
    public int hashCode() {
        return Long.hashCode(timestamp) * 31 + Arrays.hashCode(value) + (tombstone ? 1 : 0);
    }

    @Override
    public String toString() {
        return tombstone
                ? "Record[tombstone @" + timestamp + "]"
                : "Record[" + value.length + " bytes @" + timestamp + "]";
    }
}
