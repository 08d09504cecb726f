package dev.dht.storage;

import java.io.Closeable;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.iq80.leveldb.DB;
import org.iq80.leveldb.DBIterator;
import org.iq80.leveldb.Options;
import org.iq80.leveldb.ReadOptions;
import org.iq80.leveldb.Snapshot;
import org.iq80.leveldb.WriteBatch;
import org.iq80.leveldb.WriteOptions;

/**
 * {@link RecordRepository} on LevelDB: the key is the id's UTF-8 bytes, the value is {@link Record#encode()}.
 *
 * <p>Durability: every write goes to LevelDB's write-ahead log before it is acknowledged. With
 * {@code sync=false} the log write reaches the operating system (survives {@code kill -9} of the JVM, not a
 * power loss or kernel crash); with {@code sync=true} it is fsync'ed first (survives power loss too, at the
 * cost of one fsync per write).
 *
 * <p>Last write wins: {@link #upsert} reads the stored version and compares, unless the record's timestamp is
 * above every one stored in its key's stripe ({@link StoredTimestampBound}, whose file
 * {@value StoredTimestampBound#FILE_NAME} lives in the same directory), as a node's own writes normally are.
 *
 * <p>Blocking: all methods do disk I/O. {@link #upsert} serialises writers of the same key with striped locks
 * (read, compare, write must be atomic per key).
 */
public final class LevelDbRecordRepository implements RecordRepository {
    private final DB db;
    private final Path directory;
    private final WriteOptions writeOptions;
    private final KeyStripedLocks locks = new KeyStripedLocks();
    private final Set<SnapshotCursor> openCursors = ConcurrentHashMap.newKeySet();
    private final StoredTimestampBound timestampBound;
    private volatile boolean open = true;

    private LevelDbRecordRepository(DB db, Path directory, boolean sync) {
        this.db = db;
        this.directory = directory;
        this.writeOptions = new WriteOptions().sync(sync);
        this.timestampBound = StoredTimestampBound.open(directory, this::newestStoredTimestamp);
    }

    /** LevelDB's own memtable size, bytes: {@link #open(Path, StorageEngine, boolean, int)} with it. */
    public static final int DEFAULT_WRITE_BUFFER_BYTES = 4 << 20;

    /**
     * Opens (creating if missing) the database in {@code directory} with LevelDB's default memtable (4 MiB).
     *
     * @see #open(Path, StorageEngine, boolean, int)
     */
    public static LevelDbRecordRepository open(Path directory, StorageEngine engine, boolean sync) {
        return open(directory, engine, sync, DEFAULT_WRITE_BUFFER_BYTES);
    }

    /**
     * Opens (creating if missing) the database in {@code directory}. Blocks (disk I/O, log replay).
     *
     * @param sync             fsync every write (see class comment)
     * @param writeBufferBytes the memtable's size in bytes (LevelDB's {@code write_buffer_size}): a full memtable
     *                         becomes one level-0 table file. Up to two are held in memory at once, and the log
     *                         replayed at start-up after a crash is up to this long
     * @throws UncheckedIOException if the directory cannot be created or LevelDB cannot open it (for example
     *                              another process holds its lock), or the timestamp bound's file cannot be read
     *                              or written
     */
    public static LevelDbRecordRepository open(Path directory, StorageEngine engine, boolean sync, int writeBufferBytes) {
        try {
            Files.createDirectories(directory);
            Options options = new Options().createIfMissing(true).writeBufferSize(writeBufferBytes);
            DB db = engine.open(directory.toFile(), options);
            warmUpNativeCalls(db);
            try {
                return new LevelDbRecordRepository(db, directory, sync);
            } catch (RuntimeException e) {
                db.close();
                throw e;
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot open LevelDB in " + directory + ": " + e.getMessage(), e);
        }
    }

    /**
     * Runs each kind of native call once on the opening thread, before the storage threads may run them at once.
     * leveldbjni's glue (HawtJNI) caches the field IDs of its structs (slice, read and write options) on first use
     * without synchronization, keeping a JNI local class reference in a global; threads making their first call
     * together can use another thread's stale reference, and a node restarted after kill -9 into a load of
     * replica writes crashed with SIGSEGV in {@code jni_GetFieldID} from {@code NativeDB.get} on a storage thread
     * (seen in FaultsIT's kill -9 case). A get of the empty key, an empty batch write and a seek of an iterator touch every
     * struct the store uses and change nothing.
     */
    private static void warmUpNativeCalls(DB db) throws IOException {
        db.get(new byte[0]);
        try (WriteBatch empty = db.createWriteBatch()) {
            db.write(empty, new WriteOptions());
        }
        Snapshot snapshot = db.getSnapshot();
        try (snapshot; DBIterator iterator = db.iterator(new ReadOptions().snapshot(snapshot).fillCache(false))) {
            iterator.seek(new byte[0]);
            iterator.hasNext();
        }
    }

    @Override
    public Record get(byte[] key) {
        byte[] stored = db.get(key);
        return stored == null ? null : Record.decode(stored);
    }

    /**
     * {@inheritDoc} The stored version is read only if the record's timestamp is not above every timestamp stored
     * in the key's stripe ({@link StoredTimestampBound#newest(int)}); above it, the record wins whatever is stored.
     */
    @Override
    public boolean upsert(byte[] key, Record record) {
        int stripe = KeyStripedLocks.stripeOf(key);
        synchronized (locks.lock(stripe)) {
            if (record.timestamp() <= timestampBound.newest(stripe)) {
                byte[] stored = db.get(key);
                if (stored != null && !record.supersedesEncoded(stored)) {
                    return false;
                }
            }
            timestampBound.beforeStoring(stripe, record.timestamp());
            db.put(key, record.encode(), writeOptions);
            return true;
        }
    }

    /**
     * The largest timestamp of any stored record, 0 if none: a scan of every record, run once when a store
     * written without the timestamp bound's file is opened. Blocks (disk I/O of the whole store).
     */
    private long newestStoredTimestamp() {
        long newest = 0;
        try (DBIterator iterator = db.iterator(new ReadOptions().fillCache(false))) {
            for (iterator.seekToFirst(); iterator.hasNext(); ) {
                newest = Math.max(newest, Record.timestampOfEncoded(iterator.next().getValue()));
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot scan " + directory + ": " + e.getMessage(), e);
        }
        return newest;
    }

    @Override
    public boolean purge(byte[] key, Record expected) {
        synchronized (locks.lockFor(key)) {
            byte[] stored = db.get(key);
            if (stored == null || !Record.decode(stored).equals(expected)) {
                return false;
            }
            db.delete(key, writeOptions);
            return true;
        }
    }

    /** {@inheritDoc} The pure-Java engine cannot compact a range (it compacts on its own as it writes): no-op there. */
    @Override
    public void compact(byte[] start, byte[] end) {
        try {
            db.compactRange(start, end);
        } catch (UnsupportedOperationException notInThisEngine) {
            // iq80's DbImpl: "Not yet implemented"; its background compaction still reclaims the space over time
        }
    }

    @Override
    public Cursor range(byte[] start, byte[] end) {
        Snapshot snapshot = db.getSnapshot();
        DBIterator iterator = null;
        try {
            iterator = db.iterator(new ReadOptions().snapshot(snapshot).fillCache(false));
            iterator.seek(start);
        } catch (RuntimeException e) {
            closeQuietly(iterator, e);
            closeQuietly(snapshot, e);
            throw e;
        }
        SnapshotCursor cursor = new SnapshotCursor(snapshot, iterator, end, openCursors::remove);
        openCursors.add(cursor);
        return cursor;
    }

    @Override
    public long sizeOnDiskBytes() {
        try (Stream<Path> files = Files.list(directory)) {
            return files.mapToLong(path -> path.toFile().length()).sum();
        } catch (IOException e) {
            return -1;
        }
    }

    @Override
    public boolean isOpen() {
        return open;
    }

    /**
     * Closes every open cursor (a stream still reading fails as if cut off), then the database, even if closing
     * a cursor failed (that failure is rethrown afterwards).
     */
    @Override
    public void close() throws IOException {
        open = false;
        RuntimeException cursorFailure = null;
        for (SnapshotCursor cursor : openCursors) {
            try {
                cursor.close();
            } catch (RuntimeException e) {
                cursorFailure = e;
            }
        }
        db.close();
        if (cursorFailure != null) {
            throw cursorFailure;
        }
    }

    private static void closeQuietly(Closeable resource, RuntimeException primary) {
        if (resource == null) {
            return;
        }
        try {
            resource.close();
        } catch (IOException | RuntimeException e) {
            primary.addSuppressed(e);
        }
    }

    /** A cursor over a snapshot; next() and close() are synchronised so a cancel cannot free native memory mid-read. */
    private static final class SnapshotCursor implements Cursor {
        private final Snapshot snapshot;
        private final DBIterator iterator;
        private final byte[] end;
        private final Consumer<SnapshotCursor> onClose;
        private boolean closed;

        SnapshotCursor(Snapshot snapshot, DBIterator iterator, byte[] end, Consumer<SnapshotCursor> onClose) {
            this.snapshot = snapshot;
            this.iterator = iterator;
            this.end = end;
            this.onClose = onClose;
        }

        @Override
        public synchronized boolean hasNext() {
            if (closed) {
                throw new IllegalStateException("range cursor closed (the store is closing)");
            }
            if (!iterator.hasNext()) {
                return false;
            }
            return end == null || Arrays.compareUnsigned(iterator.peekNext().getKey(), end) < 0;
        }

        @Override
        public synchronized KeyedRecord next() {
            if (!hasNext()) {
                throw new NoSuchElementException("end of range");
            }
            Map.Entry<byte[], byte[]> entry = iterator.next();
            return new KeyedRecord(entry.getKey(), Record.decode(entry.getValue()));
        }

        /** Reads the timestamp of the stored bytes first: an older record is neither decoded nor copied again. */
        @Override
        public synchronized KeyedRecord nextIfStampedSince(long minTimestamp) {
            if (!hasNext()) {
                throw new NoSuchElementException("end of range");
            }
            Map.Entry<byte[], byte[]> entry = iterator.next();
            if (minTimestamp > 0 && Record.timestampOfEncoded(entry.getValue()) < minTimestamp) {
                return null;
            }
            return new KeyedRecord(entry.getKey(), Record.decode(entry.getValue()));
        }

        @Override
        public synchronized void close() {
            if (closed) {
                return;
            }
            closed = true;
            onClose.accept(this);
            try {
                iterator.close();
                snapshot.close();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }
}
