package dev.dht.storage;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.FileStore;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * A {@link RecordRepository} that refuses writes ({@link StorageFullException}, answered 503) while the file system
 * of the data dir has less usable space than a reserve, and lets them through again as soon as space is freed.
 *
 * <p>Why: leveldbjni's LevelDB writes its log and table files through memory-mapped regions it has extended with
 * {@code ftruncate}; on a full file system the first write into such a page kills the process with SIGBUS
 * (measured on an 8 MB tmpfs: the node died on its first PUT after the disk filled, no error, no answer). No
 * {@link IOException} ever reaches Java, so the only clean answer is not to write when the disk is nearly full.
 * The reserve must hold what LevelDB may still write on its own: the mapped log chunk (up to 1 MB), a memtable
 * flush (4 MB) and compaction output (2 MB files); reads and deletes of nothing are unaffected.
 *
 * <p>Each write first asks the file system for its usable space ({@code statvfs}, microseconds): blocking, so it
 * runs where the write runs, on the storage scheduler. Purges are writes too and are refused the same way; a
 * {@link #compact} below the reserve is skipped (it needs room for its output). Thread-safe as the delegate is.
 */
public final class FreeSpaceReserveRepository implements RecordRepository {
    private final RecordRepository delegate;
    private final FileStore fileStore;
    private final long reserveBytes;

    /**
     * @param dataDir      the directory the delegate writes into
     * @param reserveBytes usable bytes that must remain; 0 turns the check off
     * @throws UncheckedIOException if the file system of {@code dataDir} cannot be found
     */
    public FreeSpaceReserveRepository(RecordRepository delegate, Path dataDir, long reserveBytes) {
        if (reserveBytes < 0) {
            throw new IllegalArgumentException("reserveBytes must not be negative, was " + reserveBytes);
        }
        this.delegate = delegate;
        this.reserveBytes = reserveBytes;
        try {
            this.fileStore = Files.getFileStore(dataDir);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot find the file system of " + dataDir + ": " + e.getMessage(), e);
        }
    }

    /** Usable bytes on the data dir's file system now, or {@link Long#MAX_VALUE} if the file system cannot say. */
    public long usableBytes() {
        try {
            return fileStore.getUsableSpace();
        } catch (IOException e) {
            return Long.MAX_VALUE;
        }
    }

    private void requireReserve() {
        if (reserveBytes > 0) {
            long usable = usableBytes();
            if (usable < reserveBytes) {
                throw new StorageFullException(usable, reserveBytes);
            }
        }
    }

    @Override
    public Record get(byte[] key) {
        return delegate.get(key);
    }

    @Override
    public Record cached(byte[] key) {
        return delegate.cached(key);
    }

    /** {@inheritDoc} @throws StorageFullException below the reserve (nothing written) */
    @Override
    public boolean upsert(byte[] key, Record record) {
        requireReserve();
        return delegate.upsert(key, record);
    }

    /** {@inheritDoc} @throws StorageFullException below the reserve (nothing purged) */
    @Override
    public boolean purge(byte[] key, Record expected) {
        requireReserve();
        return delegate.purge(key, expected);
    }

    /** {@inheritDoc} Skipped below the reserve. */
    @Override
    public void compact(byte[] start, byte[] end) {
        if (reserveBytes == 0 || usableBytes() >= reserveBytes) {
            delegate.compact(start, end);
        }
    }

    @Override
    public Cursor range(byte[] start, byte[] end) {
        return delegate.range(start, end);
    }

    @Override
    public long sizeOnDiskBytes() {
        return delegate.sizeOnDiskBytes();
    }

    @Override
    public boolean isOpen() {
        return delegate.isOpen();
    }

    @Override
    public void close() throws IOException {
        delegate.close();
    }
}
