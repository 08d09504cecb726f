package dev.dht.node;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;

/**
 * A small file replaced whole, atomically and durably: the content goes to a temporary sibling file, which is
 * fsync'ed and then renamed over the old one (and the directory synced), so a crash leaves either the old or the new content, never a torn
 * one. Blocks on disk I/O (one fsync per {@link #replace}); never call it on an event loop.
 */
public final class DurableFile {
    private DurableFile() {
    }

    /**
     * Replaces {@code file}'s content with {@code content}, creating the file if missing.
     *
     * @throws IOException if the temporary file cannot be written or synced, or the rename fails
     */
    public static void replace(Path file, byte[] content) throws IOException {
        Path temporary = file.resolveSibling(file.getFileName() + ".tmp");
        try (FileChannel channel = FileChannel.open(temporary, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                StandardOpenOption.TRUNCATE_EXISTING)) {
            ByteBuffer buffer = ByteBuffer.wrap(content);
            while (buffer.hasRemaining()) {
                channel.write(buffer);
            }
            channel.force(true);
        }
        Files.move(temporary, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        syncDirectory(file.toAbsolutePath().getParent());
    }

    /**
     * Removes {@code file} if it exists, and syncs its directory so that the removal survives a crash.
     *
     * @throws IOException if it cannot be removed
     */
    public static void delete(Path file) throws IOException {
        if (Files.deleteIfExists(file)) {
            syncDirectory(file.toAbsolutePath().getParent());
        }
    }

    private static void syncDirectory(Path directory) {
        try (FileChannel channel = FileChannel.open(directory, StandardOpenOption.READ)) {
            channel.force(true);
        } catch (IOException notSupported) {
            // some file systems cannot open a directory for sync; the rename or removal stands as the OS wrote it
        }
    }
}
