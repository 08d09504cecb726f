package dev.dht.cluster;

import java.net.URI;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * The replica sets of a key under a {@link ClusterView}, also while its membership changes: the <em>old</em> set,
 * the first {@code from} members in rendezvous order that are not {@link MemberState#JOINING}, and the <em>new</em>
 * set, the first {@code from} that are not {@link MemberState#LEAVING}. With every member {@code NORMAL} both are
 * what {@link ShardRouter} gives. Rendezvous order over a subset of the members is the full order with the others
 * left out, so a joining member enters the new set only of the keys it ranks high enough for, and displaces one old
 * replica of each (after Cassandra's pending ranges and ScyllaDB's read-old/read-new sets).
 *
 * <p>Writes go to both sets during a change ({@link #changing()}); reads use {@link #readReplicas}, the old set
 * until the change reaches {@link ChangePhase#WRITE_BOTH_READ_NEW}. Pure computation: thread-safe, never blocks.
 */
public final class Placement {
    private final ClusterView view;
    private final List<Node> members;
    private final Node self;
    private final ShardRouter router;
    private final Map<URI, MemberState> states;
    private final int size;
    /** Members of the larger replica set: all but the joiners or all but the leavers. */
    private final int largerSet;

    /** The placement of {@code view}'s members, none of them this process (for tests and tools). */
    public Placement(ClusterView view) {
        this(view, null);
    }

    /** The placement of {@code view}'s members as the node {@code self} sees it ({@link Node#self()} set on it). */
    public Placement(ClusterView view, URI self) {
        this.view = view;
        this.members = view.members().stream().map(member -> new Node(member.node(), member.node().equals(self)))
                .toList();
        this.self = members.stream().filter(Node::self).findFirst().orElse(null);
        this.router = new ShardRouter(members);
        this.states = view.members().stream().collect(Collectors.toMap(Member::node, Member::state));
        int notJoining = (int) (view.members().size() - view.count(MemberState.JOINING));
        int notLeaving = (int) (view.members().size() - view.count(MemberState.LEAVING));
        this.size = Math.min(notJoining, notLeaving);
        this.largerSet = Math.max(notJoining, notLeaving);
    }

    /** The view placed. */
    public ClusterView view() {
        return view;
    }

    /** Every member, in the view's order, this node marked {@link Node#self()}. */
    public List<Node> members() {
        return members;
    }

    /** This node, or null if it is no member of the view. */
    public Node self() {
        return self;
    }

    /**
     * The largest {@code from} both replica sets can hold: the members that are neither joining (old set) nor
     * leaving (new set), counted the smaller way. {@code from} above it is 400.
     */
    public int size() {
        return size;
    }

    /**
     * The replica count a record written with {@code from} is placed with: {@code from}, or the members of the larger
     * of the two sets (at least 1) if {@code from} is 0 (unknown: a record of format 0) or above it (a cluster that
     * shrank, or that grows from below its replication factor). Pass it to {@link #oldReplicasAtMost} and
     * {@link #newReplicasAtMost}, which cap it at each set's members: a join of a second member to one gives a record
     * of {@code from} 3 one old replica and two new ones. Capping it at the smaller set ({@link #size()}) gave such a
     * joiner only the keys it comes first for. Repair, streaming, cleanup, the epoch fence and hint replay place
     * records by it.
     */
    public int placedFrom(int from) {
        int members = Math.max(1, largerSet);
        return from == 0 || from > members ? members : from;
    }

    /**
     * Whether {@code node} is one of the replicas of {@code key} for a record written with {@code from}: in the old
     * or the new set while a change runs, {@code from} {@link #placedFrom placed} as that record's write placed it
     * (hint replay, which must not leave a record on a node that no longer replicates its key).
     */
    public boolean replicates(URI node, byte[] key, int from) {
        int placed = placedFrom(from);
        return contains(oldReplicasAtMost(key, placed), node) || contains(newReplicasAtMost(key, placed), node);
    }

    /** True if {@code replicas} holds the node with base URL {@code node}, whatever its {@link Node#self()} flag. */
    public static boolean contains(List<Node> replicas, URI node) {
        for (Node replica : replicas) {
            if (replica.url().equals(node)) {
                return true;
            }
        }
        return false;
    }

    /** True while a change is in progress: writes go to {@link #oldReplicas} and {@link #newReplicas}. */
    public boolean changing() {
        return view.change() != null;
    }

    /**
     * The replicas of {@code key} before the change: the first {@code from} members not joining.
     *
     * @throws IllegalArgumentException if fewer than {@code from} members are not joining
     */
    public List<Node> oldReplicas(byte[] key, int from) {
        return first(key, from, MemberState.JOINING, false);
    }

    /**
     * The replicas of {@code key} after the change: the first {@code from} members not leaving.
     *
     * @throws IllegalArgumentException if fewer than {@code from} members are not leaving
     */
    public List<Node> newReplicas(byte[] key, int from) {
        return first(key, from, MemberState.LEAVING, false);
    }

    /** The replicas a read of {@code key} asks: the old set until the read switch, the new set from it. */
    public List<Node> readReplicas(byte[] key, int from) {
        return view.change() != null && view.change().readsNew() ? newReplicas(key, from) : oldReplicas(key, from);
    }

    /**
     * As {@link #oldReplicas}, with {@code from} capped at the members not joining: for records whose replica count
     * was chosen under a larger cluster (repair, streaming, cleanup).
     */
    public List<Node> oldReplicasAtMost(byte[] key, int from) {
        return first(key, from, MemberState.JOINING, true);
    }

    /** As {@link #newReplicas}, with {@code from} capped at the members not leaving. */
    public List<Node> newReplicasAtMost(byte[] key, int from) {
        return first(key, from, MemberState.LEAVING, true);
    }

    private List<Node> first(byte[] key, int from, MemberState excluded, boolean capped) {
        if (from < 1) {
            throw new IllegalArgumentException("from must be at least 1, was " + from);
        }
        if (view.change() == null) { // every member NORMAL: both sets are the router's
            return router.replicas(key, capped ? Math.min(from, members.size()) : from);
        }
        List<Node> replicas = new ArrayList<>(from);
        for (Node node : router.preferenceList(key)) {
            if (replicas.size() == from) {
                break;
            }
            if (states.get(node.url()) != excluded) {
                replicas.add(node);
            }
        }
        if (replicas.size() < from && !capped) {
            throw new IllegalArgumentException("from " + from + " is not in [1, " + replicas.size()
                    + "]: members not " + excluded + " are too few");
        }
        return replicas;
    }
}
