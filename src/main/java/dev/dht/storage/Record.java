package dev.dht.storage;

import dev.dht.node.HybridLogicalClock;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Objects;

/**
 * One stored version of a key: a value or a tombstone, stamped with the {@link HybridLogicalClock} timestamp of
 * its write, with the write's replica count ({@code from}) and an optional expiry (TTL). Immutable (callers must
 * not modify the array {@link #value()} returns). The one definition of the layout on disk (LevelDB values) and in
 * the internal replica protocol (HTTP bodies):
 * <pre>
 * offset size field
 *      0    8 timestamp, big-endian signed long (HLC: 48 bits of wall-clock ms since the epoch, 16-bit counter)
 *      8    1 flags: bit 0 tombstone; bit 1 format 1 (the two fields below follow); bits 2-7 0, rejected if set
 *      9    1 format 1 only: from, replicas the write asked for, unsigned 1-255; format 0 decodes as 0 = unknown
 *     10    8 format 1 only: expiry, big-endian wall-clock ms since the epoch; 0 = never; format 0 decodes as 0
 *   9/18    n value bytes (n = total length - header; 0 for a tombstone)
 * </pre>
 * A record with neither {@code from} nor expiry is written in format 0, so records older than format 1 decode.
 */
public final class Record {
    /** Bytes before the value in format 0: 8 bytes timestamp + 1 byte flags. */
    public static final int HEADER_BYTES = 9;
    /** Bytes before the value in format 1: format 0's header + 1 byte from + 8 bytes expiry. */
    public static final int EXTENDED_HEADER_BYTES = HEADER_BYTES + 1 + 8;
    /** The largest header of any format: a value of n bytes encodes into at most n + this many bytes. */
    public static final int MAX_HEADER_BYTES = EXTENDED_HEADER_BYTES;
    /** Largest replica count the header can hold. */
    public static final int MAX_FROM = 255;
    private static final byte FLAG_TOMBSTONE = 0x01;
    private static final byte FLAG_EXTENDED = 0x02;
    private static final int KNOWN_FLAGS = FLAG_TOMBSTONE | FLAG_EXTENDED;
    private static final byte[] EMPTY = new byte[0];

    private final long timestamp;
    private final boolean tombstone;
    private final int from;
    private final long expiresAtMillis;
    private final byte[] value;

    private Record(long timestamp, boolean tombstone, int from, long expiresAtMillis, byte[] value) {
        this.timestamp = checkTimestamp(timestamp);
        if (from < 0 || from > MAX_FROM) {
            throw new IllegalArgumentException("from must be in [0, " + MAX_FROM + "], was " + from);
        }
        if (expiresAtMillis < 0) {
            throw new IllegalArgumentException("expiry must be >= 0 (0 = never), was " + expiresAtMillis);
        }
        this.tombstone = tombstone;
        this.from = from;
        this.expiresAtMillis = expiresAtMillis;
        this.value = value;
    }

    /**
     * A live value written at {@code timestamp}, replica count unknown, no expiry; {@code value} may be empty, never
     * null.
     */
    public static Record value(long timestamp, byte[] value) {
        return value(timestamp, value, 0, 0);
    }

    /**
     * A live value written at {@code timestamp} by a write to {@code from} replicas, reading as absent from
     * {@code expiresAtMillis} (wall-clock ms since the epoch; 0 = never).
     *
     * @throws IllegalArgumentException if {@code from} is outside [0, 255] (0 = unknown) or the expiry is negative
     */
    public static Record value(long timestamp, byte[] value, int from, long expiresAtMillis) {
        return new Record(timestamp, false, from, expiresAtMillis, Objects.requireNonNull(value, "value"));
    }

    /** A deletion marker written at {@code timestamp}, replica count unknown. */
    public static Record tombstone(long timestamp) {
        return tombstone(timestamp, 0);
    }

    /**
     * A deletion marker written at {@code timestamp} by a write to {@code from} replicas.
     *
     * @throws IllegalArgumentException if {@code from} is outside [0, 255] (0 = unknown)
     */
    public static Record tombstone(long timestamp, int from) {
        return new Record(timestamp, true, from, 0, EMPTY);
    }

    /**
     * Decodes the layout described in the class comment.
     *
     * @throws IllegalArgumentException if the bytes are shorter than their header, a reserved flag is set or a
     *                                  tombstone carries a value
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
        int header = checkedHeaderLength(bytes, offset, length);
        ByteBuffer buffer = ByteBuffer.wrap(bytes, offset, length);
        long timestamp = buffer.getLong();
        boolean tombstone = (bytes[offset + 8] & FLAG_TOMBSTONE) != 0;
        int from = 0;
        long expiresAt = 0;
        if (header == EXTENDED_HEADER_BYTES) {
            from = Byte.toUnsignedInt(bytes[offset + HEADER_BYTES]);
            expiresAt = buffer.getLong(offset + HEADER_BYTES + 1);
        }
        byte[] value = tombstone ? EMPTY : Arrays.copyOfRange(bytes, offset + header, offset + length);
        return new Record(timestamp, tombstone, from, expiresAt, value);
    }

    /**
     * The timestamp of an encoded record ({@link #encode()}'s layout), without decoding the rest.
     *
     * @throws IllegalArgumentException as {@link #decode(byte[])}
     */
    public static long timestampOfEncoded(byte[] encoded) {
        checkedHeaderLength(encoded, 0, encoded.length);
        return checkTimestamp(ByteBuffer.wrap(encoded).getLong(0));
    }

    /**
     * Checks the flags, the header's length and the tombstone's length of an encoded record; returns the length
     * of its header ({@link #HEADER_BYTES} or {@link #EXTENDED_HEADER_BYTES}).
     */
    private static int checkedHeaderLength(byte[] bytes, int offset, int length) {
        if (length < HEADER_BYTES) {
            throw new IllegalArgumentException("record needs at least " + HEADER_BYTES + " bytes, got " + length);
        }
        int flags = bytes[offset + 8];
        if ((flags & ~KNOWN_FLAGS) != 0) {
            throw new IllegalArgumentException("record has reserved flag bits set: 0x" + Integer.toHexString(flags & 0xff));
        }
        int header = (flags & FLAG_EXTENDED) != 0 ? EXTENDED_HEADER_BYTES : HEADER_BYTES;
        if (length < header) {
            throw new IllegalArgumentException("record in format 1 needs at least " + header + " bytes, got " + length);
        }
        if ((flags & FLAG_TOMBSTONE) != 0 && length != header) {
            throw new IllegalArgumentException("tombstone carries " + (length - header) + " value bytes");
        }
        return header;
    }

    /**
     * Encodes the layout described in the class comment; the result is a fresh array of {@link #encodedSize()}
     * bytes.
     */
    public byte[] encode() {
        return encodeInto(ByteBuffer.allocate(encodedSize())).array();
    }

    /**
     * Writes {@link #encode()}'s bytes at {@code buffer}'s position, without an intermediate array; returns
     * {@code buffer}. Fails with {@link java.nio.BufferOverflowException} if fewer than {@link #encodedSize()}
     * bytes remain.
     */
    public ByteBuffer encodeInto(ByteBuffer buffer) {
        boolean extended = isExtended();
        byte flags = (byte) ((tombstone ? FLAG_TOMBSTONE : 0) | (extended ? FLAG_EXTENDED : 0));
        buffer.putLong(timestamp).put(flags);
        if (extended) {
            buffer.put((byte) from).putLong(expiresAtMillis);
        }
        return buffer.put(value);
    }

    /** Size in bytes of {@link #encode()}. */
    public int encodedSize() {
        return (isExtended() ? EXTENDED_HEADER_BYTES : HEADER_BYTES) + value.length;
    }

    private boolean isExtended() {
        return from != 0 || expiresAtMillis != 0;
    }

    /**
     * Last-write-wins reconciliation: returns the record that supersedes the other. The higher timestamp wins;
     * at equal timestamps a tombstone wins; between two values with equal timestamps the one whose bytes compare
     * greater (unsigned, lexicographic) wins, then the later expiry (never counts as latest), then the larger
     * replica count. The function is pure and commutative, so every replica that sees the same two records picks
     * the same one (the rule Cassandra uses for cells). It does not look at the time: a value that has expired
     * still wins by its timestamp and then reads as absent, so it acts as a tombstone of its write's timestamp.
     */
    public static Record newest(Record a, Record b) {
        return a.compareVersion(b.timestamp, b.tombstone, b.value, 0, b.value.length, b.expiresAtMillis, b.from) >= 0
                ? a : b;
    }

    /** True if this record would win reconciliation against {@code other} and differs from it. */
    public boolean supersedes(Record other) {
        return compareVersion(other.timestamp, other.tombstone, other.value, 0, other.value.length,
                other.expiresAtMillis, other.from) > 0;
    }

    /**
     * {@link #supersedes(Record)} against an encoded record ({@link #encode()}'s layout), without decoding it
     * into a copy: the storage engine's last-write-wins check reads the stored version only for this.
     *
     * @throws IllegalArgumentException if {@code encoded} is not a valid record, as {@link #decode(byte[])}
     */
    public boolean supersedesEncoded(byte[] encoded) {
        int header = checkedHeaderLength(encoded, 0, encoded.length);
        ByteBuffer buffer = ByteBuffer.wrap(encoded);
        long otherTimestamp = checkTimestamp(buffer.getLong(0));
        boolean otherTombstone = (encoded[8] & FLAG_TOMBSTONE) != 0;
        int otherFrom = header == EXTENDED_HEADER_BYTES ? Byte.toUnsignedInt(encoded[HEADER_BYTES]) : 0;
        long otherExpiry = header == EXTENDED_HEADER_BYTES ? buffer.getLong(HEADER_BYTES + 1) : 0;
        return compareVersion(otherTimestamp, otherTombstone, encoded, header, encoded.length, otherExpiry, otherFrom) > 0;
    }

    /**
     * The last-write-wins order of {@link #newest}, the one place that defines it: positive if this record wins
     * against the other version (its value is {@code otherBytes[from, to)}), 0 if they are the same version.
     */
    private int compareVersion(long otherTimestamp, boolean otherTombstone, byte[] otherBytes, int valueFrom,
                               int valueTo, long otherExpiry, int otherReplicaCount) {
        if (timestamp != otherTimestamp) {
            return Long.compare(timestamp, otherTimestamp);
        }
        if (tombstone != otherTombstone) {
            return tombstone ? 1 : -1;
        }
        int byValue = Arrays.compareUnsigned(value, 0, value.length, otherBytes, valueFrom, valueTo);
        if (byValue != 0) {
            return byValue;
        }
        if (expiresAtMillis != otherExpiry) {
            // 0 = never expires, the latest expiry of all
            return Long.compareUnsigned(expiresAtMillis - 1, otherExpiry - 1);
        }
        return Integer.compare(from, otherReplicaCount);
    }

    private static long checkTimestamp(long timestamp) {
        if (timestamp < 0) {
            throw new IllegalArgumentException("timestamp must be >= 0, was " + timestamp);
        }
        return timestamp;
    }

    private boolean sameVersion(Record other) {
        return timestamp == other.timestamp && tombstone == other.tombstone && from == other.from
                && expiresAtMillis == other.expiresAtMillis && Arrays.equals(value, other.value);
    }

    /** Hybrid-logical-clock timestamp of the write (see {@link HybridLogicalClock}). */
    public long timestamp() {
        return timestamp;
    }

    /** True for a deletion marker. */
    public boolean isTombstone() {
        return tombstone;
    }

    /**
     * The number of replicas the write asked for ({@code from} of {@code replicas=ack/from}): the key's first
     * {@code from} rendezvous replicas should hold this record. 0 if unknown (a record of format 0).
     */
    public int from() {
        return from;
    }

    /** Wall-clock milliseconds since the epoch from which this record reads as absent; 0 if it never expires. */
    public long expiresAtMillis() {
        return expiresAtMillis;
    }

    /** True if the record has an expiry at or before {@code nowMillis} (wall-clock ms since the epoch). */
    public boolean isExpiredAt(long nowMillis) {
        return expiresAtMillis != 0 && expiresAtMillis <= nowMillis;
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
        return (Long.hashCode(timestamp) * 31 + Arrays.hashCode(value) + (tombstone ? 1 : 0)) * 31
                + Long.hashCode(expiresAtMillis) + from;
    }

    @Override
    public String toString() {
        String extra = (from == 0 ? "" : " from " + from) + (expiresAtMillis == 0 ? "" : " expires " + expiresAtMillis);
        return tombstone
                ? "Record[tombstone @" + timestamp + extra + "]"
                : "Record[" + value.length + " bytes @" + timestamp + extra + "]";
    }
}
