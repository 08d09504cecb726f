package dev.dht.storage;

import dev.dht.node.DurableFile;
import dev.dht.node.HybridLogicalClock;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.LongSupplier;

/**
 * Upper bounds of the timestamps of the records a store holds: one per key stripe ({@link KeyStripedLocks}) in
 * memory, and one for the whole store, ahead of them, in a file beside it. A write above its key's stripe's bound
 * supersedes whatever the store holds for the key ({@link Record#newest}), so it is stored without a read first.
 *
 * <p>{@link #newest(int)} is the largest timestamp stored in the stripe since the store was opened, or, just after
 * opening, the bound persisted before. {@link #beforeStoring} rewrites the file (fsync'ed, {@link DurableFile}) to
 * {@link #MARGIN} above a timestamp before a record of it may be stored above the persisted bound, so after a
 * crash ({@code kill -9} included) the file still bounds every record on disk. Why a bound per stripe, and why
 * the file is rewritten ahead of need: docs/replication-and-repair.md, "StoredTimestampBound".
 *
 * <p>Thread-safety: a stripe's bound is read and raised only under that stripe's monitor
 * ({@link KeyStripedLocks#lock}), which the caller holds; the file's bound is shared and thread-safe. {@link #open}
 * and {@link #beforeStoring} may block on disk I/O (storage threads only); {@link #newest(int)} never blocks.
 */
final class StoredTimestampBound {
    /** The bound file's name, in the store's directory. */
    static final String FILE_NAME = "dht-timestamp-bound";
    /** How far above the newest stored timestamp the persisted bound is set when it is rewritten. */
    static final Duration MARGIN = Duration.ofSeconds(10);

    private static final long MARGIN_TIMESTAMP = HybridLogicalClock.timestampOf(MARGIN.toMillis());
    private static final String LINE_PREFIX = "timestamp-bound ";

    private final Path file;
    /** Per stripe; guarded by the stripe's monitor, held by every caller. */
    private final long[] newest = new long[KeyStripedLocks.STRIPES];
    private final ReentrantLock rewriting = new ReentrantLock();
    private volatile long persisted;

    private StoredTimestampBound(Path file, long persisted) {
        this.file = file;
        this.persisted = persisted;
        Arrays.fill(newest, persisted);
    }

    /**
     * Reads the bound persisted in {@code directory}. Without a file (a new store, or one written by a node that
     * did not keep the bound) it asks {@code newestStored} for the largest timestamp the store holds (a scan of
     * every record, once) and persists that. Blocks on disk I/O.
     *
     * @throws UncheckedIOException if the file cannot be read, parsed or written
     */
    static StoredTimestampBound open(Path directory, LongSupplier newestStored) {
        Path file = directory.resolve(FILE_NAME);
        if (Files.exists(file)) {
            return new StoredTimestampBound(file, read(file));
        }
        StoredTimestampBound bound = new StoredTimestampBound(file, newestStored.getAsLong());
        bound.write(bound.persisted);
        return bound;
    }

    /**
     * The largest timestamp stored in {@code stripe} ({@link KeyStripedLocks#stripeOf}) since the store was opened,
     * or the persisted bound of what the store held before; a record of the stripe with a higher timestamp
     * supersedes every stored record of its key. Call it under the stripe's monitor. Never blocks.
     */
    long newest(int stripe) {
        return newest[stripe];
    }

    /**
     * Raises the bound of {@code stripe} to {@code timestamp}; call it before storing a record of that timestamp,
     * under the stripe's monitor, so that no other writer of the key checks {@link #newest(int)} in between. The
     * monitor also publishes the raised bound to the next writer of the stripe. Blocks on one fsync when
     * {@code timestamp} is above the persisted bound (and, now and then, for the writer that rewrites the file
     * ahead of need).
     *
     * @throws UncheckedIOException if the file must be rewritten and cannot be; the record must then not be stored
     */
    void beforeStoring(int stripe, long timestamp) {
        if (timestamp > persisted - MARGIN_TIMESTAMP / 2) {
            persistAbove(timestamp);
        }
        newest[stripe] = Math.max(newest[stripe], timestamp);
    }

    private void persistAbove(long timestamp) {
        if (timestamp > persisted) {
            rewriting.lock();
        } else if (!rewriting.tryLock()) {
            return;
        }
        try {
            if (timestamp > persisted - MARGIN_TIMESTAMP / 2) {
                long raised = timestamp > Long.MAX_VALUE - MARGIN_TIMESTAMP ? Long.MAX_VALUE : timestamp + MARGIN_TIMESTAMP;
                write(raised);
                persisted = raised;
            }
        } finally {
            rewriting.unlock();
        }
    }

    private void write(long value) {
        try {
            DurableFile.replace(file, (LINE_PREFIX + value + "\n").getBytes(StandardCharsets.US_ASCII));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + file + ": " + e.getMessage(), e);
        }
    }

    private static long read(Path file) {
        try {
            String line = Files.readString(file, StandardCharsets.US_ASCII).trim();
            if (!line.startsWith(LINE_PREFIX)) {
                throw new IOException("expected a line \"" + LINE_PREFIX + "<timestamp>\"");
            }
            long value = Long.parseLong(line.substring(LINE_PREFIX.length()));
            if (value < 0) {
                throw new IOException("negative timestamp " + value);
            }
            return value;
        } catch (IOException | NumberFormatException e) {
            throw new UncheckedIOException("cannot read " + file + ": " + e.getMessage(),
                    e instanceof IOException io ? io : new IOException(e));
        }
    }
}
