package dev.dht.cluster;

import java.util.List;
import java.util.concurrent.ConcurrentSkipListMap;

/**
 * The replica's side of epoch fencing (ScyllaDB's {@code fence_version}): a record call placed by a coordinator under
 * an older view than this node's is served only if its key's replica sets are the same under both, so a coordinator
 * cut off while the cluster moved on (a rollback past the read switch, a change that ended and was cleaned up) cannot
 * read from or write to the sets it no longer owns. It is then refused, with this node's epoch, and retried by the
 * coordinator under the newer view; nothing is applied.
 *
 * <p>The sets a call is placed on are, for its key and {@code from}: the read set, the old set and, while a change
 * runs, the new set ({@link Placement}). Most steps of a change leave them as they are (the streaming phase, a
 * decommission turned removenode); the ones that move them (a change's start, the read switch, the rollback step,
 * its end) move only the keys whose replicas include the changing node. Per view, {@link #adopted} records the epoch
 * of the last step that moved any key's sets; a call at that epoch or newer (every call but a stale coordinator's) is
 * served after one comparison. An older call is compared key by key: its key placed under the view it names (kept for
 * the last {@link #VIEWS_KEPT} views this node held) and under the current one, at the price of two placements; a
 * view this node never held (it skipped epochs catching up) or no longer keeps counts as a step that moved every set.
 *
 * <p>Thread-safe; never blocks. {@link #adopted} runs on the adopting thread, the checks on any.
 */
public final class EpochFence implements ViewListener {
    /** Views kept to place an older call's key under the view it was placed with. */
    static final int VIEWS_KEPT = 32;

    private final ConcurrentSkipListMap<Long, Placement> recent = new ConcurrentSkipListMap<>();
    private volatile Placement current;
    /** Epoch of the last step that moved any key's replica sets, as far as this node knows. */
    private volatile long movedAt;

    /** @param initial the placement this node starts with; calls older than its epoch are compared key by key */
    public EpochFence(Placement initial) {
        this.current = initial;
        this.movedAt = initial.view().epoch();
        recent.put(initial.view().epoch(), initial);
    }

    /**
     * This node took {@code next} (registered with {@link Membership#onChange}): notes whether the step moved any key's
     * replica sets. A step that skips epochs counts as one that did.
     */
    @Override
    public synchronized void adopted(Placement next) {
        Placement previous = current;
        long epoch = next.view().epoch();
        if (epoch <= previous.view().epoch()) {
            return;
        }
        if (epoch != previous.view().epoch() + 1 || !samePlacement(previous.view(), next.view())) {
            movedAt = epoch;
        }
        recent.put(epoch, next);
        current = next;
        while (recent.size() > VIEWS_KEPT) {
            recent.pollFirstEntry();
        }
    }

    /** The epoch of this node's view. */
    public long epoch() {
        return current.view().epoch();
    }

    /**
     * Whether a call for {@code key}, written or read with {@code from} replicas, placed under the view of
     * {@code epoch} may be served: true if {@code epoch} is 0 (a caller that names none), at or above the last step
     * that moved any key's sets, or if the key's sets under that view are the ones under this node's. O(1) unless
     * the call is older than that step.
     *
     * @param from the call's replica count; 0 if unknown (every member counted, which refuses more)
     */
    public boolean admits(long epoch, byte[] key, int from) {
        Placement now = current;
        if (epoch == 0 || epoch >= movedAt) {
            return true;
        }
        Placement then = recent.get(epoch);
        return then != null && sets(then, key, from).equals(sets(now, key, from));
    }

    /**
     * Whether a range placed under {@code epoch} may be served. A range reads every member of its view and keeps the
     * newest record per key, so it misses a write only if a member that may hold one alone is not in that view: it
     * is refused only if this node's view has a {@link MemberState#NORMAL} member that the range's view lacks (a join
     * completed since), or if that view is unknown here. O(1) unless a step since moved any key's sets.
     */
    public boolean admitsRange(long epoch) {
        Placement now = current;
        if (epoch == 0 || epoch >= movedAt) {
            return true;
        }
        Placement then = recent.get(epoch);
        if (then == null) {
            return false;
        }
        for (Member member : now.view().members()) {
            if (member.state() == MemberState.NORMAL && !then.view().isMember(member.node())) {
                return false;
            }
        }
        return true;
    }

    /**
     * The key's sets under {@code placement}: its replicas, or while a change moves them its read set, old set and
     * new set.
     */
    private static List<List<Node>> sets(Placement placement, byte[] key, int from) {
        int placed = placement.placedFrom(from);
        List<Node> old = placement.oldReplicasAtMost(key, placed);
        if (!placement.changing()) {
            return List.of(old);
        }
        List<Node> next = placement.newReplicasAtMost(key, placed);
        if (next.equals(old)) { // the change leaves this key's replicas as they are
            return List.of(old);
        }
        return List.of(placement.view().change().readsNew() ? next : old, old, next);
    }

    /**
     * True if both views place every key alike: the same members in the same states, and the same answer to
     * whether a change runs and whether reads use its new sets.
     */
    static boolean samePlacement(ClusterView a, ClusterView b) {
        return a.members().equals(b.members()) && (a.change() == null) == (b.change() == null)
                && (a.change() == null || a.change().readsNew() == b.change().readsNew());
    }
}
