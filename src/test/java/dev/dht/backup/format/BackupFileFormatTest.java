package dev.dht.backup.format;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dht.storage.KeyedRecord;
import dev.dht.storage.Record;
import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * A member file round-trips values, tombstones, TTLs and replica counts over many blocks; the reader refuses a
 * flipped byte anywhere, a file cut anywhere, an unknown version and a digest that differs from the manifest's,
 * naming file and block.
 */
class BackupFileFormatTest {
    private static final Random RANDOM = new Random(42);

    @Test
    void recordsRoundTripInKeyOrderOverManyBlocks() throws IOException {
        List<KeyedRecord> written = records(10_000, 700);
        Written file = write(written);

        assertThat(file.summary.records()).isEqualTo(10_000);
        assertThat(file.summary.bytes()).isEqualTo(file.bytes.length);
        assertThat(file.summary.sha256()).isEqualTo(sha256(file.bytes));
        assertThat(blockCount(file)).as("several blocks").isGreaterThan(2);
        List<KeyedRecord> read = readAll(file.bytes, file.summary.sha256());
        assertThat(read).hasSize(written.size());
        for (int i = 0; i < written.size(); i++) {
            assertThat(read.get(i).key()).isEqualTo(written.get(i).key());
            assertThat(read.get(i).record()).isEqualTo(written.get(i).record());
        }
    }

    @Test
    void aValueOfTheLargestValueSizeRoundTripsAfterANearlyFullBlock() throws IOException {
        List<KeyedRecord> written = new ArrayList<>(records(1_800, 1_000));
        // a pattern, cheap to compress: the block's raw length is what a reader checks first
        byte[] largest = new byte[BackupFileFormat.MAX_VALUE_BYTES];
        for (int i = 0; i < largest.length; i++) {
            largest[i] = (byte) (i % 251);
        }
        written.add(new KeyedRecord("zz-largest".getBytes(StandardCharsets.UTF_8), Record.value(7L << 16, largest, 3, 0)));
        Written file = write(written);

        List<KeyedRecord> read = readAll(file.bytes, file.summary.sha256());

        assertThat(read).hasSize(written.size());
        assertThat(read.get(read.size() - 1).record().value()).isEqualTo(largest);
    }

    @Test
    void emptyFileRoundTrips() throws IOException {
        Written file = write(List.of());

        assertThat(readAll(file.bytes, file.summary.sha256())).isEmpty();
    }

    @Test
    void flippedByteAnywhereIsRefused() throws IOException {
        Written file = write(records(3_000, 500));
        for (int i = 0; i < 200; i++) {
            int at = RANDOM.nextInt(file.bytes.length);
            byte[] corrupt = file.bytes.clone();
            corrupt[at] ^= (byte) (1 << RANDOM.nextInt(8));

            assertThatThrownBy(() -> readAll(corrupt, null))
                    .as("flipped bit at byte %d of %d", at, corrupt.length)
                    .isInstanceOf(BackupCorruptException.class)
                    .hasMessageStartingWith("member-a.dhtb");
        }
    }

    @Test
    void flippedByteInABlockNamesTheBlock() throws IOException {
        Written file = write(records(3_000, 500));
        byte[] corrupt = file.bytes.clone();
        corrupt[BackupFileFormat.HEADER_BYTES + BackupFileFormat.BLOCK_HEADER_BYTES + 10] ^= 0x04;

        assertThatThrownBy(() -> readAll(corrupt, null))
                .isInstanceOf(BackupCorruptException.class)
                .hasMessage("member-a.dhtb block 0: checksum mismatch (corrupt)");
    }

    @Test
    void fileCutAnywhereIsRefusedAsTruncated() throws IOException {
        Written file = write(records(3_000, 500));
        for (int i = 0; i < 100; i++) {
            int length = RANDOM.nextInt(file.bytes.length);
            byte[] cut = Arrays.copyOf(file.bytes, length);

            assertThatThrownBy(() -> readAll(cut, null))
                    .as("cut at %d of %d", length, file.bytes.length)
                    .isInstanceOf(BackupCorruptException.class)
                    .hasMessageContaining("truncated");
        }
    }

    @Test
    void unknownVersionIsRefused() throws IOException {
        Written file = write(records(10, 10));
        byte[] future = file.bytes.clone();
        future[5] = 2;

        assertThatThrownBy(() -> readAll(future, null))
                .isInstanceOf(BackupCorruptException.class)
                .hasMessage("member-a.dhtb: format version 2 is unknown to this version (it reads version 1)");
    }

    @Test
    void digestOtherThanTheManifestsIsRefused() throws IOException {
        Written file = write(records(10, 10));

        assertThatThrownBy(() -> readAll(file.bytes, "00".repeat(32)))
                .isInstanceOf(BackupCorruptException.class)
                .hasMessageContaining("differs from the manifest's");
    }

    @Test
    void writerRefusesKeysOutOfOrder() throws IOException {
        BackupFileWriter writer = new BackupFileWriter("member-a.dhtb", new ByteArrayOutputStream());
        writer.write(new KeyedRecord(bytes("b"), Record.value(1, bytes("x"))));

        assertThatThrownBy(() -> writer.write(new KeyedRecord(bytes("a"), Record.value(1, bytes("x")))))
                .isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void manifestRoundTripsAndUnknownVersionsAreRefused() {
        BackupManifest manifest = new BackupManifest(1, "20261127T170000Z-ab12", BackupManifest.DONE, null,
                "2026-11-27T17:00:00Z", "2026-11-27T17:01:00Z", 7, 3, List.of("http://a:8080"),
                List.of(new BackupManifest.MemberPart("http://a:8080", 5, 100,
                        List.of(new BackupFileWriter.FileSummary("a-0.dhtb", 5, 100, "ff")))), List.of());

        BackupManifest read = BackupManifest.fromJson("manifest.json", manifest.toJson());

        assertThat(read).isEqualTo(manifest);
        byte[] future = new String(manifest.toJson(), StandardCharsets.UTF_8)
                .replace("\"formatVersion\" : 1", "\"formatVersion\" : 9").getBytes(StandardCharsets.UTF_8);
        assertThatThrownBy(() -> BackupManifest.fromJson("manifest.json", future))
                .isInstanceOf(BackupCorruptException.class)
                .hasMessageContaining("format version 9 is unknown");
        assertThatThrownBy(() -> BackupManifest.fromJson("manifest.json", bytes("{\"id\": 1")))
                .isInstanceOf(BackupCorruptException.class);
    }

    /** Keys key-00000.., values of random length (incompressible), every 7th a tombstone, every 5th with a TTL. */
    private static List<KeyedRecord> records(int count, int maxValue) {
        List<KeyedRecord> records = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            byte[] key = bytes(String.format("key-%07d", i));
            Record record;
            if (i % 7 == 0) {
                record = Record.tombstone(1_000L + i, 3);
            } else {
                byte[] value = new byte[RANDOM.nextInt(maxValue + 1)];
                RANDOM.nextBytes(value);
                record = Record.value(1_000L + i, value, i % 3 + 1, i % 5 == 0 ? 1_800_000_000_000L + i : 0);
            }
            records.add(new KeyedRecord(key, record));
        }
        return records;
    }

    private record Written(byte[] bytes, BackupFileWriter.FileSummary summary) {
    }

    private static Written write(List<KeyedRecord> records) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        try (BackupFileWriter writer = new BackupFileWriter("member-a.dhtb", out)) {
            for (KeyedRecord record : records) {
                writer.write(record);
            }
            BackupFileWriter.FileSummary summary = writer.finish();
            return new Written(out.toByteArray(), summary);
        }
    }

    private static List<KeyedRecord> readAll(byte[] file, String sha256) {
        List<KeyedRecord> read = new ArrayList<>();
        try (BackupFileReader reader = new BackupFileReader("member-a.dhtb", new ByteArrayInputStream(file), sha256)) {
            reader.forEachRemaining(read::add);
        }
        return read;
    }

    private static long blockCount(Written file) {
        return readTrailerBlocks(file.bytes);
    }

    private static long readTrailerBlocks(byte[] file) {
        return java.nio.ByteBuffer.wrap(file, file.length - 12, 8).getLong();
    }

    private static String sha256(byte[] bytes) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new AssertionError(e);
        }
    }

    private static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }
}
