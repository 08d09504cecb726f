package dev.dht.node;

import java.time.Clock;
import java.time.Instant;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A node clock that never goes backwards: a hybrid logical clock (Kulkarni et al., "Logical Physical Clocks
 * and Consistent Snapshots in Globally Distributed Databases", 2014) packed into one long.
 *
 * <p>Bit layout of a timestamp: bits 63-16 hold wall-clock milliseconds since the epoch (timestamps stay
 * positive until about the year 6400), bits 15-0 a counter that orders events within one millisecond.
 * {@link #now()} returns {@code max(wall << 16, last + 1)}, so it is strictly increasing even when the wall clock
 * steps back or more than 65 536 events happen in one millisecond (the counter then carries into the millisecond
 * bits). {@link #observe(long)} merges a timestamp seen from another node, so that later local writes order after
 * it.
 *
 * <p>The node's clock is started by {@link NodeHeartbeat}, which persists a high-water mark ahead of it and
 * starts it above that mark after a restart, so it does not go backwards across restarts either. Thread-safe and
 * lock-free; never blocks.
 */
public final class HybridLogicalClock {
    private static final int COUNTER_BITS = 16;

    private final Clock wallClock;
    private final AtomicLong last = new AtomicLong();

    /** A clock over the system UTC wall clock. */
    public HybridLogicalClock() {
        this(Clock.systemUTC());
    }

    /** A clock over the given wall clock (tests pass a controllable one). */
    public HybridLogicalClock(Clock wallClock) {
        this.wallClock = wallClock;
    }

    /** A new timestamp, strictly greater than every timestamp this clock returned or observed before. */
    public long now() {
        long wall = wallClock.millis() << COUNTER_BITS;
        return last.updateAndGet(previous -> Math.max(wall, previous + 1));
    }

    /** The timestamp of wall-clock millisecond {@code millis} with a zero counter (inverse of {@link #millisOf}). */
    public static long timestampOf(long millis) {
        return millis << COUNTER_BITS;
    }

    /** Advances the clock to at least {@code remoteTimestamp} (the HLC receive rule). */
    public void observe(long remoteTimestamp) {
        last.accumulateAndGet(remoteTimestamp, Math::max);
    }

    /**
     * The latest timestamp this clock returned or observed (0 before the first); the next {@link #now()} is
     * greater. {@link NodeHeartbeat} persists a high-water mark above it.
     */
    public long latest() {
        return last.get();
    }

    /**
     * The wall clock's milliseconds since the epoch, without the counter: the time against which TTL expiries
     * (a record's expiry time) and tombstone ages are judged. Never blocks.
     */
    public long wallMillis() {
        return wallClock.millis();
    }

    /**
     * Nanoseconds until the wall clock reads a later millisecond than {@code millis} (at once: 0 or less), at the
     * wall clock's precision (whole milliseconds where it has no finer one). Never blocks.
     */
    public long nanosUntilAfter(long millis) {
        Instant now = wallClock.instant();
        long nowMillis = now.toEpochMilli();
        if (nowMillis > millis) {
            return 0;
        }
        return (millis - nowMillis) * 1_000_000 + 1_000_000 - now.getNano() % 1_000_000;
    }

    /** Wall-clock milliseconds encoded in a timestamp. */
    public static long millisOf(long timestamp) {
        return timestamp >>> COUNTER_BITS;
    }
}
