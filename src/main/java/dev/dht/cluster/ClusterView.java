package dev.dht.cluster;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;

/**
 * The cluster's membership as one versioned value: its {@link #epoch()}, the members with their states, the
 * replication factor and the membership change in progress, if any. A view is immutable; every step of a change
 * makes a new view with a higher epoch, so two nodes that hold the same epoch hold the same membership (CEP-21's
 * epochs in Cassandra, Raft's term index in ScyllaDB). Persisted in the data dir by {@link ClusterViewFile}.
 *
 * <p>Every view names its {@link #cluster()}: the id the cluster got when it formed, which every later view keeps.
 * A node refuses views, internal calls and Raft traffic of another id, so a node that once belonged to another
 * cluster at the same URLs (founding members on emptied disks formed a new one) never takes part in this one.
 *
 * @param epoch             version of this view, from 1; higher is newer; 0 only for the seeds' membership a
 *                          node holds before it joined, never stored
 * @param replicationFactor {@code dht.replication-factor}: copies a request without {@code replicas} keeps
 * @param members           every member, in the order they were added (placement breaks ties by it)
 * @param change            the change in progress, or null
 * @param cluster           the cluster's id ({@link #LEGACY_CLUSTER} for a cluster formed before views had one)
 */
public record ClusterView(long epoch, int replicationFactor, List<Member> members, ClusterChange change,
                          UUID cluster) {
    /**
     * The id of a cluster formed before clusters had ids: a view stored or sent without one has this id, which is
     * also the one Raft group id every such cluster's view log used. So a rolling restart onto this version keeps a
     * running cluster's log and lets old and new nodes talk (a view of this id is written and sent without an id).
     */
    public static final UUID LEGACY_CLUSTER = UUID.nameUUIDFromBytes("dht-cluster-view".getBytes(
            StandardCharsets.UTF_8));

    /**
     * @throws IllegalArgumentException if the epoch is negative, the factor below 1, there is no member, a node is
     *                                  listed twice, or the members' states do not match the change
     */
    public ClusterView {
        Objects.requireNonNull(cluster, "cluster");
        if (epoch < 0) {
            throw new IllegalArgumentException("epoch must be at least 0, was " + epoch);
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
        for (Member member : members) {
            MemberState expected = change != null && change.node().equals(member.node())
                    ? change.memberState() : MemberState.NORMAL;
            if (member.state() != expected) {
                throw new IllegalArgumentException(member.node() + " is " + member.state() + ", expected " + expected
                        + " under change " + change);
            }
        }
        if (change != null && members.stream().noneMatch(member -> member.node().equals(change.node()))) {
            throw new IllegalArgumentException("the change's node " + change.node() + " is not a member");
        }
    }

    /** A view of a cluster of {@link #LEGACY_CLUSTER} (tools and tests that need no id). */
    public ClusterView(long epoch, int replicationFactor, List<Member> members, ClusterChange change) {
        this(epoch, replicationFactor, members, change, LEGACY_CLUSTER);
    }

    /** A view of a cluster of {@link #LEGACY_CLUSTER} with no change in progress. */
    public ClusterView(long epoch, int replicationFactor, List<Member> members) {
        this(epoch, replicationFactor, members, null);
    }

    /** The first view of a cluster of {@code nodes}: epoch 1, every node {@link MemberState#NORMAL}. */
    public static ClusterView initial(List<URI> nodes, int replicationFactor, UUID cluster) {
        return new ClusterView(1, replicationFactor, normal(nodes), null, cluster);
    }

    /** {@link #initial(List, int, UUID)} of {@link #LEGACY_CLUSTER} (tools and tests). */
    public static ClusterView initial(List<URI> nodes, int replicationFactor) {
        return initial(nodes, replicationFactor, LEGACY_CLUSTER);
    }

    /** True if this view's cluster is {@code other}'s. */
    public boolean sameCluster(ClusterView other) {
        return cluster.equals(other.cluster);
    }

    /**
     * The next view: {@code node} joins, {@link MemberState#JOINING}, in phase
     * {@link ChangePhase#WRITE_BOTH_READ_OLD}.
     *
     * @throws IllegalStateException if a change is in progress or {@code node} is a member already
     */
    public ClusterView withJoining(URI node) {
        requireNoChange();
        if (isMember(node)) {
            throw new IllegalStateException(node + " is a member already");
        }
        List<Member> next = new ArrayList<>(members);
        next.add(new Member(node, MemberState.JOINING));
        return new ClusterView(epoch + 1, replicationFactor, next,
                new ClusterChange(ChangeKind.JOIN, node, ChangePhase.WRITE_BOTH_READ_OLD), cluster);
    }

    /**
     * The next view: {@code node} leaves ({@link ChangeKind#DECOMMISSION} or {@link ChangeKind#REMOVENODE}),
     * {@link MemberState#LEAVING}, in phase {@link ChangePhase#WRITE_BOTH_READ_OLD}.
     *
     * @throws IllegalStateException if a change is in progress, {@code node} is not a member, or it is the last one
     */
    public ClusterView withLeaving(URI node, ChangeKind kind) {
        requireNoChange();
        if (kind == ChangeKind.JOIN) {
            throw new IllegalArgumentException("a join is not a leave");
        }
        if (!isMember(node)) {
            throw new IllegalStateException(node + " is not a member");
        }
        if (members.size() == 1) {
            throw new IllegalStateException(node + " is the last member");
        }
        List<Member> next = members.stream()
                .map(member -> member.node().equals(node) ? new Member(node, MemberState.LEAVING) : member)
                .toList();
        return new ClusterView(epoch + 1, replicationFactor, next,
                new ClusterChange(kind, node, ChangePhase.WRITE_BOTH_READ_OLD), cluster);
    }

    /**
     * The next step of the change in progress: its next phase, or after the last one the completed membership
     * (the joiner {@code NORMAL}, the leaver gone) with no change; after {@link ChangePhase#ROLLBACK} the
     * membership before the change.
     *
     * @throws IllegalStateException if no change is in progress
     */
    public ClusterView advanced() {
        if (change == null) {
            throw new IllegalStateException("no change in progress at epoch " + epoch);
        }
        if (change.rollingBack()) {
            return new ClusterView(epoch + 1, replicationFactor, settled(change.kind() != ChangeKind.JOIN), null,
                    cluster);
        }
        ChangePhase next = change.phase().next();
        if (next != null) {
            return new ClusterView(epoch + 1, replicationFactor, members,
                new ClusterChange(change.kind(), change.node(), next), cluster);
        }
        return new ClusterView(epoch + 1, replicationFactor, settled(change.kind() == ChangeKind.JOIN), null, cluster);
    }

    /**
     * The next view on the way back from the change in progress: before the read switch the membership before the
     * change (a joiner no member, a leaver {@code NORMAL} again); after it the {@link ChangePhase#ROLLBACK} phase,
     * whose {@link #advanced} view is that membership. Going back loses no acknowledged write: while writes go to
     * both replica sets, each needs {@code ack} answers in the old set too.
     *
     * @throws IllegalStateException if no change is in progress or it is being rolled back already
     */
    public ClusterView aborted() {
        if (change == null) {
            throw new IllegalStateException("no change in progress at epoch " + epoch);
        }
        if (change.rollingBack()) {
            throw new IllegalStateException("the " + change.kind().token() + " of " + change.node()
                    + " is being rolled back already");
        }
        if (change.readsNew()) {
            return new ClusterView(epoch + 1, replicationFactor, members,
                new ClusterChange(change.kind(), change.node(), ChangePhase.ROLLBACK), cluster);
        }
        return new ClusterView(epoch + 1, replicationFactor, settled(change.kind() != ChangeKind.JOIN), null, cluster);
    }

    /**
     * The next view with the decommission in progress turned into a removenode of the same node, in the same
     * phase: its node died, so the others stream from the surviving copies instead of from it.
     *
     * @throws IllegalStateException if the change in progress is not a decommission
     */
    public ClusterView asRemovenode() {
        if (change == null || change.kind() != ChangeKind.DECOMMISSION) {
            throw new IllegalStateException("no decommission in progress at epoch " + epoch);
        }
        return new ClusterView(epoch + 1, replicationFactor, members,
                new ClusterChange(ChangeKind.REMOVENODE, change.node(), change.phase()), cluster);
    }

    /** Members after the change: the changing node NORMAL if {@code keep}, else left out. */
    private List<Member> settled(boolean keep) {
        List<Member> next = new ArrayList<>(members.size());
        for (Member member : members) {
            if (!member.node().equals(change.node())) {
                next.add(member);
            } else if (keep) {
                next.add(new Member(member.node(), MemberState.NORMAL));
            }
        }
        return next;
    }

    private void requireNoChange() {
        if (change != null) {
            throw new IllegalStateException("the " + change.kind().token() + " of " + change.node() + " is in progress ("
                    + change.phase().token() + ", epoch " + epoch + ")");
        }
    }

    /** The members' base URLs, in order. */
    public List<URI> nodes() {
        return members.stream().map(Member::node).toList();
    }

    /** True if {@code node} is a member, in any state. */
    public boolean isMember(URI node) {
        return state(node).isPresent();
    }

    /** {@code node}'s state, or empty if it is no member. */
    public Optional<MemberState> state(URI node) {
        Objects.requireNonNull(node, "node");
        return members.stream().filter(member -> member.node().equals(node)).map(Member::state).findFirst();
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
