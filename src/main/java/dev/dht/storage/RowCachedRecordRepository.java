package dev.dht.storage;

import com.github.benmanes.caffeine.cache.Cache;
import com.github.benmanes.caffeine.cache.Caffeine;
import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * A {@link RecordRepository} with a row cache in front (Cassandra's term): the newest record of recently read
 * keys, tombstones included, in a Caffeine cache bounded by weight (key + value bytes + a fixed overhead per
 * entry). {@link #cached} answers hits without touching the disk, so a read that hits needs no hand-off to the
 * storage scheduler. As in Cassandra, reads fill the cache and writes only keep it current: a write replaces the
 * row of a key that is cached and adds none (why: docs/performance.md, "RowCachedRecordRepository").
 *
 * <p>Coherence: every change of the cache happens under the key's stripe lock, together with the write or the
 * read of the delegate it reflects, so a cached entry is always the delegate's current record for its key (a
 * reader that missed cannot put back a record that a concurrent writer has just replaced). Hits take no lock.
 *
 * <p>Blocking: {@link #get}, {@link #upsert}, {@link #purge}, {@link #compact}, {@link #range} and {@link #close}
 * call the delegate (disk I/O, storage scheduler or the tombstone GC thread only); {@link #cached} never blocks
 * and may run on an event loop.
 */
public final class RowCachedRecordRepository extends ForwardingRecordRepository {
    /** Bytes counted per entry besides key and value: the map node, the key buffer and the record object. */
    static final int ENTRY_OVERHEAD_BYTES = 96;

    private final Cache<ByteBuffer, Record> rows;
    private final KeyStripedLocks locks = new KeyStripedLocks();

    /**
     * Wraps {@code delegate}.
     *
     * @param capacityBytes most bytes the cached rows may weigh together; must be positive
     */
    public RowCachedRecordRepository(RecordRepository delegate, long capacityBytes) {
        super(delegate);
        if (capacityBytes <= 0) {
            throw new IllegalArgumentException("row cache capacity must be positive, was " + capacityBytes);
        }
        this.rows = Caffeine.newBuilder()
                .maximumWeight(capacityBytes)
                .weigher((ByteBuffer key, Record record) ->
                        key.remaining() + record.encodedSize() + ENTRY_OVERHEAD_BYTES)
                .executor(Runnable::run)
                .recordStats()
                .build();
    }

    /** The cache itself, for its metrics (hits, misses, evictions, size). */
    public Cache<ByteBuffer, Record> rows() {
        return rows;
    }

    /** {@inheritDoc} Never blocks: a lookup in memory only. */
    @Override
    public Record cached(byte[] key) {
        return rows.getIfPresent(ByteBuffer.wrap(key));
    }

    @Override
    public Record get(byte[] key) {
        Record hit = cached(key);
        if (hit != null) {
            return hit;
        }
        synchronized (locks.lockFor(key)) {
            Record stored = delegate().get(key);
            if (stored != null) {
                rows.put(ByteBuffer.wrap(key.clone()), stored);
            }
            return stored;
        }
    }

    /** {@inheritDoc} Replaces the key's cached row, if there is one, under the key's stripe lock. */
    @Override
    public boolean upsert(byte[] key, Record record) {
        synchronized (locks.lockFor(key)) {
            return changed(delegate().upsert(key, record), key, record);
        }
    }

    /** {@inheritDoc} Drops the key's cached row with it, under the key's stripe lock. */
    @Override
    public boolean purge(byte[] key, Record expected) {
        synchronized (locks.lockFor(key)) {
            return changed(delegate().purge(key, expected), key, null);
        }
    }

    /**
     * After a write of {@code key} that {@code applied} or not: a cached row becomes {@code record}, or is dropped
     * for null. Under the key's stripe lock. Returns {@code applied}.
     */
    private boolean changed(boolean applied, byte[] key, Record record) {
        if (applied && record != null) {
            rows.asMap().computeIfPresent(ByteBuffer.wrap(key), (cachedKey, cachedRow) -> record);
        } else if (applied) {
            rows.invalidate(ByteBuffer.wrap(key));
        }
        return applied;
    }

    /** Closes the delegate and drops every cached row. */
    @Override
    public void close() throws IOException {
        try {
            delegate().close();
        } finally {
            rows.invalidateAll();
        }
    }
}
