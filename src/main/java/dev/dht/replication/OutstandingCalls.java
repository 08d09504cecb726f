package dev.dht.replication;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.LongSupplier;

/**
 * The calls to one peer still waiting for an answer, and since when the peer has answered none of them: tells a
 * stalled peer (one that takes calls but answers nothing, as a process frozen by SIGSTOP, a long GC pause or a
 * saturated disk does) long before any of its calls fails at {@code dht.replica-timeout}. A peer is stalled while
 * at least one call to it is outstanding and it has given no answer for longer than the stall threshold
 * ({@code dht.speculative-retry-delay}); the time counts from its last answer, or from when a call went out to it
 * while none was outstanding. Its first answer ends the stall. A peer that answers every call, but late (a slow
 * link), is told by a smoothed answer time instead ({@link #slow}).
 *
 * <p>After Finagle's failure accrual and aperture balancer, which count outstanding requests per endpoint, and
 * Cassandra's {@code DynamicEndpointSnitch}; why: docs/replication-and-repair.md, "OutstandingCalls".
 *
 * <p>Thread-safe and lock-free: one atomic counter and two volatile fields; a call costs two atomic updates
 * and one {@link System#nanoTime} read (two when it is answered). Never blocks.
 */
final class OutstandingCalls {
    private final long stallNanos;
    private final LongSupplier nanoClock;
    private final AtomicInteger outstanding = new AtomicInteger();
    /** Nano time of the peer's last answer, or of the last call sent while none was outstanding. */
    private volatile long progressNanos;
    /** Smoothed time to answer, ns ({@link #answered(long)}); 0 before the first timed answer. */
    private volatile long smoothedAnswerNanos;

    /** @param stallThreshold how long a peer with calls outstanding may answer nothing before it counts as stalled */
    OutstandingCalls(Duration stallThreshold) {
        this(stallThreshold, System::nanoTime);
    }

    /** @param nanoClock monotonic time in ns ({@link System#nanoTime} but in tests) */
    OutstandingCalls(Duration stallThreshold, LongSupplier nanoClock) {
        if (stallThreshold.isNegative() || stallThreshold.isZero()) {
            throw new IllegalArgumentException("stall threshold must be positive, was " + stallThreshold);
        }
        this.stallNanos = stallThreshold.toNanos();
        this.nanoClock = nanoClock;
        this.progressNanos = nanoClock.getAsLong();
    }

    /** A call to the peer went out. */
    void started() {
        if (outstanding.getAndIncrement() == 0) {
            progressNanos = nanoClock.getAsLong(); // nothing was outstanding: the stall clock starts now
        }
    }

    /** The peer answered a call (any status): it is not stalled. Call before {@link #ended}. */
    void answered() {
        progressNanos = nanoClock.getAsLong();
    }

    /**
     * The peer answered a call that took {@code callNanos} from sending to answer: as {@link #answered()}, and
     * the sample moves the smoothed answer time ({@link #slow}) an eighth of the way towards it, as TCP smooths
     * round-trip times (SRTT, RFC 6298, alpha 1/8). Concurrent answers may overwrite each other's update: a lost
     * sample, never a wrong one.
     */
    void answered(long callNanos) {
        answered();
        long smoothed = smoothedAnswerNanos;
        smoothedAnswerNanos = smoothed == 0 ? Math.max(1, callNanos) : smoothed + (callNanos - smoothed) / 8;
    }

    /** A call ended: answered, failed (timeout, connection error) or cancelled. */
    void ended() {
        outstanding.decrementAndGet();
    }

    /** True while calls are outstanding and the peer has answered none for longer than the stall threshold. */
    boolean stalled() {
        return outstanding.get() > 0 && nanoClock.getAsLong() - progressNanos > stallNanos;
    }

    /**
     * True while the peer's smoothed answer time is above the stall threshold: it answers, but later than a read
     * would wait before asking another replica, as a peer behind a slow link does (a 200-ms link answers every call
     * in 400 ms, so it is seldom {@link #stalled}). Its samples keep coming while it ranks low, from the writes
     * every replica gets and from speculative reads, so it ranks up again once it answers fast.
     */
    boolean slow() {
        return smoothedAnswerNanos > stallNanos;
    }

    /** Calls sent and not yet ended. */
    int outstanding() {
        return outstanding.get();
    }
}
