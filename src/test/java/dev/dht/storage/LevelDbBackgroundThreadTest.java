package dev.dht.storage;

import static dev.dht.testing.LinuxThreads.niceOf;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * LevelDB's background thread (leveldbjni) is found by its name and reniced, so compactions yield the CPU to
 * requests: Linux only, as the feature.
 */
class LevelDbBackgroundThreadTest {
    @TempDir
    Path dir;

    @Test
    void theBackgroundThreadOfTheJniEngineIsNamedAndGetsTheNiceValue() throws IOException {
        assumeTrue(Files.isDirectory(Path.of("/proc/self/task")), "Linux /proc");
        try (LevelDbRecordRepository repository = LevelDbRecordRepository.open(dir.resolve("a"), StorageEngine.JNI, false);
             LevelDbRecordRepository second = LevelDbRecordRepository.open(dir.resolve("b"), StorageEngine.JNI, false)) {
            byte[] value = new byte[1024];
            for (int i = 0; i < 10_000; i++) {     // 10 MB: several memtable flushes in each database
                byte[] key = ("key-" + i).getBytes(StandardCharsets.UTF_8);
                repository.upsert(key, Record.value(i + 1, value));
                second.upsert(key, Record.value(i + 1, value));
            }

            List<String> threads = LevelDbBackgroundThread.threadIds();
            assertThat(threads).as("one background thread for every database of the process").hasSize(1);

            assertThat(LevelDbBackgroundThread.lowerPriority(19)).isEqualTo(threads);
            assertThat(niceOf(threads.get(0))).isEqualTo(19);
            assertThat(repository.get("key-9999".getBytes(StandardCharsets.UTF_8)).timestamp()).isEqualTo(10_000);
        }
    }

    @Test
    void aNiceValueOutsideZeroToNineteenIsRefused() {
        assertThatThrownBy(() -> LevelDbBackgroundThread.lowerPriority(20)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> LevelDbBackgroundThread.lowerPriority(-1)).isInstanceOf(IllegalArgumentException.class);
    }
}
