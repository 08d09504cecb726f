package dev.dht.storage;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dht.failure.OverloadReason;
import dev.dht.failure.OverloadedException;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The free-space reserve over a real LevelDB store: a reserve larger than any disk refuses every write and
 * changes nothing, reads go on; a reserve of 0 lets writes through. The full-disk case on a real small file
 * system is {@code DiskFullIT}.
 */
class FreeSpaceReserveRepositoryTest {
    @TempDir
    Path dir;
    private RecordRepository leveldb;

    @AfterEach
    void close() throws IOException {
        if (leveldb != null) {
            leveldb.close();
        }
    }

    @Test
    void belowTheReserveWritesAndPurgesAreRefusedAndNothingChangesWhileReadsGoOn() {
        leveldb = LevelDbRecordRepository.open(dir, StorageEngine.JNI, false);
        Record stored = Record.value(1, bytes("stored before"));
        leveldb.upsert(bytes("k"), stored);
        FreeSpaceReserveRepository full = new FreeSpaceReserveRepository(leveldb, FreeSpaceReserve.of(dir, Long.MAX_VALUE));

        assertThatThrownBy(() -> full.upsert(bytes("k"), Record.value(2, bytes("refused"))))
                .isInstanceOf(OverloadedException.class)
                        .hasFieldOrPropertyWithValue("reason", OverloadReason.DISK_FULL).hasMessageContaining("dht.storage.min-free-space");
        assertThatThrownBy(() -> full.upsert(bytes("new"), Record.value(2, bytes("refused"))))
                .isInstanceOf(OverloadedException.class)
                        .hasFieldOrPropertyWithValue("reason", OverloadReason.DISK_FULL);
        assertThatThrownBy(() -> full.purge(bytes("k"), stored)).isInstanceOf(OverloadedException.class)
                .hasFieldOrPropertyWithValue("reason", OverloadReason.DISK_FULL);

        assertThat(full.get(bytes("k"))).isEqualTo(stored);
        assertThat(full.get(bytes("new"))).isNull();
    }

    @Test
    void aReserveOfZeroLetsWritesThrough() {
        leveldb = LevelDbRecordRepository.open(dir, StorageEngine.JNI, false);
        FreeSpaceReserveRepository unchecked = new FreeSpaceReserveRepository(leveldb, FreeSpaceReserve.of(dir, 0));

        assertThat(unchecked.upsert(bytes("k"), Record.value(1, bytes("v")))).isTrue();
        assertThat(unchecked.get(bytes("k"))).isEqualTo(Record.value(1, bytes("v")));
    }

    private static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }
}
