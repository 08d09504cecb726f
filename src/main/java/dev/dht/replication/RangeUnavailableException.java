package dev.dht.replication;

/**
 * A node could not serve its part of a range (down, unreachable, or its stream was cut), or the range outlived the
 * cluster view it was placed under. A range needs every node, so the whole range fails: 504 if nothing was sent
 * yet, otherwise the chunked body is cut off.
 */
public final class RangeUnavailableException extends RuntimeException {
    public RangeUnavailableException(String node, Throwable cause) {
        super("range: node " + node + " could not serve its part (" + cause + ")", cause);
    }

    /** The range failed for {@code reason}, no node's fault. */
    public RangeUnavailableException(String reason) {
        super("range: " + reason);
    }
}
