package dev.dht.storage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.dht.node.HybridLogicalClock;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * {@link LevelDbRecordRepository} on both engines (leveldbjni and the pure-Java port): last write wins by
 * timestamp whatever the arrival order, a tombstone wins a tie, ranges are bounded, unsigned and snapshot-consistent,
 * and data survives close and reopen.
 */
class LevelDbRecordRepositoryTest {
    @TempDir
    Path dir;

    private final List<RecordRepository> opened = new ArrayList<>();

    @AfterEach
    void closeAll() throws IOException {
        for (RecordRepository repository : opened) {
            if (repository.isOpen()) {
                repository.close();
            }
        }
    }

    @ParameterizedTest
    @EnumSource(StorageEngine.class)
    void getOfANeverWrittenKeyIsNull(StorageEngine engine) {
        RecordRepository db = open(engine);

        assertThat(db.get(key("absent"))).isNull();
    }

    @ParameterizedTest
    @EnumSource(StorageEngine.class)
    void upsertThenGetReturnsTheRecord(StorageEngine engine) {
        RecordRepository db = open(engine);

        assertThat(db.upsert(key("foo"), value(10, "v1"))).isTrue();
        assertThat(db.upsert(key("empty"), value(10, ""))).isTrue();

        assertThat(db.get(key("foo"))).isEqualTo(value(10, "v1"));
        assertThat(db.get(key("empty"))).isEqualTo(value(10, ""));
        assertThat(db.get(key("empty")).isTombstone()).isFalse();
    }

    @ParameterizedTest
    @EnumSource(StorageEngine.class)
    void newerTimestampWinsWhateverTheArrivalOrder(StorageEngine engine) {
        RecordRepository db = open(engine);

        assertThat(db.upsert(key("in-order"), value(10, "old"))).isTrue();
        assertThat(db.upsert(key("in-order"), value(20, "new"))).isTrue();
        assertThat(db.upsert(key("reordered"), value(20, "new"))).isTrue();
        assertThat(db.upsert(key("reordered"), value(10, "old"))).isFalse();

        assertThat(db.get(key("in-order"))).isEqualTo(value(20, "new"));
        assertThat(db.get(key("reordered"))).isEqualTo(value(20, "new"));
    }

    @ParameterizedTest
    @EnumSource(StorageEngine.class)
    void tombstoneWinsATieInEitherOrder(StorageEngine engine) {
        RecordRepository db = open(engine);

        db.upsert(key("value-first"), value(30, "v"));
        assertThat(db.upsert(key("value-first"), Record.tombstone(30))).isTrue();
        db.upsert(key("tombstone-first"), Record.tombstone(30));
        assertThat(db.upsert(key("tombstone-first"), value(30, "v"))).isFalse();

        assertThat(db.get(key("value-first"))).isEqualTo(Record.tombstone(30));
        assertThat(db.get(key("tombstone-first"))).isEqualTo(Record.tombstone(30));
    }

    @ParameterizedTest
    @EnumSource(StorageEngine.class)
    void olderWriteNeverOverwritesANewerOne(StorageEngine engine) {
        RecordRepository db = open(engine);

        db.upsert(key("value"), value(100, "newest"));
        assertThat(db.upsert(key("value"), Record.tombstone(99))).isFalse();
        assertThat(db.upsert(key("value"), value(1, "ancient"))).isFalse();
        db.upsert(key("deleted"), Record.tombstone(100));
        assertThat(db.upsert(key("deleted"), value(99, "resurrection"))).isFalse();

        assertThat(db.get(key("value"))).isEqualTo(value(100, "newest"));
        assertThat(db.get(key("deleted"))).isEqualTo(Record.tombstone(100));
    }

    @ParameterizedTest
    @EnumSource(StorageEngine.class)
    void sameVersionAgainIsNotRewritten(StorageEngine engine) {
        RecordRepository db = open(engine);

        assertThat(db.upsert(key("k"), value(5, "v"))).isTrue();

        assertThat(db.upsert(key("k"), value(5, "v"))).isFalse();
        assertThat(db.get(key("k"))).isEqualTo(value(5, "v"));
    }

    @ParameterizedTest
    @EnumSource(StorageEngine.class)
    void rangeStartIsInclusiveEndIsExclusiveAndTombstonesAreIncluded(StorageEngine engine) {
        RecordRepository db = open(engine);
        for (String k : new String[] {"a", "b", "bb", "c", "d"}) {
            db.upsert(key(k), value(1, k));
        }
        db.upsert(key("c"), Record.tombstone(2));

        assertThat(keys(db, "b", "d")).containsExactly("b", "bb", "c");
        assertThat(keys(db, "b", null)).containsExactly("b", "bb", "c", "d");
        assertThat(keys(db, "ba", "c")).containsExactly("bb");
        assertThat(keys(db, "b", "b")).isEmpty();
        assertThat(keys(db, "e", null)).isEmpty();
        assertThat(keys(db, "d", "a")).isEmpty();
        assertThat(read(db, "c", "d")).containsExactly(new KeyedRecordView("c", Record.tombstone(2)));
    }

    @ParameterizedTest
    @EnumSource(StorageEngine.class)
    void rangeIsInUnsignedByteOrderIncludingBytesFrom0x80(StorageEngine engine) {
        RecordRepository db = open(engine);
        byte[][] unsignedOrder = {
            {0x00}, {0x01}, {0x41}, {0x7F}, {0x7F, 0x00}, {(byte) 0x80}, {(byte) 0x80, 0x01}, {(byte) 0xC3, (byte) 0xA9},
            {(byte) 0xF0, (byte) 0x9F}, {(byte) 0xFF}, {(byte) 0xFF, (byte) 0xFF}};
        for (int i = unsignedOrder.length - 1; i >= 0; i--) {
            db.upsert(unsignedOrder[i], value(1, "v" + i));
        }

        List<byte[]> all = rawKeys(db, new byte[] {0x00}, null);
        List<byte[]> middle = rawKeys(db, new byte[] {0x7F}, new byte[] {(byte) 0xC3});
        List<byte[]> top = rawKeys(db, new byte[] {(byte) 0x81}, new byte[] {(byte) 0xFF, (byte) 0xFF});

        assertThat(all).usingElementComparator(Arrays::compare).containsExactly(unsignedOrder);
        assertThat(middle).usingElementComparator(Arrays::compare)
                .containsExactly(new byte[] {0x7F}, new byte[] {0x7F, 0x00}, new byte[] {(byte) 0x80},
                        new byte[] {(byte) 0x80, 0x01});
        assertThat(top).usingElementComparator(Arrays::compare)
                .containsExactly(new byte[] {(byte) 0xC3, (byte) 0xA9}, new byte[] {(byte) 0xF0, (byte) 0x9F},
                        new byte[] {(byte) 0xFF});
    }

    @ParameterizedTest
    @EnumSource(StorageEngine.class)
    void rangeReadsASnapshotTakenWhenTheCursorOpened(StorageEngine engine) {
        RecordRepository db = open(engine);
        db.upsert(key("s/1"), value(1, "before"));
        db.upsert(key("s/3"), value(1, "before"));

        List<KeyedRecordView> seen = new ArrayList<>();
        try (RecordRepository.Cursor cursor = db.range(key("s/"), key("s0"))) {
            db.upsert(key("s/2"), value(2, "inserted after"));
            db.upsert(key("s/3"), value(2, "overwritten after"));
            db.upsert(key("s/1"), Record.tombstone(2));
            while (cursor.hasNext()) {
                KeyedRecord next = cursor.next();
                seen.add(new KeyedRecordView(new String(next.key(), StandardCharsets.UTF_8), next.record()));
            }
        }

        assertThat(seen).containsExactly(
                new KeyedRecordView("s/1", value(1, "before")), new KeyedRecordView("s/3", value(1, "before")));
        assertThat(read(db, "s/", "s0")).containsExactly(
                new KeyedRecordView("s/1", Record.tombstone(2)),
                new KeyedRecordView("s/2", value(2, "inserted after")),
                new KeyedRecordView("s/3", value(2, "overwritten after")));
    }

    @ParameterizedTest
    @EnumSource(StorageEngine.class)
    void aClosedCursorFailsInsteadOfEndingAsIfComplete(StorageEngine engine) {
        RecordRepository db = open(engine);
        db.upsert(key("k"), value(1, "v"));

        RecordRepository.Cursor cursor = db.range(key("a"), null);
        cursor.close();
        cursor.close();

        assertThatThrownBy(cursor::hasNext).isInstanceOf(IllegalStateException.class);
    }

    @ParameterizedTest
    @EnumSource(StorageEngine.class)
    void closingTheStoreFailsAnOpenCursor(StorageEngine engine) throws IOException {
        RecordRepository db = open(engine);
        db.upsert(key("a"), value(1, "1"));
        db.upsert(key("b"), value(1, "2"));

        RecordRepository.Cursor cursor = db.range(key("a"), null);
        assertThat(cursor.next().key()).isEqualTo(key("a"));
        db.close();

        assertThatThrownBy(cursor::hasNext).as("a range cut by shutdown must not look complete")
                .isInstanceOf(IllegalStateException.class);
    }

    @ParameterizedTest
    @EnumSource(StorageEngine.class)
    void aWriteOlderThanTheNewestStoredOneStillComparesWithItsOwnKey(StorageEngine engine) {
        RecordRepository db = open(engine);

        db.upsert(key("a"), value(100, "a1"));
        db.upsert(key("b"), value(200, "b1"));

        assertThat(db.upsert(key("a"), value(150, "a2"))).isTrue();
        assertThat(db.upsert(key("a"), value(120, "a3"))).isFalse();
        assertThat(db.upsert(key("c"), value(50, "c1"))).isTrue();
        assertThat(db.get(key("a"))).isEqualTo(value(150, "a2"));
        assertThat(db.get(key("c"))).isEqualTo(value(50, "c1"));
    }

    @ParameterizedTest
    @EnumSource(StorageEngine.class)
    void keysOfOneStripeAndOfTwoStripesKeepTheirNewestWrites(StorageEngine engine) {
        RecordRepository db = open(engine);
        String first = "s0";
        String sameStripe = null;
        String otherStripe = null;
        for (int i = 1; sameStripe == null || otherStripe == null; i++) {
            boolean same = KeyStripedLocks.stripeOf(key("s" + i)) == KeyStripedLocks.stripeOf(key(first));
            if (same && sameStripe == null) {
                sameStripe = "s" + i;
            } else if (!same && otherStripe == null) {
                otherStripe = "s" + i;
            }
        }

        db.upsert(key(first), value(100, "first"));
        db.upsert(key(sameStripe), value(300, "same stripe"));
        db.upsert(key(otherStripe), value(200, "other stripe"));

        assertThat(db.upsert(key(first), value(99, "older"))).isFalse();
        assertThat(db.upsert(key(first), value(150, "newer"))).isTrue();
        assertThat(db.upsert(key(otherStripe), value(150, "older"))).isFalse();
        assertThat(db.upsert(key(sameStripe), value(250, "older"))).isFalse();
        assertThat(db.get(key(first))).isEqualTo(value(150, "newer"));
        assertThat(db.get(key(sameStripe))).isEqualTo(value(300, "same stripe"));
        assertThat(db.get(key(otherStripe))).isEqualTo(value(200, "other stripe"));
    }

    @ParameterizedTest
    @EnumSource(StorageEngine.class)
    void concurrentWritersOfTheSameKeysLeaveTheNewestOfEach(StorageEngine engine) throws Exception {
        RecordRepository db = open(engine);
        int keys = 20;
        long[] newest = new long[keys];
        List<Thread> writers = new ArrayList<>();
        List<long[]> plans = new ArrayList<>();
        Random random = new Random(42);
        for (int w = 0; w < 4; w++) {
            long[] plan = new long[2_000];
            for (int i = 0; i < plan.length; i++) {
                plan[i] = 1 + random.nextInt(1_000_000);
                newest[i % keys] = Math.max(newest[i % keys], plan[i]);
            }
            plans.add(plan);
        }
        for (long[] plan : plans) {
            Thread writer = new Thread(() -> {
                for (int i = 0; i < plan.length; i++) {
                    db.upsert(key("k" + i % keys), value(plan[i], "v" + plan[i]));
                }
            });
            writer.start();
            writers.add(writer);
        }
        for (Thread writer : writers) {
            writer.join();
        }

        for (int k = 0; k < keys; k++) {
            assertThat(db.get(key("k" + k))).isEqualTo(value(newest[k], "v" + newest[k]));
        }
    }

    /**
     * The directory copied while the store is open holds what a {@code kill -9} leaves: the log and the timestamp
     * bound's file as last written, nothing from a close. Writes that span several of the bound's margins must all
     * be protected from older writes there.
     */
    @ParameterizedTest
    @EnumSource(StorageEngine.class)
    void afterACrashAnOlderWriteStillLosesToEveryAcknowledgedOne(StorageEngine engine) throws IOException {
        RecordRepository db = open(engine);
        long start = HybridLogicalClock.timestampOf(System.currentTimeMillis());
        long second = HybridLogicalClock.timestampOf(1000);
        for (int i = 0; i < 40; i++) {
            assertThat(db.upsert(key("k" + i), value(start + i * second, "acknowledged"))).isTrue();
        }

        Path crashed = copyOf(dir.resolve("db"), dir.resolve("crashed"));
        RecordRepository restarted = LevelDbRecordRepository.open(crashed, engine, false);
        opened.add(restarted);

        for (int i = 0; i < 40; i++) {
            assertThat(restarted.upsert(key("k" + i), value(start + i * second - 1, "older"))).isFalse();
            assertThat(restarted.get(key("k" + i))).isEqualTo(value(start + i * second, "acknowledged"));
        }
    }

    @ParameterizedTest
    @EnumSource(StorageEngine.class)
    void aStoreWrittenWithoutTheTimestampBoundIsScannedForItsNewestWrite(StorageEngine engine) throws IOException {
        RecordRepository db = open(engine);
        db.upsert(key("newest"), value(HybridLogicalClock.timestampOf(5_000_000), "newest"));
        db.upsert(key("older"), value(HybridLogicalClock.timestampOf(1_000), "older"));
        db.close();
        Files.delete(dir.resolve("db").resolve(StoredTimestampBound.FILE_NAME));

        RecordRepository reopened = open(engine);

        assertThat(reopened.upsert(key("newest"), value(HybridLogicalClock.timestampOf(4_000_000), "late"))).isFalse();
        assertThat(reopened.upsert(key("older"), value(HybridLogicalClock.timestampOf(500), "late"))).isFalse();
        assertThat(reopened.get(key("newest"))).isEqualTo(value(HybridLogicalClock.timestampOf(5_000_000), "newest"));
        assertThat(dir.resolve("db").resolve(StoredTimestampBound.FILE_NAME)).exists();
    }

    @ParameterizedTest
    @EnumSource(StorageEngine.class)
    void anUnreadableTimestampBoundStopsTheOpenNamingTheFile(StorageEngine engine) throws IOException {
        open(engine).close();
        Path bound = dir.resolve("db").resolve(StoredTimestampBound.FILE_NAME);
        Files.writeString(bound, "garbage\n");

        assertThatThrownBy(() -> open(engine))
                .isInstanceOf(UncheckedIOException.class)
                .hasMessageContaining(bound.toString());
        Files.delete(bound);
        assertThat(open(engine).isOpen()).isTrue();
    }

    @ParameterizedTest
    @EnumSource(StorageEngine.class)
    void dataSurvivesCloseAndReopen(StorageEngine engine) throws IOException {
        RecordRepository db = open(engine);
        db.upsert(key("kept"), value(7, "value"));
        db.upsert(key("deleted"), Record.tombstone(8));
        byte[] big = new byte[1 << 20];
        Arrays.fill(big, (byte) 0x5A);
        db.upsert(key("big"), Record.value(9, big));

        db.close();
        assertThat(db.isOpen()).isFalse();
        RecordRepository reopened = open(engine);

        assertThat(reopened.isOpen()).isTrue();
        assertThat(reopened.get(key("kept"))).isEqualTo(value(7, "value"));
        assertThat(reopened.get(key("deleted"))).isEqualTo(Record.tombstone(8));
        assertThat(reopened.get(key("big"))).isEqualTo(Record.value(9, big));
        assertThat(reopened.upsert(key("kept"), value(6, "older"))).isFalse();
        assertThat(reopened.sizeOnDiskBytes()).isPositive();
    }

    @ParameterizedTest
    @EnumSource(StorageEngine.class)
    void aFullMemtableOfTheConfiguredSizeBecomesATableFile(StorageEngine engine) throws Exception {
        Path small = dir.resolve("small");
        Path large = dir.resolve("large");
        RecordRepository smallBuffer = LevelDbRecordRepository.open(small, engine, false, 64 << 10);
        RecordRepository largeBuffer = LevelDbRecordRepository.open(large, engine, false,
                LevelDbRecordRepository.DEFAULT_WRITE_BUFFER_BYTES);
        opened.add(smallBuffer);
        opened.add(largeBuffer);
        byte[] value = new byte[4096];
        for (int i = 0; i < 64; i++) {   // 256 KiB: four 64-KiB memtables, a sixteenth of the default 4-MiB one
            Arrays.fill(value, (byte) i);
            smallBuffer.upsert(key("k" + i), Record.value(i + 1, value));
            largeBuffer.upsert(key("k" + i), Record.value(i + 1, value));
        }

        await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(20)).untilAsserted(() ->
                assertThat(tableFiles(small)).as("table files with 64-KiB memtables").isPositive());
        assertThat(tableFiles(large)).as("table files with 4-MiB memtables").isZero();
        assertThat(smallBuffer.get(key("k63"))).isEqualTo(largeBuffer.get(key("k63")));
    }

    /** A file-by-file copy of {@code source} (not recursive: a LevelDB directory is flat). */
    private static Path copyOf(Path source, Path target) throws IOException {
        Files.createDirectories(target);
        try (Stream<Path> files = Files.list(source)) {
            for (Path file : files.toList()) {
                Files.copy(file, target.resolve(file.getFileName()));
            }
        }
        return target;
    }

    /** Level-0 and deeper table files in a LevelDB directory ({@code .ldb}, or {@code .sst} in older versions). */
    private static long tableFiles(Path directory) throws IOException {
        try (Stream<Path> files = Files.list(directory)) {
            return files.map(path -> path.getFileName().toString())
                    .filter(name -> name.endsWith(".ldb") || name.endsWith(".sst"))
                    .count();
        }
    }

    private RecordRepository open(StorageEngine engine) {
        RecordRepository repository = LevelDbRecordRepository.open(dir.resolve("db"), engine, false);
        opened.add(repository);
        return repository;
    }

    private static List<String> keys(RecordRepository db, String start, String end) {
        return read(db, start, end).stream().map(KeyedRecordView::key).toList();
    }

    private static List<KeyedRecordView> read(RecordRepository db, String start, String end) {
        List<KeyedRecordView> result = new ArrayList<>();
        try (RecordRepository.Cursor cursor = db.range(key(start), end == null ? null : key(end))) {
            while (cursor.hasNext()) {
                KeyedRecord next = cursor.next();
                result.add(new KeyedRecordView(new String(next.key(), StandardCharsets.UTF_8), next.record()));
            }
        }
        return result;
    }

    private static List<byte[]> rawKeys(RecordRepository db, byte[] start, byte[] end) {
        List<byte[]> result = new ArrayList<>();
        try (RecordRepository.Cursor cursor = db.range(start, end)) {
            while (cursor.hasNext()) {
                result.add(cursor.next().key());
            }
        }
        return result;
    }

    private static byte[] key(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    private static Record value(long timestamp, String text) {
        return Record.value(timestamp, text.getBytes(StandardCharsets.UTF_8));
    }

    /** A range entry with its key as text, comparable by value (KeyedRecord holds an array). */
    private record KeyedRecordView(String key, Record record) {
    }
}
