package dev.dht.peer;

import dev.dht.cluster.ClusterView;

/**
 * A peer's answer to {@link PeerEndpoint#VIEW}.
 *
 * @param view           the peer's cluster view
 * @param cleanupPending true while the peer still drops records it no longer replicates after the last change
 */
public record PeerView(ClusterView view, boolean cleanupPending) {
}
