package dev.dht.storage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The row cache answers with the repository's current record for a key, or not at all. */
class RowCachedRecordRepositoryTest {
    @TempDir
    Path dir;
    LevelDbRecordRepository leveldb;
    final AtomicInteger diskReads = new AtomicInteger();

    @BeforeEach
    void open() {
        leveldb = LevelDbRecordRepository.open(dir, StorageEngine.JAVA, false);
    }

    @AfterEach
    void close() throws Exception {
        if (leveldb.isOpen()) {
            leveldb.close();
        }
    }

    @Test
    void aWriteAddsNoRowButReplacesACachedOneAndALateOlderWriteDoesNotReplaceIt() {
        RowCachedRecordRepository repository = new RowCachedRecordRepository(leveldb, 1 << 20);
        assertThat(repository.upsert(key("a"), Record.value(10, bytes("first")))).isTrue();
        assertThat(repository.cached(key("a"))).as("a write does not fill the cache").isNull();
        assertThat(repository.get(key("a")).value()).isEqualTo(bytes("first"));
        assertThat(repository.cached(key("a")).value()).as("a read does").isEqualTo(bytes("first"));

        assertThat(repository.upsert(key("a"), Record.value(20, bytes("new")))).isTrue();
        assertThat(repository.upsert(key("a"), Record.value(15, bytes("old")))).isFalse();

        assertThat(repository.cached(key("a")).value()).isEqualTo(bytes("new"));
        assertThat(repository.get(key("a")).value()).isEqualTo(bytes("new"));
        assertThat(leveldb.get(key("a")).value()).isEqualTo(bytes("new"));
        assertThat(repository.cached(key("b"))).isNull();
    }

    @Test
    void aTombstoneReplacesACachedValueAndIsReadFromTheCache() {
        RowCachedRecordRepository repository = new RowCachedRecordRepository(countingReads(leveldb), 1 << 20);
        repository.upsert(key("a"), Record.value(1, bytes("v")));
        repository.get(key("a"));
        repository.upsert(key("a"), Record.tombstone(2));

        assertThat(repository.cached(key("a")).isTombstone()).isTrue();
        assertThat(repository.get(key("a")).isTombstone()).isTrue();
        assertThat(diskReads).as("only the first read went to disk").hasValue(1);
    }

    @Test
    void aMissReadsTheDiskOnceAndThenHits() {
        leveldb.upsert(key("a"), Record.value(1, bytes("written before the cache")));
        RowCachedRecordRepository repository = new RowCachedRecordRepository(countingReads(leveldb), 1 << 20);

        assertThat(repository.cached(key("a"))).isNull();
        assertThat(repository.get(key("a")).value()).isEqualTo(bytes("written before the cache"));
        assertThat(repository.get(key("a")).value()).isEqualTo(bytes("written before the cache"));
        assertThat(repository.cached(key("a")).value()).isEqualTo(bytes("written before the cache"));
        assertThat(diskReads).hasValue(1);
        assertThat(repository.get(key("never written"))).isNull();
        assertThat(repository.cached(key("never written"))).isNull();
    }

    @Test
    void theCacheStaysWithinItsCapacityAndEvictedRowsAreReadFromDisk() {
        int valueBytes = 1000;
        long capacity = 20L * (valueBytes + 100);
        RowCachedRecordRepository repository = new RowCachedRecordRepository(leveldb, capacity);
        for (int i = 0; i < 200; i++) {
            repository.upsert(key("k" + i), Record.value(1, new byte[valueBytes]));
            repository.get(key("k" + i));
        }
        repository.rows().cleanUp();

        assertThat(repository.rows().estimatedSize()).isBetween(1L, 20L);
        for (int i = 0; i < 200; i++) {
            assertThat(repository.get(key("k" + i)).value()).hasSize(valueBytes);
        }
    }

    @Test
    void aReaderThatMissedNeverPutsBackARecordAConcurrentWriterReplaced() throws Exception {
        // The reader's disk read returns v1, then gives a concurrent writer of v2 up to 300 ms to finish before it
        // fills the cache: without the per-key lock the writer finishes in that time and the reader then puts
        // the stale v1 back; with the lock the writer waits for the reader and its v2 wins.
        leveldb.upsert(key("a"), Record.value(1, bytes("v1")));
        CountDownLatch readerHasReadTheDisk = new CountDownLatch(1);
        CountDownLatch writerDone = new CountDownLatch(1);
        RecordRepository pausingReads = new ForwardingRecordRepository(leveldb) {
            @Override
            public Record get(byte[] key) {
                Record stored = super.get(key);
                readerHasReadTheDisk.countDown();
                awaitQuietly(writerDone, 300);
                return stored;
            }
        };
        RowCachedRecordRepository repository = new RowCachedRecordRepository(pausingReads, 1 << 20);
        ExecutorService threads = Executors.newFixedThreadPool(2);
        try {
            Future<Record> reader = threads.submit(() -> repository.get(key("a")));
            assertThat(readerHasReadTheDisk.await(10, TimeUnit.SECONDS)).isTrue();
            Future<Boolean> writer = threads.submit(() -> {
                boolean written = repository.upsert(key("a"), Record.value(2, bytes("v2")));
                writerDone.countDown();
                return written;
            });

            assertThat(writer.get(10, TimeUnit.SECONDS)).isTrue();
            assertThat(reader.get(10, TimeUnit.SECONDS).value()).isEqualTo(bytes("v1"));
            assertThat(repository.cached(key("a")).value()).as("cached after both finished").isEqualTo(bytes("v2"));
        } finally {
            threads.shutdownNow();
        }
    }

    @Test
    void closingDropsTheCachedRowsAndANonPositiveCapacityIsRefused() throws Exception {
        RowCachedRecordRepository repository = new RowCachedRecordRepository(leveldb, 1 << 20);
        repository.upsert(key("a"), Record.value(1, bytes("v")));
        repository.get(key("a"));
        assertThat(repository.cached(key("a"))).isNotNull();
        repository.close();

        assertThat(repository.isOpen()).isFalse();
        assertThat(repository.cached(key("a"))).isNull();
        assertThatThrownBy(() -> new RowCachedRecordRepository(leveldb, 0))
                .isInstanceOf(IllegalArgumentException.class);
    }

    private RecordRepository countingReads(RecordRepository delegate) {
        return new ForwardingRecordRepository(delegate) {
            @Override
            public Record get(byte[] key) {
                diskReads.incrementAndGet();
                return super.get(key);
            }
        };
    }

    private static byte[] key(String id) {
        return id.getBytes(StandardCharsets.UTF_8);
    }

    private static byte[] bytes(String value) {
        return value.getBytes(StandardCharsets.UTF_8);
    }

    private static void awaitQuietly(CountDownLatch latch, long millis) {
        try {
            latch.await(millis, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
