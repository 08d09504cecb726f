package dev.dht.peer;

import dev.dht.cluster.Node;
import java.net.URI;
import java.util.UUID;

/**
 * What {@link PeerClient} needs of this node's cluster view: the epoch it sends on every internal request
 * ({@link InternalProtocol#EPOCH_HEADER}), and where to report a peer whose answer carried a higher one (the node
 * then fetches that peer's view). Implementations must not block.
 */
public interface EpochTracker {
    /** The epoch of this node's current view. */
    long epoch();

    /** This node's base URL, sent in {@link InternalProtocol#SENDER_HEADER}; null to send none. */
    URI self();

    /** The id of this node's cluster, sent in {@link InternalProtocol#CLUSTER_ID_HEADER}; null to send none. */
    default UUID cluster() {
        return null;
    }

    /** {@code peer} answered with {@code epoch}, higher than {@link #epoch()}. Must return at once. */
    void newerEpochSeen(Node peer, long epoch);
}
