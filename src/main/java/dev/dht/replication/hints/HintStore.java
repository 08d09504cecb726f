package dev.dht.replication.hints;

import dev.dht.storage.FreeSpaceReserve;
import dev.dht.storage.Record;
import dev.dht.storage.StorageEngine;
import java.io.Closeable;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import org.iq80.leveldb.DB;
import org.iq80.leveldb.DBIterator;
import org.iq80.leveldb.Options;
import org.iq80.leveldb.WriteBatch;
import org.iq80.leveldb.WriteOptions;

/**
 * The coordinator's durable hints: a LevelDB of its own (in {@code <dht.data-dir>/hints}), apart from the records,
 * so hints never mix with data, ranges or the row cache. A stored hint survives a restart and {@code kill -9} of the
 * JVM (it is in LevelDB's write-ahead log before {@link #add} returns, as records are). Layout, the key sorting a
 * peer's hints oldest first:
 * <pre>
 *   key   = peer name length (2 bytes, big-endian) | peer name (UTF-8) | sequence (8 bytes, big-endian)
 *   value = record key length (4 bytes, big-endian) | record key | {@link Record#encode()}
 * </pre>
 * The sequence is {@code currentTimeMillis << 16} or one more than the last one, whichever is larger, so it grows
 * across restarts as long as the wall clock does not go back by more than the hints stored since.
 *
 * <p>Blocking: every method but the counters ({@link #pending}; {@link #sizeBytes()}, the keys and values kept, not
 * the LevelDB files) does disk I/O, on the hints thread ({@link HintedHandoff}); the counters never block.
 */
public final class HintStore implements Closeable {
    private static final int SEQUENCE_BYTES = 8;
    private static final int SEQUENCE_TIME_SHIFT = 16;
    /** Hints deleted per LevelDB write by {@link #removePeersOtherThan}. */
    static final int REMOVE_BATCH = 10_000;

    private final DB db;
    private final WriteOptions writeOptions;
    private final Map<String, LongAdder> pending = new ConcurrentHashMap<>();
    private final LongAdder sizeBytes = new LongAdder();
    private final AtomicLong lastSequence = new AtomicLong();
    private final FreeSpaceReserve reserve;

    private HintStore(DB db, boolean sync, FreeSpaceReserve reserve) {
        this.db = db;
        this.writeOptions = new WriteOptions().sync(sync);
        this.reserve = reserve;
    }

    /**
     * Opens (creating if missing) the hint store in {@code directory} and counts the hints it holds (one pass
     * over the store; start-up only).
     *
     * @param sync fsync every change, as {@code dht.storage.sync}
     * @throws UncheckedIOException if the directory cannot be created or LevelDB cannot open it
     */
    public static HintStore open(Path directory, StorageEngine engine, boolean sync) {
        return open(directory, engine, sync, FreeSpaceReserve.NONE);
    }

    /**
     * Like {@link #open(Path, StorageEngine, boolean)}; {@link #add} and {@link #remove} then write only while
     * {@code reserve} is kept, and throw {@link dev.dht.failure.OverloadedException} (disk full, nothing written)
     * below it.
     */
    public static HintStore open(Path directory, StorageEngine engine, boolean sync, FreeSpaceReserve reserve) {
        DB db;
        try {
            Files.createDirectories(directory);
            db = engine.open(directory.toFile(), new Options().createIfMissing(true));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot open the hint store in " + directory + ": " + e.getMessage(), e);
        }
        HintStore store = new HintStore(db, sync, reserve);
        try (DBIterator iterator = db.iterator()) {
            for (iterator.seekToFirst(); iterator.hasNext(); ) {
                Map.Entry<byte[], byte[]> entry = iterator.next();
                store.counted(peerOf(entry.getKey()), entry.getKey().length + entry.getValue().length);
                store.lastSequence.accumulateAndGet(sequenceOf(entry.getKey()), Math::max);
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read the hint store in " + directory + ": " + e.getMessage(), e);
        }
        return store;
    }

    /** Stores a hint of {@code record} under {@code key} for {@code peer}; returns the bytes it takes. Blocking. */
    public long add(String peer, byte[] key, Record record) {
        reserve.require();
        long sequence = lastSequence.accumulateAndGet(System.currentTimeMillis() << SEQUENCE_TIME_SHIFT,
                (last, now) -> Math.max(last + 1, now));
        byte[] hintKey = hintKey(peer, sequence);
        byte[] value = ByteBuffer.allocate(Integer.BYTES + key.length + record.encodedSize())
                .putInt(key.length).put(key).put(record.encode()).array();
        db.put(hintKey, value, writeOptions);
        long bytes = hintKey.length + value.length;
        counted(peer, bytes);
        return bytes;
    }

    /** Bytes a hint of {@code record} under {@code key} for {@code peer} takes in {@link #sizeBytes()}. */
    public static long sizeOf(String peer, byte[] key, Record record) {
        return Short.BYTES + peer.getBytes(StandardCharsets.UTF_8).length + SEQUENCE_BYTES
                + Integer.BYTES + key.length + record.encodedSize();
    }

    /** Up to {@code limit} hints for {@code peer}, oldest first. Blocking. */
    public List<Hint> oldest(String peer, int limit) {
        byte[] prefix = peerPrefix(peer);
        List<Hint> hints = new ArrayList<>(Math.min(limit, 1024));
        try (DBIterator iterator = db.iterator()) {
            for (iterator.seek(prefix); iterator.hasNext() && hints.size() < limit; ) {
                Map.Entry<byte[], byte[]> entry = iterator.next();
                byte[] hintKey = entry.getKey();
                if (hintKey.length != prefix.length + SEQUENCE_BYTES
                        || !Arrays.equals(hintKey, 0, prefix.length, prefix, 0, prefix.length)) {
                    break;
                }
                ByteBuffer value = ByteBuffer.wrap(entry.getValue());
                byte[] key = new byte[value.getInt()];
                value.get(key);
                Record record = Record.decode(entry.getValue(), value.position(), value.remaining());
                hints.add(new Hint(peer, sequenceOf(hintKey), key, record));
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return hints;
    }

    /** Deletes {@code hints} (replayed), in one LevelDB write. Blocking. */
    public void remove(List<Hint> hints) {
        if (hints.isEmpty()) {
            return;
        }
        reserve.require();
        long bytes = 0;
        try (WriteBatch batch = db.createWriteBatch()) {
            for (Hint hint : hints) {
                byte[] hintKey = hintKey(hint.peer(), hint.sequence());
                batch.delete(hintKey);
                bytes += hintKey.length + Integer.BYTES + hint.key().length + hint.record().encodedSize();
            }
            db.write(batch, writeOptions);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        for (Hint hint : hints) {
            uncount(hint.peer());
        }
        sizeBytes.add(-bytes);
    }

    /**
     * Deletes every hint whose peer is not in {@code peers} (a peer removed from the cluster view: nothing would
     * ever replay them) and returns how many there were. One pass over the store, deleting in write batches of
     * {@link #REMOVE_BATCH}. Blocking; at start-up and with each view this node adopts, while hints are stored
     * and replayed.
     *
     * @throws dev.dht.failure.OverloadedException below the free-space reserve (disk full); nothing is deleted from
     *                                             then on
     */
    public long removePeersOtherThan(Set<String> peers) {
        long removed = 0;
        List<Map.Entry<byte[], byte[]>> doomed = new ArrayList<>();
        try (DBIterator iterator = db.iterator()) {
            for (iterator.seekToFirst(); iterator.hasNext(); ) {
                Map.Entry<byte[], byte[]> entry = iterator.next();
                if (!peers.contains(peerOf(entry.getKey()))) {
                    doomed.add(entry);
                    if (doomed.size() == REMOVE_BATCH) {
                        removed += delete(doomed);
                    }
                }
            }
            removed += delete(doomed);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        pending.keySet().retainAll(peers);
        return removed;
    }

    /** Deletes the hints {@code entries} in one write, uncounts them and clears the list; returns how many. */
    private int delete(List<Map.Entry<byte[], byte[]>> entries) throws IOException {
        if (entries.isEmpty()) {
            return 0;
        }
        reserve.require();
        try (WriteBatch batch = db.createWriteBatch()) {
            entries.forEach(entry -> batch.delete(entry.getKey()));
            db.write(batch, writeOptions);
        }
        for (Map.Entry<byte[], byte[]> entry : entries) {
            uncount(peerOf(entry.getKey()));
            sizeBytes.add(-(entry.getKey().length + entry.getValue().length));
        }
        int count = entries.size();
        entries.clear();
        return count;
    }

    /** Hints kept for {@code peer}. Any thread. */
    public long pending(String peer) {
        LongAdder count = pending.get(peer);
        return count == null ? 0 : count.sum();
    }

    /** Bytes of the hints kept (keys and values). Any thread. */
    public long sizeBytes() {
        return sizeBytes.sum();
    }

    @Override
    public void close() throws IOException {
        db.close();
    }

    /**
     * One hint of {@code peer} fewer. Its counter may be gone: {@link #removePeersOtherThan} drops a removed peer's
     * counter while a write coordinated under the view before may still store (and count) a hint for it.
     */
    private void uncount(String peer) {
        LongAdder count = pending.get(peer);
        if (count != null) {
            count.decrement();
        }
    }

    private void counted(String peer, long bytes) {
        pending.computeIfAbsent(peer, ignored -> new LongAdder()).increment();
        sizeBytes.add(bytes);
    }

    private static byte[] peerPrefix(String peer) {
        byte[] name = peer.getBytes(StandardCharsets.UTF_8);
        return ByteBuffer.allocate(Short.BYTES + name.length).putShort((short) name.length).put(name).array();
    }

    private static byte[] hintKey(String peer, long sequence) {
        byte[] prefix = peerPrefix(peer);
        return ByteBuffer.allocate(prefix.length + SEQUENCE_BYTES).put(prefix).putLong(sequence).array();
    }

    private static String peerOf(byte[] hintKey) {
        int length = ByteBuffer.wrap(hintKey).getShort() & 0xFFFF;
        return new String(hintKey, Short.BYTES, length, StandardCharsets.UTF_8);
    }

    private static long sequenceOf(byte[] hintKey) {
        return ByteBuffer.wrap(hintKey, hintKey.length - SEQUENCE_BYTES, SEQUENCE_BYTES).getLong();
    }
}
