package dev.dht.failure;

import java.util.Locale;

/**
 * Why a request or a replica call was refused rather than served: each is answered 503 with {@code Retry-After}
 * (nothing was applied), and each travels between nodes by its {@link #token()} in the
 * {@code X-Dht-Overload-Reason} header of a peer's 503.
 */
public enum OverloadReason {
    /** This node's storage queue was full: its storage threads are behind. */
    STORAGE_QUEUE_FULL,
    /**
     * The data dir has less usable space than {@code dht.storage.min-free-space}: writes resume when space is
     * freed.
     */
    DISK_FULL,
    /** This node is rebuilding its store and answers no replica reads yet. */
    REBUILDING,
    /** This node is shutting down: its storage threads take no more work. */
    SHUTTING_DOWN,
    /** A peer answered 503 and gave no reason this node knows. */
    PEER_OVERLOADED,
    /** Every connection to a peer was busy, with as many calls again waiting for one. */
    CONNECTION_POOL_FULL,
    /** A full round of batched replica calls was already waiting for a peer. */
    REPLICA_CALLS_WAITING,
    /** Admission control refused a client request: too many in flight, event loops behind, or a standing queue. */
    ADMISSION,
    /**
     * The request bodies in flight on this node would pass {@code dht.max-in-flight-bytes} with this one: the node
     * is short of memory for another body.
     */
    BODY_MEMORY,
    /**
     * This node is no member of its cluster view: it has yet to finish joining, or it has left. It serves no client
     * requests.
     */
    NOT_A_MEMBER,
    /**
     * This node has just started, or resumed after a pause of seconds (a long GC pause, a frozen VM, SIGSTOP), and
     * checks its cluster view with the other members before it serves clients again: it may have been removed
     * meanwhile.
     */
    VIEW_CHECK,
    /**
     * A replica refused a record call placed under an older cluster view than its own, since a step it took after
     * that view changed the key's replica sets: the coordinator takes the replica's newer view and places the
     * request again ({@code dev.dht.cluster.EpochFence}). Nothing was applied.
     */
    STALE_EPOCH;

    /** The reason as it travels in a header: lower case, words joined by hyphens (e.g. {@code disk-full}). */
    public String token() {
        return name().toLowerCase(Locale.ROOT).replace('_', '-');
    }

    /** The reason whose {@link #token()} is {@code token}; {@link #PEER_OVERLOADED} for null or an unknown one. */
    public static OverloadReason fromToken(String token) {
        if (token != null) {
            for (OverloadReason reason : values()) {
                if (reason.token().equals(token)) {
                    return reason;
                }
            }
        }
        return PEER_OVERLOADED;
    }
}
