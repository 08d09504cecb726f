package dev.dht.backup.restore;

import java.io.IOException;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.Base64;
import java.util.Properties;

/**
 * Where a restore resumes after it was stopped (even by {@code kill -9}): the backup id and the last key up to which
 * every record (in the merged key order) was acknowledged, in a small properties file replaced atomically (written
 * beside it, fsync'ed, renamed) after each acknowledged batch. Not thread-safe: the restore's one thread writes it.
 */
final class RestoreCheckpoint {
    private final Path file;
    private final String backupId;
    private byte[] lastKey;
    private long records;

    private RestoreCheckpoint(Path file, String backupId, byte[] lastKey, long records) {
        this.file = file;
        this.backupId = backupId;
        this.lastKey = lastKey;
        this.records = records;
    }

    /**
     * The checkpoint in {@code file} of backup {@code backupId}, or a fresh one if there is none.
     *
     * @throws RestoreException if the file belongs to another backup or does not read
     */
    static RestoreCheckpoint open(Path file, String backupId) {
        if (!Files.exists(file)) {
            return new RestoreCheckpoint(file, backupId, null, 0);
        }
        Properties properties = new Properties();
        try {
            properties.load(Files.newBufferedReader(file, StandardCharsets.UTF_8));
        } catch (IOException | IllegalArgumentException e) {
            throw new RestoreException("cannot read the checkpoint " + file + ": " + e.getMessage());
        }
        if (!backupId.equals(properties.getProperty("backup"))) {
            throw new RestoreException("the checkpoint " + file + " is of backup " + properties.getProperty("backup")
                    + ", not " + backupId + ": delete it or name another with --checkpoint");
        }
        String key = properties.getProperty("lastKey", "");
        return new RestoreCheckpoint(file, backupId, key.isEmpty() ? null : Base64.getDecoder().decode(key),
                Long.parseLong(properties.getProperty("records", "0")));
    }

    /** The last key acknowledged, null if none yet. */
    byte[] lastKey() {
        return lastKey;
    }

    /** Records acknowledged up to the last key. */
    long records() {
        return records;
    }

    /** Records that every record up to {@code key} (inclusive) is acknowledged, {@code added} more of them. */
    void advance(byte[] key, long added) {
        lastKey = key;
        records += added;
        Properties properties = new Properties();
        properties.setProperty("backup", backupId);
        properties.setProperty("lastKey", Base64.getEncoder().encodeToString(key));
        properties.setProperty("records", Long.toString(records));
        Path partial = file.resolveSibling(file.getFileName() + ".partial");
        try {
            try (FileChannel out = FileChannel.open(partial, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                    StandardOpenOption.TRUNCATE_EXISTING)) {
                StringWriter text = new StringWriter();
                properties.store(text, "dht restore checkpoint");
                out.write(ByteBuffer.wrap(text.toString().getBytes(StandardCharsets.UTF_8)));
                out.force(true);
            }
            Files.move(partial, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write the checkpoint " + file + ": " + e.getMessage(), e);
        }
    }

    /** Deletes the checkpoint once the restore is complete. */
    void delete() {
        try {
            Files.deleteIfExists(file);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot delete the checkpoint " + file + ": " + e.getMessage(), e);
        }
    }
}
