package dev.dht.backup.location;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardWatchEventKinds;
import java.nio.file.WatchEvent;
import java.nio.file.WatchKey;
import java.nio.file.WatchService;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A directory location publishes a file only once all of it is on disk, and deletes a backup's manifest last: a
 * close whose flush fails (the temporary file on {@code /dev/full}) leaves no file and no temporary file, and fails
 * again if repeated; a delete removes the member files before {@code manifest.json} (seen through the directory's
 * change events, in their order).
 */
class FileBackupLocationTest {
    @TempDir
    Path root;

    @Test
    void aCloseThatCannotFlushPublishesNothingAndLeavesNoTemporaryFile() throws IOException {
        Path devFull = Path.of("/dev/full");
        assumeTrue(Files.exists(devFull), "Linux's /dev/full");
        FileBackupLocation location = new FileBackupLocation(root);
        Path folder = Files.createDirectories(root.resolve("b1"));
        Path partial = folder.resolve(".manifest.json.partial");
        Files.createSymbolicLink(partial, devFull);

        OutputStream out = location.create("b1", "manifest.json");
        out.write("{}".getBytes(StandardCharsets.UTF_8));

        assertThatThrownBy(out::close).isInstanceOf(IOException.class);
        assertThat(folder.resolve("manifest.json")).doesNotExist();
        assertThat(Files.exists(partial, java.nio.file.LinkOption.NOFOLLOW_LINKS)).as("temporary file left").isFalse();
        assertThatThrownBy(out::close).as("a second close").isInstanceOf(IOException.class);
    }

    @Test
    void aDeleteRemovesTheManifestLast() throws Exception {
        FileBackupLocation location = new FileBackupLocation(root);
        for (String name : List.of("a_1-0000.dhtb", "node-2_8080-0000.dhtb", "z_3-0000.dhtb", "manifest.json")) {
            try (OutputStream out = location.create("b1", name)) {
                out.write(name.getBytes(StandardCharsets.UTF_8));
            }
        }
        List<String> deleted = new ArrayList<>();
        try (WatchService watcher = FileSystems.getDefault().newWatchService()) {
            root.resolve("b1").register(watcher, StandardWatchEventKinds.ENTRY_DELETE);
            location.delete("b1");
            while (deleted.size() < 4) {
                WatchKey key = watcher.poll(5, TimeUnit.SECONDS);
                if (key == null) {
                    break;
                }
                for (WatchEvent<?> event : key.pollEvents()) {
                    deleted.add(event.context().toString());
                }
                key.reset();
            }
        }

        assertThat(root.resolve("b1")).doesNotExist();
        assertThat(deleted).hasSize(4).last().isEqualTo("manifest.json");
    }
}
