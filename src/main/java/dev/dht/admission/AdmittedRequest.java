package dev.dht.admission;

import io.netty.handler.codec.http.HttpHeaders;

/**
 * A client request {@link AdmissionHandler} admitted and handed on, until it ends: when it was admitted (its
 * in-flight slot's start), its Netty headers (the key of its {@link RefusedBody} mark) and the body bytes it holds
 * in {@link BodyMemory}; and, as a {@link TimedRequest}, what its answer is timed as. Touched only on its
 * connection's event loop.
 */
final class AdmittedRequest extends TimedRequest {
    private final long admittedNanos;
    private final HttpHeaders headers;
    private long reservedBytes;
    private boolean released;

    /**
     * @param operation     its {@code operation} tag in {@code dht.client.requests}; null if it is not timed
     * @param readNanos     {@link System#nanoTime()} when its head was read
     * @param admittedNanos {@link AdmissionControl#now()} at admission
     * @param headers       the request's headers, as Reactor Netty hands them on
     * @param reservedBytes body bytes reserved at admission (its Content-Length, or 0)
     */
    AdmittedRequest(String operation, long readNanos, long admittedNanos, HttpHeaders headers, long reservedBytes) {
        super(operation, readNanos);
        this.admittedNanos = admittedNanos;
        this.headers = headers;
        this.reservedBytes = reservedBytes;
    }

    long admittedNanos() {
        return admittedNanos;
    }

    HttpHeaders headers() {
        return headers;
    }

    /** Body bytes reserved so far. */
    long reservedBytes() {
        return reservedBytes;
    }

    /** Adds {@code bytes} more of its chunked body, reserved as they arrived. */
    void reserved(long bytes) {
        reservedBytes += bytes;
    }

    /** Whether the request has ended: its bytes are given back and no more are counted. */
    boolean isReleased() {
        return released;
    }

    /** Ends the request; returns the body bytes to give back to {@link BodyMemory}. */
    long release() {
        released = true;
        long bytes = reservedBytes;
        reservedBytes = 0;
        return bytes;
    }
}
