package dev.dht.replication;

import dev.dht.cluster.Node;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

/**
 * The {@link Replica} of every node this one has placed a key on: made once per node on first use, so a member
 * that joins gets its replica (with its hints, health and call limits) when the first request is placed on it,
 * and keeps it. Thread-safe; never blocks (the factory must not either).
 */
public final class Replicas {
    private final Map<Node, Replica> byNode = new ConcurrentHashMap<>();
    private final Function<Node, Replica> factory;

    /** @param factory makes the replica of a node: in-process for this node, over the network for a peer */
    public Replicas(Function<Node, Replica> factory) {
        this.factory = factory;
    }

    /** The replica of {@code node}. */
    public Replica of(Node node) {
        Replica replica = byNode.get(node);
        return replica != null ? replica : byNode.computeIfAbsent(node, factory);
    }

    /** The replicas of {@code nodes}, in order. */
    public List<Replica> of(List<Node> nodes) {
        Replica[] replicas = new Replica[nodes.size()];
        for (int i = 0; i < replicas.length; i++) {
            replicas[i] = of(nodes.get(i));
        }
        return List.of(replicas);
    }
}
