package dev.dht.storage;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dht.node.HybridLogicalClock;
import dev.dht.testing.SettableClock;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Tombstone GC on a real LevelDB behind the row cache, with a wall clock the test sets: what is older than the
 * grace goes, from the store and from the disk; what is younger, live or rewritten meanwhile stays.
 */
class TombstoneCollectorTest {
    private static final Duration GRACE = Duration.ofHours(1);
    private static final int DELETED_KEYS = 10_000;

    @TempDir
    Path dir;

    private final SettableClock wall = new SettableClock(1_700_000_000_000L);
    private final HybridLogicalClock clock = new HybridLogicalClock(wall);
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private RecordRepository repository;
    private TombstoneCollector collector;

    @BeforeEach
    void open() {
        repository = new RowCachedRecordRepository(
                LevelDbRecordRepository.open(dir.resolve("db"), StorageEngine.JNI, false), 1 << 20);
        collector = new TombstoneCollector(repository, clock, GRACE, 1_000_000, registry);
    }

    @AfterEach
    void close() throws IOException {
        collector.close();
        repository.close();
    }

    @Test
    void tenThousandDeletedKeysLeaveTheStoreAndTheDiskAfterTheGrace() throws IOException {
        byte[] value = new byte[1024];
        ThreadLocalRandom.current().nextBytes(value);
        for (int i = 0; i < DELETED_KEYS; i++) {
            repository.upsert(key("deleted-" + i), Record.value(clock.now(), value));
        }
        repository.upsert(key("live"), Record.value(clock.now(), bytes("kept")));
        for (int i = 0; i < DELETED_KEYS; i++) {
            repository.upsert(key("deleted-" + i), Record.tombstone(clock.now()));
        }
        repository.compact(null, null);
        long before = dataFileBytes();

        wall.advance(GRACE.plusSeconds(1));
        long purged = collector.purge();

        assertThat(purged).isEqualTo(DELETED_KEYS);
        assertThat(repository.get(key("deleted-0"))).isNull();
        assertThat(repository.get(key("deleted-" + (DELETED_KEYS - 1)))).isNull();
        assertThat(keysLeft()).as("only the live key is left").isEqualTo(1);
        assertThat(repository.get(key("live")).value()).isEqualTo(bytes("kept"));
        long after = dataFileBytes();
        assertThat(after).as("table and log bytes after the purge, against %d before", before).isLessThan(before / 100);
        assertThat(registry.get("dht.tombstone.purged").counter().count()).isEqualTo(DELETED_KEYS);
        assertThat(registry.get("dht.tombstone.reclaimed.bytes").counter().count())
                .as("key and tombstone bytes").isEqualTo(DELETED_KEYS * (double) Record.HEADER_BYTES + keyBytes());
    }

    @Test
    void tombstonesYoungerThanTheGraceStay() {
        repository.upsert(key("k"), Record.tombstone(clock.now()));
        wall.advance(GRACE.minusSeconds(1));

        assertThat(collector.purge()).isZero();
        assertThat(repository.get(key("k"))).isNotNull();
    }

    @Test
    void anExpiredValueGoesAGraceAfterItsExpiryNotItsWrite() {
        long expiry = wall.millis() + Duration.ofHours(5).toMillis();
        repository.upsert(key("ttl"), Record.value(clock.now(), bytes("v"), 0, expiry));
        repository.upsert(key("no-ttl"), Record.value(clock.now(), bytes("v")));

        wall.advance(Duration.ofHours(5).plus(GRACE).minusSeconds(1));
        assertThat(collector.purge()).as("expired, but not a grace ago").isZero();

        wall.advance(Duration.ofSeconds(2));
        assertThat(collector.purge()).isEqualTo(1);
        assertThat(repository.get(key("ttl"))).isNull();
        assertThat(repository.get(key("no-ttl"))).as("a value without a TTL never goes").isNotNull();
    }

    @Test
    void aCachedRowGoesWithItsRecord() {
        repository.upsert(key("k"), Record.tombstone(clock.now()));
        assertThat(repository.get(key("k"))).isNotNull();
        assertThat(repository.cached(key("k"))).as("the read cached the row").isNotNull();
        wall.advance(GRACE.plusSeconds(1));

        collector.purge();

        assertThat(repository.cached(key("k"))).isNull();
        assertThat(repository.get(key("k"))).isNull();
    }

    @Test
    void aPurgeKeepsARecordWrittenSinceItWasRead() {
        Record tombstone = Record.tombstone(clock.now());
        repository.upsert(key("k"), tombstone);
        Record rewritten = Record.value(clock.now(), bytes("written again"));
        repository.upsert(key("k"), rewritten);

        assertThat(repository.purge(key("k"), tombstone)).isFalse();
        assertThat(repository.get(key("k"))).isEqualTo(rewritten);
    }

    /** Bytes of LevelDB's tables and write-ahead log (not its manifest, preallocated at 64 KiB, or its info log). */
    private long dataFileBytes() throws IOException {
        try (Stream<Path> files = Files.list(dir.resolve("db"))) {
            return files.filter(file -> file.toString().endsWith(".sst") || file.toString().endsWith(".log"))
                    .mapToLong(file -> file.toFile().length()).sum();
        }
    }

    private long keysLeft() {
        long count = 0;
        try (RecordRepository.Cursor cursor = repository.range(new byte[0], null)) {
            while (cursor.hasNext()) {
                cursor.next();
                count++;
            }
        }
        return count;
    }

    private static long keyBytes() {
        long total = 0;
        for (int i = 0; i < DELETED_KEYS; i++) {
            total += key("deleted-" + i).length;
        }
        return total;
    }

    private static byte[] key(String text) {
        return bytes(text);
    }

    private static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }
}
