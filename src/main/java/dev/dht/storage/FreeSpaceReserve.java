package dev.dht.storage;

import dev.dht.failure.OverloadReason;
import dev.dht.failure.OverloadedException;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.FileStore;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * The usable space a node's data dir must keep ({@code dht.storage.min-free-space}): writes to LevelDB (records,
 * hints) first {@link #require()} it and are refused with {@link OverloadedException} (disk full, answered 503)
 * below it. Why: leveldbjni writes through memory-mapped regions, and on a full file system the first write into
 * such a page kills the process with SIGBUS; no {@link IOException} ever reaches Java, so the only clean answer is
 * not to write when the disk is nearly full. What the reserve must hold: docs/operations.md, "FreeSpaceReserve".
 *
 * <p>A check asks the file system ({@code statvfs}, microseconds): blocking, so it runs where the write runs
 * (storage scheduler, hints thread). While the last answer showed at least {@link #FAR_FROM_RESERVE_BYTES} above
 * the reserve, checks within {@link #RECHECK_NANOS} of it reuse that answer instead of asking again; nearer the
 * reserve every check asks the file system, so a filling disk is refused promptly. Thread-safe.
 */
public final class FreeSpaceReserve {
    /** No reserve: every check passes. */
    public static final FreeSpaceReserve NONE = new FreeSpaceReserve(null, 0);

    /** Headroom above the reserve, in bytes, from which a recent answer of the file system is reused. */
    static final long FAR_FROM_RESERVE_BYTES = 1L << 30;
    /** How long such an answer is reused, in ns (10 ms). */
    static final long RECHECK_NANOS = TimeUnit.MILLISECONDS.toNanos(10);

    private final FileStore fileStore;
    private final long reserveBytes;
    private final LongSupplier usableSpace;
    private final LongSupplier nanoClock;
    /**
     * When the last answer far from the reserve came ({@link #nanoClock}); only meaningful while
     * {@link #farFromReserve}.
     */
    private volatile long farAnswerNanos;
    private volatile boolean farFromReserve;

    private FreeSpaceReserve(FileStore fileStore, long reserveBytes) {
        this.fileStore = fileStore;
        this.reserveBytes = reserveBytes;
        this.usableSpace = this::usableBytes;
        this.nanoClock = System::nanoTime;
    }

    /** A reserve over a given source of usable bytes and clock (ns), for tests. */
    FreeSpaceReserve(long reserveBytes, LongSupplier usableSpace, LongSupplier nanoClock) {
        this.fileStore = null;
        this.reserveBytes = reserveBytes;
        this.usableSpace = usableSpace;
        this.nanoClock = nanoClock;
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

    /** True while at least the reserve is usable. Blocking (at most one {@code statvfs}, see the class comment). */
    public boolean isKept() {
        return recentlyFarFromReserve() || check() >= reserveBytes;
    }

    /**
     * Returns if at least the reserve is usable. Blocking (at most one {@code statvfs}, see the class comment).
     *
     * @throws OverloadedException with {@link OverloadReason#DISK_FULL} below the reserve (answered 503)
     */
    public void require() {
        if (recentlyFarFromReserve()) {
            return;
        }
        long usable = check();
        if (usable < reserveBytes) {
            throw new OverloadedException(OverloadReason.DISK_FULL, "storage full: " + usable
                    + " bytes usable, below the reserve of " + reserveBytes
                    + " bytes (dht.storage.min-free-space); writes resume when space is freed");
        }
    }

    private boolean recentlyFarFromReserve() {
        return reserveBytes == 0 || (farFromReserve && nanoClock.getAsLong() - farAnswerNanos < RECHECK_NANOS);
    }

    /** Asks the file system; remembers when the answer was far from the reserve. */
    private long check() {
        long usable = usableSpace.getAsLong();
        boolean far = usable - reserveBytes >= FAR_FROM_RESERVE_BYTES;
        if (far) {
            farAnswerNanos = nanoClock.getAsLong();
        }
        farFromReserve = far;
        return usable;
    }
}
