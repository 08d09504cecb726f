package dev.dht.cluster;

import java.net.URI;
import java.util.Objects;

/**
 * The membership change a {@link ClusterView} is in the middle of: one at a time, cluster-wide.
 *
 * @param kind  join, decommission or removenode
 * @param node  the node that joins or leaves
 * @param phase where the change stands
 */
public record ClusterChange(ChangeKind kind, URI node, ChangePhase phase) {

    /** @throws NullPointerException if a part is null */
    public ClusterChange {
        Objects.requireNonNull(kind, "kind");
        Objects.requireNonNull(node, "node");
        Objects.requireNonNull(phase, "phase");
    }

    /** The state of {@link #node()} while the change runs: JOINING for a join, LEAVING otherwise. */
    public MemberState memberState() {
        return kind == ChangeKind.JOIN ? MemberState.JOINING : MemberState.LEAVING;
    }

    /**
     * True if this is a removenode of {@code member}: a dead node, which nobody asks for views, streams or consent
     * while the change runs.
     */
    public boolean removes(URI member) {
        return kind == ChangeKind.REMOVENODE && node.equals(member);
    }

    /**
     * True if {@code member} gains keys in this change, so it pulls them in the streaming phase: the joiner of a join
     * (the others only lose keys to it); every member but the leaving node of a decommission or removenode (which
     * only loses). The one answer for the coordinator, which asks the gainers to pull, and for a member asked to pull.
     */
    public boolean gains(URI member) {
        return kind == ChangeKind.JOIN ? node.equals(member) : !node.equals(member);
    }

    /** True while reads use the new replica sets. */
    public boolean readsNew() {
        return phase == ChangePhase.WRITE_BOTH_READ_NEW;
    }

    /** True while the change is being undone ({@link ChangePhase#ROLLBACK}). */
    public boolean rollingBack() {
        return phase == ChangePhase.ROLLBACK;
    }
}
