package dev.dht.failure;

import java.util.Objects;

/**
 * A request or replica call refused for want of capacity, before anything was applied: answered 503 with
 * {@code Retry-After}, or counted by a coordinator as a replica that refused (not one that failed or timed out).
 * Raised where the refusal arises (the local store, the peer client, admission control) with its
 * {@link OverloadReason}; the message says what was short, in one line. No stack trace is kept: refusals come in
 * floods under overload, and their cause is the reason, not the call path.
 */
public final class OverloadedException extends RuntimeException {
    private final OverloadReason reason;
    private final long heldEpoch;

    /** @param message one line saying what was refused and why, e.g. "storage queue full (4096 tasks waiting)" */
    public OverloadedException(OverloadReason reason, String message) {
        this(reason, message, null);
    }

    /** @param cause the failure this refusal was recognised from (a pool's exception), or null */
    public OverloadedException(OverloadReason reason, String message, Throwable cause) {
        this(reason, message, cause, 0);
    }

    private OverloadedException(OverloadReason reason, String message, Throwable cause, long heldEpoch) {
        super(message, cause, false, false);
        this.reason = Objects.requireNonNull(reason, "reason");
        this.heldEpoch = heldEpoch;
    }

    /**
     * A {@link OverloadReason#STALE_EPOCH} refusal: the replica holds the view of epoch {@code heldEpoch}, in which
     * the call's placement is no longer the key's.
     */
    public static OverloadedException staleEpoch(long heldEpoch, String message) {
        return new OverloadedException(OverloadReason.STALE_EPOCH, message, null, heldEpoch);
    }

    /** Why the request was refused. */
    public OverloadReason reason() {
        return reason;
    }

    /** For {@link OverloadReason#STALE_EPOCH}, the epoch of the refusing replica's view (0 if unknown); else 0. */
    public long heldEpoch() {
        return heldEpoch;
    }
}
