package dev.dht.storage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * {@link Record}: its binary layout round-trips (also out of a larger array), malformed bytes are rejected, and
 * {@link Record#newest} is a commutative, associative last-write-wins, which the check against encoded bytes repeats.
 */
class RecordTest {

    @Test
    void valueRoundTripsThroughItsLayout() {
        Record record = Record.value(0x0102030405060708L, "hello".getBytes(StandardCharsets.UTF_8));

        byte[] encoded = record.encode();

        assertThat(encoded).hasSize(Record.HEADER_BYTES + 5).hasSize(record.encodedSize());
        assertThat(ByteBuffer.wrap(encoded).getLong()).isEqualTo(0x0102030405060708L);
        assertThat(encoded[8]).isZero();
        assertThat(new String(encoded, 9, 5, StandardCharsets.UTF_8)).isEqualTo("hello");
        Record decoded = Record.decode(encoded);
        assertThat(decoded).isEqualTo(record);
        assertThat(decoded.timestamp()).isEqualTo(0x0102030405060708L);
        assertThat(decoded.isTombstone()).isFalse();
        assertThat(decoded.value()).isEqualTo("hello".getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void emptyValueRoundTripsAndIsNotATombstone() {
        Record decoded = Record.decode(Record.value(42, new byte[0]).encode());

        assertThat(decoded.isTombstone()).isFalse();
        assertThat(decoded.value()).isEmpty();
        assertThat(decoded.timestamp()).isEqualTo(42);
        assertThat(decoded).isNotEqualTo(Record.tombstone(42));
    }

    @Test
    void tombstoneRoundTripsAsTheHeaderAlone() {
        byte[] encoded = Record.tombstone(Long.MAX_VALUE).encode();

        assertThat(encoded).hasSize(Record.HEADER_BYTES);
        assertThat(encoded[8]).isEqualTo((byte) 1);
        Record decoded = Record.decode(encoded);
        assertThat(decoded.isTombstone()).isTrue();
        assertThat(decoded.timestamp()).isEqualTo(Long.MAX_VALUE);
        assertThat(decoded.value()).isEmpty();
    }

    @Test
    void everyByteValueRoundTrips() {
        byte[] value = new byte[256];
        for (int i = 0; i < value.length; i++) {
            value[i] = (byte) i;
        }

        assertThat(Record.decode(Record.value(1, value).encode()).value()).isEqualTo(value);
    }

    @Test
    void bytesShorterThanTheHeaderAreRejected() {
        assertThatThrownBy(() -> Record.decode(new byte[0])).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> Record.decode(new byte[Record.HEADER_BYTES - 1]))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("9 bytes");
    }

    @Test
    void tombstoneCarryingValueBytesIsRejected() {
        byte[] encoded = ByteBuffer.allocate(Record.HEADER_BYTES + 1).putLong(5).put((byte) 1).put((byte) 'x').array();

        assertThatThrownBy(() -> Record.decode(encoded)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("tombstone");
    }

    @Test
    void negativeTimestampIsRejected() {
        byte[] encoded = ByteBuffer.allocate(Record.HEADER_BYTES).putLong(-1).put((byte) 0).array();

        assertThatThrownBy(() -> Record.decode(encoded)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> Record.value(-1, new byte[0])).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> Record.tombstone(Long.MIN_VALUE)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void higherTimestampWins() {
        Record older = Record.tombstone(1);
        Record newer = Record.value(2, new byte[0]);

        assertThat(Record.newest(older, newer)).isSameAs(newer);
        assertThat(Record.newest(newer, older)).isSameAs(newer);
        assertThat(newer.supersedes(older)).isTrue();
        assertThat(older.supersedes(newer)).isFalse();
    }

    @Test
    void tombstoneWinsATie() {
        Record value = Record.value(7, "zzz".getBytes(StandardCharsets.UTF_8));
        Record tombstone = Record.tombstone(7);

        assertThat(Record.newest(value, tombstone)).isSameAs(tombstone);
        assertThat(Record.newest(tombstone, value)).isSameAs(tombstone);
    }

    @Test
    void equalTimestampValuesAreSettledByUnsignedBytes() {
        Record low = Record.value(7, new byte[] {0x7F});
        Record high = Record.value(7, new byte[] {(byte) 0x80});

        assertThat(Record.newest(low, high)).isSameAs(high);
        assertThat(Record.newest(high, low)).isSameAs(high);
    }

    @Test
    void sameVersionDoesNotSupersedeItself() {
        Record a = Record.value(3, new byte[] {1, 2});
        Record b = Record.value(3, new byte[] {1, 2});

        assertThat(a.supersedes(b)).isFalse();
        assertThat(b.supersedes(a)).isFalse();
        assertThat(a).isEqualTo(b).hasSameHashCodeAs(b);
    }

    @Test
    void newestIsCommutativeOverManyRandomPairs() {
        Random random = new Random(20240611);
        for (int i = 0; i < 20_000; i++) {
            Record a = randomRecord(random);
            Record b = randomRecord(random);

            assertThat(Record.newest(a, b)).as("newest(%s, %s)", a, b).isEqualTo(Record.newest(b, a));
            assertThat(Record.newest(a, b)).isIn(a, b);
        }
    }

    @Test
    void newestIsAssociativeOverManyRandomTriples() {
        Random random = new Random(1998);
        for (int i = 0; i < 20_000; i++) {
            Record a = randomRecord(random);
            Record b = randomRecord(random);
            Record c = randomRecord(random);

            assertThat(Record.newest(Record.newest(a, b), c)).as("%s, %s, %s", a, b, c)
                    .isEqualTo(Record.newest(a, Record.newest(b, c)));
        }
    }

    @Test
    void sliceOfALargerArrayDecodesAsItsCopy() {
        Record value = Record.value(99, "inside".getBytes(StandardCharsets.UTF_8));
        Record tombstone = Record.tombstone(100);
        byte[] frames = ByteBuffer.allocate(3 + value.encodedSize() + tombstone.encodedSize() + 2)
                .put(new byte[] {7, 7, 7}).put(value.encode()).put(tombstone.encode()).put(new byte[] {7, 7}).array();

        assertThat(Record.decode(frames, 3, value.encodedSize())).isEqualTo(value);
        assertThat(Record.decode(frames, 3 + value.encodedSize(), tombstone.encodedSize())).isEqualTo(tombstone);
        assertThatThrownBy(() -> Record.decode(frames, 3, Record.HEADER_BYTES - 1)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> Record.decode(frames, frames.length - 4, Record.HEADER_BYTES))
                .isInstanceOf(IndexOutOfBoundsException.class);
    }

    @Test
    void supersedesEncodedAgreesWithSupersedesOverManyRandomPairs() {
        Random random = new Random(4711);
        for (int i = 0; i < 20_000; i++) {
            Record a = randomRecord(random);
            Record b = randomRecord(random);

            assertThat(a.supersedesEncoded(b.encode())).as("%s over %s", a, b).isEqualTo(a.supersedes(b));
        }
    }

    @Test
    void supersedesEncodedRejectsWhatDecodeRejects() {
        Record record = Record.value(5, new byte[] {1});
        byte[] tombstoneWithValue = ByteBuffer.allocate(Record.HEADER_BYTES + 1).putLong(3).put((byte) 1).put((byte) 9).array();
        byte[] negativeTimestamp = ByteBuffer.allocate(Record.HEADER_BYTES).putLong(-1).put((byte) 0).array();

        assertThatThrownBy(() -> record.supersedesEncoded(new byte[Record.HEADER_BYTES - 1])).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> record.supersedesEncoded(tombstoneWithValue)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> record.supersedesEncoded(negativeTimestamp)).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void replicaCountAndExpiryRoundTripInFormatOne() {
        Record value = Record.value(77, "ttl".getBytes(StandardCharsets.UTF_8), 3, 1_900_000_000_000L);
        Record tombstone = Record.tombstone(78, 255);

        byte[] encoded = value.encode();

        assertThat(encoded).hasSize(Record.EXTENDED_HEADER_BYTES + 3).hasSize(value.encodedSize());
        assertThat(encoded[8]).isEqualTo((byte) 0x02);
        assertThat(encoded[9]).isEqualTo((byte) 3);
        assertThat(ByteBuffer.wrap(encoded, 10, 8).getLong()).isEqualTo(1_900_000_000_000L);
        Record decoded = Record.decode(encoded);
        assertThat(decoded).isEqualTo(value);
        assertThat(decoded.from()).isEqualTo(3);
        assertThat(decoded.expiresAtMillis()).isEqualTo(1_900_000_000_000L);
        assertThat(tombstone.encode()).hasSize(Record.EXTENDED_HEADER_BYTES);
        assertThat(Record.decode(tombstone.encode())).isEqualTo(tombstone);
        assertThat(Record.decode(tombstone.encode()).from()).isEqualTo(255);
    }

    @Test
    void formatZeroRecordsDecodeWithUnknownReplicaCountAndNoExpiry() {
        byte[] formatZero = ByteBuffer.allocate(Record.HEADER_BYTES + 2).putLong(12).put((byte) 0).put(new byte[] {4, 2})
                .array();

        Record decoded = Record.decode(formatZero);

        assertThat(decoded.from()).isZero();
        assertThat(decoded.expiresAtMillis()).isZero();
        assertThat(decoded.value()).containsExactly(4, 2);
        assertThat(decoded.encode()).isEqualTo(formatZero);
    }

    @Test
    void expiryIsCheckedAgainstTheGivenTime() {
        Record expiring = Record.value(1, new byte[0], 1, 5_000);

        assertThat(expiring.isExpiredAt(4_999)).isFalse();
        assertThat(expiring.isExpiredAt(5_000)).isTrue();
        assertThat(Record.value(1, new byte[0]).isExpiredAt(Long.MAX_VALUE)).isFalse();
    }

    @Test
    void malformedFormatOneHeadersAreRejected() {
        byte[] truncated = ByteBuffer.allocate(Record.HEADER_BYTES + 4).putLong(1).put((byte) 0x02).array();
        byte[] reservedFlag = ByteBuffer.allocate(Record.HEADER_BYTES).putLong(1).put((byte) 0x04).array();
        byte[] tombstoneWithValue = ByteBuffer.allocate(Record.EXTENDED_HEADER_BYTES + 1).putLong(1).put((byte) 0x03)
                .put((byte) 2).putLong(0).put((byte) 9).array();

        assertThatThrownBy(() -> Record.decode(truncated)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("format 1");
        assertThatThrownBy(() -> Record.decode(reservedFlag)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("reserved");
        assertThatThrownBy(() -> Record.decode(tombstoneWithValue)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("tombstone");
        assertThatThrownBy(() -> Record.value(1, new byte[0], 256, 0)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> Record.value(1, new byte[0], 1, -1)).isInstanceOf(IllegalArgumentException.class);
    }

    /**
     * Few timestamps, short values from a small alphabet, and few replica counts and expiries, so ties of
     * timestamp, of bytes and of the header fields are common.
     */
    private static Record randomRecord(Random random) {
        long timestamp = random.nextInt(4);
        int from = random.nextInt(3);
        if (random.nextInt(4) == 0) {
            return Record.tombstone(timestamp, from);
        }
        byte[] value = new byte[random.nextInt(3)];
        for (int i = 0; i < value.length; i++) {
            value[i] = (byte) (random.nextBoolean() ? 0x01 : 0xF0);
        }
        return Record.value(timestamp, value, from, random.nextInt(3) * 1000L);
    }
}
