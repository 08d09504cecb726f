package dev.dht.replication;

import dev.dht.cluster.Placement;
import dev.dht.cluster.ViewListener;

/**
 * Makes the replica of every member of each adopted view that has none yet ({@link Replicas#of(java.util.List)}), so
 * a member that joined gets its replica (and its hints replay) without waiting for a request placed on it. Never
 * blocks (nor may the replica factory).
 */
public final class NewMemberReplicas implements ViewListener {
    private final Replicas replicas;

    /** @param replicas the replicas of this node's members */
    public NewMemberReplicas(Replicas replicas) {
        this.replicas = replicas;
    }

    @Override
    public void adopted(Placement placement) {
        replicas.of(placement.members());
    }
}
