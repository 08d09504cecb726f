package dev.dht.admission;

import dev.dht.failure.OverloadReason;
import dev.dht.failure.OverloadedException;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The request-body bytes one node holds in flight, bounded by {@code dht.max-in-flight-bytes} (after Cassandra's
 * {@code native_transport_max_concurrent_requests_in_bytes}): {@link AdmissionHandler} reserves a client request's
 * declared body (its Content-Length) when it admits the request, or a chunked body's bytes as they arrive, and
 * gives them back when the request ends, however it ends. A body the limit has no room for is refused with
 * {@link OverloadReason#BODY_MEMORY} (503 with {@code Retry-After}) before it is buffered, so request bodies
 * never take more heap than the limit (and the node's copies of them a small multiple of it).
 *
 * <p>A request counts at most {@link #maxBodyBytes()} ({@code dht.max-value-size}): a larger body is refused with
 * 413 and never buffered. The limit is at least that large, so a body that fits the value size is refused only
 * while others are in flight. Lock-free; safe on any thread (the event loops), never blocks.
 */
public final class BodyMemory {
    private final long limitBytes;
    private final long maxBodyBytes;
    private final AtomicLong inFlight = new AtomicLong();

    /**
     * @param limitBytes   request-body bytes that may be in flight at once ({@code dht.max-in-flight-bytes})
     * @param maxBodyBytes the largest body that is buffered ({@code dht.max-value-size}); at most {@code limitBytes}
     * @throws IllegalArgumentException if {@code limitBytes} is not positive, {@code maxBodyBytes} is negative or
     *                                  above {@code limitBytes}
     */
    public BodyMemory(long limitBytes, long maxBodyBytes) {
        if (limitBytes < 1) {
            throw new IllegalArgumentException("limitBytes must be positive, was " + limitBytes);
        }
        if (maxBodyBytes < 0 || maxBodyBytes > limitBytes) {
            throw new IllegalArgumentException(
                    "maxBodyBytes must be in [0, " + limitBytes + "], was " + maxBodyBytes);
        }
        this.limitBytes = limitBytes;
        this.maxBodyBytes = maxBodyBytes;
    }

    /**
     * Reserves {@code bytes} of body if they fit under the limit with the bytes in flight.
     *
     * @param bytes at least 0
     * @return null if reserved (give them back with {@link #release(long)}); otherwise the refusal
     *         ({@link OverloadReason#BODY_MEMORY}), whose message gives the figures, for the 503's body
     */
    public OverloadedException reserve(long bytes) {
        long held = inFlight.get();
        while (true) {
            if (held + bytes > limitBytes) {
                return new OverloadedException(OverloadReason.BODY_MEMORY, "request bodies of " + held
                        + " bytes in flight, " + bytes + " more would pass dht.max-in-flight-bytes (" + limitBytes
                        + ")");
            }
            long witness = inFlight.compareAndExchange(held, held + bytes);
            if (witness == held) {
                return null;
            }
            held = witness;
        }
    }

    /**
     * Counts {@code bytes} that are in memory already, whether or not they fit under the limit: a body its request
     * no longer holds but replica writes still do ({@link BodyHold}). Further bodies are refused until they are
     * given back with {@link #release(long)}.
     */
    public void hold(long bytes) {
        inFlight.addAndGet(bytes);
    }

    /** Gives back {@code bytes} that {@link #reserve(long)} reserved or {@link #hold(long)} counted. */
    public void release(long bytes) {
        inFlight.addAndGet(-bytes);
    }

    /** Request-body bytes reserved right now. */
    public long inFlightBytes() {
        return inFlight.get();
    }

    /** The limit, {@code dht.max-in-flight-bytes}, in bytes. */
    public long limitBytes() {
        return limitBytes;
    }

    /** The most one request counts, {@code dht.max-value-size}, in bytes: larger bodies get 413 unread. */
    public long maxBodyBytes() {
        return maxBodyBytes;
    }
}
