package dev.dht.peer;

import java.util.Locale;

/**
 * Which of the records a gainer gains a source sends on {@link PeerEndpoint#STREAM} (query parameter {@code part}).
 * A key's <em>primary source</em> is the first of its old replicas (in placement order) that is not being removed:
 * gainer and sources compute it from the same view, so every gained key has exactly one.
 */
public enum StreamPart {
    /** Every record the gainer gains from this source, in full: the stream of version 1 (no {@code part}). */
    ALL,
    /** In full, the records whose primary source this node is. */
    PRIMARY,
    /**
     * Digests of the other records the gainer gains from this source: key, timestamp, tombstone flag, expiry and
     * {@code from}, the value replaced by its 8-byte xxHash3 (a tombstone as it is), so the gainer fetches a record
     * only where it misses the version this source holds.
     */
    DIGESTS;

    /** The query parameter's value, e.g. {@code digests}. */
    public String token() {
        return name().toLowerCase(Locale.ROOT);
    }

    /**
     * The part named by a query parameter's value; null (no parameter) is {@link #ALL}.
     *
     * @throws IllegalArgumentException for any other word (a 400)
     */
    public static StreamPart of(String token) {
        if (token == null) {
            return ALL;
        }
        for (StreamPart part : values()) {
            if (part.token().equals(token)) {
                return part;
            }
        }
        throw new IllegalArgumentException("part must be all, primary or digests, was " + token);
    }
}
