package dev.dht.peer;

import dev.dht.cluster.Node;
import java.util.UUID;

/**
 * A peer answered as a node of another cluster: its answer named another cluster id than this node's. The call fails
 * whatever the peer answered, so a coordinator counts no acknowledgement from it (a request short of its {@code ack}
 * then ends 504, as with a replica that does not answer) and no record, view or epoch of it is taken.
 */
public final class ClusterMismatchException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    /**
     * @param peer   the peer called
     * @param theirs the cluster id its answer named
     * @param ours   this node's cluster id
     */
    public ClusterMismatchException(Node peer, String theirs, UUID ours) {
        super(peer + " answered as a node of cluster " + theirs + ", this node is of cluster " + ours, null, false,
                false);
    }
}
