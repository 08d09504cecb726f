package dev.dht.cluster;

import java.net.URI;
import java.util.List;
import java.util.Objects;

/**
 * The cluster's membership as one versioned value: its {@link #epoch()}, the members with their states, and the
 * replication factor. A view is immutable; every change of membership makes a new view with a higher epoch, so
 * two nodes that hold the same epoch hold the same membership (CEP-21's epochs in Cassandra, Raft's term index in
 * ScyllaDB). Persisted in the data dir by {@link ClusterViewFile}.
 *
 * @param epoch             version of this view, from 1; higher is newer
 * @param replicationFactor {@code dht.replication-factor}: copies a request without {@code replicas} keeps
 * @param members           every member, in configuration order (placement breaks ties by it)
 */
public record ClusterView(long epoch, int replicationFactor, List<Member> members) {

    /**
     * @throws IllegalArgumentException if the epoch is below 1, the factor below 1, there is no member or a node
     *                                  is listed twice
     */
    public ClusterView {
        if (epoch < 1) {
            throw new IllegalArgumentException("epoch must be at least 1, was " + epoch);
        }
        if (replicationFactor < 1) {
            throw new IllegalArgumentException("replication factor must be at least 1, was " + replicationFactor);
        }
        members = List.copyOf(members);
        if (members.isEmpty()) {
            throw new IllegalArgumentException("a cluster has at least one member");
        }
        if (members.stream().map(Member::node).distinct().count() != members.size()) {
            throw new IllegalArgumentException("a node is listed twice: " + members);
        }
    }

    /** The first view of a cluster of {@code nodes}: epoch 1, every node {@link MemberState#NORMAL}. */
    public static ClusterView initial(List<URI> nodes, int replicationFactor) {
        return new ClusterView(1, replicationFactor, normal(nodes));
    }

    /**
     * The view of {@code nodes} as the successor of this one: this view itself if it has the same members (all
     * normal) and factor, else a view one epoch higher.
     */
    public ClusterView successor(List<URI> nodes, int replicationFactor) {
        List<Member> next = normal(nodes);
        if (next.equals(members) && replicationFactor == this.replicationFactor) {
            return this;
        }
        return new ClusterView(epoch + 1, replicationFactor, next);
    }

    /** The members' base URLs, in order. */
    public List<URI> nodes() {
        return members.stream().map(Member::node).toList();
    }

    /** How many members are in {@code state}. */
    public long count(MemberState state) {
        return members.stream().filter(member -> member.state() == state).count();
    }

    private static List<Member> normal(List<URI> nodes) {
        return nodes.stream().map(node -> new Member(Objects.requireNonNull(node, "node"), MemberState.NORMAL))
                .toList();
    }
}
