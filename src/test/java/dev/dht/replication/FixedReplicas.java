package dev.dht.replication;

import dev.dht.cluster.Node;
import java.util.Map;

/** Test fixture: the {@link Replicas} of a fixed set of nodes, for coordinators built without a Spring context. */
public final class FixedReplicas {
    private FixedReplicas() {
    }

    /**
     * The replicas of the nodes in {@code replicas}: {@link Replicas#of(Node)} fails with
     * {@link IllegalArgumentException} for any other node.
     */
    public static Replicas of(Map<Node, Replica> replicas) {
        Map<Node, Replica> copy = Map.copyOf(replicas);
        return new Replicas(node -> {
            Replica replica = copy.get(node);
            if (replica == null) {
                throw new IllegalArgumentException("no replica of " + node);
            }
            return replica;
        });
    }
}
