package dev.dht.admission;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

/**
 * The queueing delay of a node's admitted client requests, and whether it is a standing queue: CoDel's test
 * (K. Nichols, V. Jacobson, "Controlling Queue Delay", ACM Queue 10(5), 2012) as Facebook's RPC servers apply it
 * to requests (Wangle/Thrift, "adaptive LIFO and CoDel"). A request's sojourn runs from its admission to its
 * release (its last answer byte written, or its connection closed); the queue stands when the <em>minimum</em>
 * sojourn over the last {@link #INTERVAL} was above the target. The sojourn includes the request's service, so the
 * target ({@code dht.max-queue-delay}) must lie well above a healthy request's time and well below
 * {@code dht.replica-timeout}.
 *
 * <p>The verdict changes only when requests complete: an interval ends with the first completion at least
 * {@link #INTERVAL} after it began, and a node that completes nothing keeps its last verdict. Why the minimum:
 * docs/operations.md, "QueueDelay".
 *
 * <p>Lock-free: a clock read and at most one compare-and-set per completion; safe on any thread, never blocks.
 */
public final class QueueDelay {
    /** How long the minimum sojourn must stay above the target to count as a standing queue: CoDel's 100 ms. */
    public static final Duration INTERVAL = Duration.ofMillis(100);

    /** No sample yet in an interval. */
    private static final long NONE = Long.MAX_VALUE;

    private final long targetNanos;
    private final long intervalNanos;
    private final LongSupplier clock;
    /** Clock reading at which the current interval began. */
    private final AtomicLong intervalStart;
    /** Least sojourn completed in the current interval (ns), {@link #NONE} if none yet. */
    private final AtomicLong intervalMinimum = new AtomicLong(NONE);
    /** Least sojourn of the last complete interval (ns), {@link #NONE} before the first one ended. */
    private volatile long lastMinimum = NONE;

    /**
     * @param target   the sojourn that the minimum over an interval must exceed for a standing queue; positive
     * @param interval how long the minimum is taken over; positive
     * @param clock    nanosecond clock, {@code System::nanoTime} outside tests
     * @throws IllegalArgumentException if {@code target} or {@code interval} is not positive
     */
    public QueueDelay(Duration target, Duration interval, LongSupplier clock) {
        if (target.isNegative() || target.isZero()) {
            throw new IllegalArgumentException("target must be positive, was " + target);
        }
        if (interval.isNegative() || interval.isZero()) {
            throw new IllegalArgumentException("interval must be positive, was " + interval);
        }
        this.targetNanos = target.toNanos();
        this.intervalNanos = interval.toNanos();
        this.clock = clock;
        this.intervalStart = new AtomicLong(clock.getAsLong());
    }

    /** The clock reading (ns) to pass to {@link #completed(long)} when the request completes. */
    public long now() {
        return clock.getAsLong();
    }

    /**
     * Counts one admitted request that completed (answered or abandoned), and ends the current interval if it
     * lasted {@link #INTERVAL}.
     *
     * @param admittedNanos {@link #now()} when the request was admitted
     */
    public void completed(long admittedNanos) {
        long now = clock.getAsLong();
        long sojourn = Math.max(0, now - admittedNanos);
        long start = intervalStart.get();
        if (now - start >= intervalNanos && intervalStart.compareAndSet(start, now)) {
            lastMinimum = Math.min(intervalMinimum.getAndSet(NONE), sojourn);
            return;
        }
        long minimum = intervalMinimum.get();
        while (sojourn < minimum && !intervalMinimum.compareAndSet(minimum, sojourn)) {
            minimum = intervalMinimum.get();
        }
    }

    /** Whether the least sojourn of the last complete interval was above the target: a standing queue. */
    public boolean standing() {
        long minimum = lastMinimum;
        return minimum != NONE && minimum > targetNanos;
    }

    /** The least sojourn (ns) of the last complete interval; 0 before the first interval ended. */
    public long minimumNanos() {
        long minimum = lastMinimum;
        return minimum == NONE ? 0 : minimum;
    }
}
