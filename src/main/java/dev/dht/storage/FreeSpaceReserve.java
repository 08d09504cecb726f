package dev.dht.storage;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.FileStore;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The usable space a node's data dir must keep ({@code dht.storage.min-free-space}): writes to LevelDB (records,
 * hints) first {@link #require()} it and are refused with {@link StorageFullException} (answered 503) below it.
 *
 * <p>Why: leveldbjni's LevelDB writes its log and table files through memory-mapped regions it has extended with
 * {@code ftruncate}; on a full file system the first write into such a page kills the process with SIGBUS
 * (measured on an 8 MB tmpfs: the node died on its first PUT after the disk filled, no error, no answer). No
 * {@link IOException} ever reaches Java, so the only clean answer is not to write when the disk is nearly full.
 * The reserve must hold what LevelDB may still write on its own: the mapped log chunk (up to 1 MB), a memtable
 * flush (4 MB) and compaction output (2 MB files).
 *
 * <p>Each check asks the file system ({@code statvfs}, microseconds): blocking, so it runs where the write runs
 * (storage scheduler, hints thread). Thread-safe.
 */
public final class FreeSpaceReserve {
    /** No reserve: every check passes. */
    public static final FreeSpaceReserve NONE = new FreeSpaceReserve(null, 0);

    private final FileStore fileStore;
    private final long reserveBytes;

    private FreeSpaceReserve(FileStore fileStore, long reserveBytes) {
        this.fileStore = fileStore;
        this.reserveBytes = reserveBytes;
    }

    /**
     * The reserve of {@code reserveBytes} usable bytes on the file system of {@code dataDir}; 0: {@link #NONE}.
     *
     * @throws IllegalArgumentException if {@code reserveBytes} is negative
     * @throws UncheckedIOException     if the file system of {@code dataDir} cannot be found
     */
    public static FreeSpaceReserve of(Path dataDir, long reserveBytes) {
        if (reserveBytes < 0) {
            throw new IllegalArgumentException("reserveBytes must not be negative, was " + reserveBytes);
        }
        if (reserveBytes == 0) {
            return NONE;
        }
        try {
            return new FreeSpaceReserve(Files.getFileStore(dataDir), reserveBytes);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot find the file system of " + dataDir + ": " + e.getMessage(), e);
        }
    }

    /** Usable bytes on the data dir's file system now; {@link Long#MAX_VALUE} for {@link #NONE} or if it cannot say. */
    public long usableBytes() {
        if (fileStore == null) {
            return Long.MAX_VALUE;
        }
        try {
            return fileStore.getUsableSpace();
        } catch (IOException e) {
            return Long.MAX_VALUE;
        }
    }

    /** True while at least the reserve is usable. Blocking (one {@code statvfs}). */
    public boolean isKept() {
        return usableBytes() >= reserveBytes;
    }

    /**
     * Returns if at least the reserve is usable. Blocking (one {@code statvfs}).
     *
     * @throws StorageFullException below the reserve
     */
    public void require() {
        long usable = usableBytes();
        if (usable < reserveBytes) {
            throw new StorageFullException(usable, reserveBytes);
        }
    }
}
