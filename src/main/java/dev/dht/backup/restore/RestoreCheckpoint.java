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
 * beside it, fsync'ed, renamed) at most once a second as batches are acknowledged. Not thread-safe: the restore's one thread writes it.
 */
final class RestoreCheckpoint {
    private final Path file;
    private final String backupId;
    /** Least time between two writes of the file: one second. */
    static final long WRITE_INTERVAL_NANOS = 1_000_000_000L;
    private byte[] lastKey;
    private long records;
    private long writtenRecords;
    private long writtenAt = System.nanoTime() - WRITE_INTERVAL_NANOS;

    private RestoreCheckpoint(Path file, String backupId, byte[] lastKey, long records) {
        this.file = file;
        this.backupId = backupId;
        this.lastKey = lastKey;
        this.records = records;
        this.writtenRecords = records;
    }

    /**
     * The checkpoint in {@code file} of backup {@code backupId}, or a fresh one if there is none.
     *
     * @throws RestoreException if the file belongs to another backup ({@link RestoreException.Kind#REFUSED}) or does
     *                          not read
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
            throw new RestoreException(RestoreException.Kind.REFUSED, "the checkpoint " + file + " is of backup "
                    + properties.getProperty("backup") + ", not " + backupId + ": delete it or name another with --checkpoint");
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

    /**
     * Records that every record up to {@code key} (inclusive) is acknowledged, {@code added} more of them; the file is
     * written at most once per {@link #WRITE_INTERVAL_NANOS} (an fsync per batch would pace the restore on a busy
     * disk), so a restore resumed after a crash writes at most that last second's records again, which changes nothing
     * (last write wins, same versions).
     */
    void advance(byte[] key, long added) {
        lastKey = key;
        records += added;
        if (System.nanoTime() - writtenAt >= WRITE_INTERVAL_NANOS) {
            write();
        }
    }

    /** Writes the file now if it is behind (a restore that stops on a failure keeps all it had acknowledged). */
    void flush() {
        if (lastKey != null && unwritten()) {
            write();
        }
    }

    private boolean unwritten() {
        return writtenRecords != records;
    }

    private void write() {
        writtenAt = System.nanoTime();
        writtenRecords = records;
        Properties properties = new Properties();
        properties.setProperty("backup", backupId);
        properties.setProperty("lastKey", Base64.getEncoder().encodeToString(lastKey));
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
