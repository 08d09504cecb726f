package dev.dht.storage;

import java.io.Closeable;
import java.util.Iterator;

/**
 * Persistent map from key bytes to the newest {@link Record} known for that key.
 *
 * <p>Every method may block on disk I/O: call them only from the storage scheduler ({@link StorageScheduler}) or
 * the tombstone GC's own thread ({@link TombstoneCollector}), never from a Netty event loop. Implementations are
 * thread-safe.
 */
public interface RecordRepository extends Closeable {

    /** The stored record for {@code key} (possibly a tombstone), or {@code null} if the key was never written. */
    Record get(byte[] key);

    /**
     * The stored record for {@code key} if it is in memory, without I/O; {@code null} means "ask {@link #get}"
     * (a miss, not "never written"). Unlike the other methods it never blocks and may be called from an event
     * loop. This default keeps nothing in memory.
     */
    default Record cached(byte[] key) {
        return null;
    }

    /**
     * Stores {@code record} unless the stored record for {@code key} supersedes it or is the same version
     * ({@link Record#newest}); an older write arriving late therefore never overwrites a newer one.
     *
     * @return true if the record was written, false if the stored one was kept
     */
    boolean upsert(byte[] key, Record record);

    /**
     * Deletes {@code key} if its stored record is still {@code expected} (the same version, {@link Record#equals});
     * a record written since {@code expected} was read is kept. Tombstone GC ({@link TombstoneCollector}) uses it,
     * so a purge never removes a newer write.
     *
     * @return true if the key was deleted
     */
    boolean purge(byte[] key, Record expected);

    /**
     * Compacts the store's files holding keys in {@code [start, end]} (both inclusive; null = unbounded), so the
     * space of purged records comes back. May take seconds; a no-op where the engine cannot compact a range.
     */
    void compact(byte[] start, byte[] end);

    /**
     * Opens a cursor over keys in {@code [start, end)} in unsigned byte order, over a consistent snapshot.
     * Tombstones are included. The caller must close the cursor (it releases the snapshot and the iterator).
     *
     * @param end exclusive upper bound, or {@code null} for no bound
     */
    Cursor range(byte[] start, byte[] end);

    /** Approximate size on disk in bytes of all stored data. */
    long sizeOnDiskBytes();

    /** True while the store is open and usable. */
    boolean isOpen();

    /**
     * A closeable iterator over a range. {@link #close()} may race with {@link #next()} (a cancel from another
     * thread). Once closed, {@link #hasNext()} throws {@link IllegalStateException}, so a stream whose cursor was
     * closed under it (the store shutting down) fails instead of ending as if complete.
     */
    interface Cursor extends Iterator<KeyedRecord>, Closeable {
        @Override
        void close();

        /**
         * The next record if its timestamp is at least {@code minTimestamp}, else null (the cursor moves past it
         * either way). An implementation may read the timestamp alone and skip decoding the rest, as an incremental
         * backup's scan skips most of a store.
         *
         * @throws java.util.NoSuchElementException at the end of the range
         */
        default KeyedRecord nextIfStampedSince(long minTimestamp) {
            KeyedRecord next = next();
            return next.record().timestamp() >= minTimestamp ? next : null;
        }
    }
}
