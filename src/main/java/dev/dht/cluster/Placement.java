package dev.dht.cluster;

import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * The replica sets of a key under a {@link ClusterView} while its membership changes: the <em>old</em> set, the
 * first {@code from} members in rendezvous order that are not {@link MemberState#JOINING}, and the <em>new</em>
 * set, the first {@code from} that are not {@link MemberState#LEAVING}. With every member {@code NORMAL} both are
 * what {@link ShardRouter} gives. Rendezvous order over a subset of the members is the full order with the others
 * left out, so a joining member enters the new set only of the keys it ranks high enough for, and displaces one old
 * replica of each (after Cassandra's pending ranges and ScyllaDB's read-old/read-new sets). Pure computation:
 * thread-safe, never blocks.
 */
public final class Placement {
    private final ShardRouter router;
    private final Map<URI, MemberState> states;

    /** The placement of {@code view}'s members. */
    public Placement(ClusterView view) {
        this.router = new ShardRouter(view.members().stream().map(member -> new Node(member.node(), false)).toList());
        this.states = view.members().stream().collect(Collectors.toMap(Member::node, Member::state));
    }

    /**
     * The replicas of {@code key} before the change: the first {@code from} members not joining.
     *
     * @throws IllegalArgumentException if fewer than {@code from} members are not joining
     */
    public List<URI> oldReplicas(byte[] key, int from) {
        return first(key, from, MemberState.JOINING);
    }

    /**
     * The replicas of {@code key} after the change: the first {@code from} members not leaving.
     *
     * @throws IllegalArgumentException if fewer than {@code from} members are not leaving
     */
    public List<URI> newReplicas(byte[] key, int from) {
        return first(key, from, MemberState.LEAVING);
    }

    private List<URI> first(byte[] key, int from, MemberState excluded) {
        List<URI> replicas = new ArrayList<>(from);
        for (Node node : router.preferenceList(key)) {
            if (replicas.size() == from) {
                break;
            }
            if (states.get(node.url()) != excluded) {
                replicas.add(node.url());
            }
        }
        if (replicas.size() < from || from < 1) {
            throw new IllegalArgumentException("from " + from + " is not in [1, " + replicas.size()
                    + "]: members not " + excluded + " are too few");
        }
        return replicas;
    }
}
