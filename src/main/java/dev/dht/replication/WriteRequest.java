package dev.dht.replication;

import java.time.Duration;
import java.util.Objects;

/**
 * A client write for {@link Coordinator#write}: a value to store under {@code id} (with an optional TTL) or, with
 * a null value, a delete (a tombstone), at the consistency {@code rf}.
 *
 * @param value the value's bytes; null for a delete
 * @param ttl   how long the value reads as present, from the coordinator's wall clock; null for no expiry (and
 *              always for a delete)
 */
public record WriteRequest(String id, byte[] value, ReplicationFactor rf, Duration ttl) {

    /** @throws IllegalArgumentException for a delete with a TTL, or a TTL that is not positive */
    public WriteRequest {
        Objects.requireNonNull(id, "id");
        Objects.requireNonNull(rf, "rf");
        if (ttl != null && (value == null || ttl.isNegative() || ttl.isZero())) {
            throw new IllegalArgumentException("a TTL must be positive and goes with a value, was " + ttl);
        }
    }

    /** A PUT of {@code value} that never expires. */
    public static WriteRequest put(String id, byte[] value, ReplicationFactor rf) {
        return new WriteRequest(id, Objects.requireNonNull(value, "value"), rf, null);
    }

    /** A PUT of {@code value} that reads as absent from {@code ttl} after now. */
    public static WriteRequest put(String id, byte[] value, ReplicationFactor rf, Duration ttl) {
        return new WriteRequest(id, Objects.requireNonNull(value, "value"), rf, Objects.requireNonNull(ttl, "ttl"));
    }

    /** A DELETE: a tombstone for {@code id}. */
    public static WriteRequest delete(String id, ReplicationFactor rf) {
        return new WriteRequest(id, null, rf, null);
    }

    /** Whether this writes a tombstone. */
    public boolean isDelete() {
        return value == null;
    }

    /** "PUT" or "DELETE": the operation's name in failure messages and the {@code dht.quorum} counter. */
    public String operation() {
        return isDelete() ? "DELETE" : "PUT";
    }
}
