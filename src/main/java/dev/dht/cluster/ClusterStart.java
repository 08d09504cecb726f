package dev.dht.cluster;

import java.net.URI;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.UUID;

/**
 * How a node starts ({@link StartKind}), decided once from what its data dir holds and what the seeds answer
 * (Cassandra's start-up decision in one place). The stored view is the truth once there is one ({@code dht.nodes}
 * then only names seeds). Without one, the newest view a seed holds decides: a running cluster that holds this node
 * makes it a member that lost its data (it takes that view and rebuilds); one that does not hold it, or a node not in
 * {@code dht.nodes}, joins through the seeds, holding their membership at epoch 0 until then; a listed node that finds
 * no running cluster is a founding member and waits for the view log to form the cluster of {@code dht.nodes}.
 *
 * <p>The cluster's id ({@link ClusterView#cluster}) comes with the view: the stored one's, the running cluster's; a
 * joiner that finds no running cluster gets a decision that {@link Decision#waitsFor waits} (its caller asks the seeds
 * again). A founding member starts with no id ({@link ClusterView#LEGACY_CLUSTER} at epoch 0) and agrees on one with
 * the others once it serves ({@link #founding}): its view log, whose Raft group id is the cluster id, starts then.
 * Pure: no I/O, no clock, no randomness (a random id is an argument).
 */
public final class ClusterStart {
    private ClusterStart() {
    }

    /**
     * The decision.
     *
     * @param kind     how the node starts
     * @param view     the view it starts with: the stored one, the running cluster's, or {@code dht.nodes} at epoch 0
     * @param reason   one line for the log that says why
     * @param warnings settings the view overrides (each one line for the log)
     * @param waitsFor  null if decided; else whose answer the node waits for to learn its cluster's id (the view's
     *                  id is then a placeholder): its caller asks the seeds again
     */
    public record Decision(StartKind kind, ClusterView view, String reason, List<String> warnings, String waitsFor) {
        public Decision {
            Objects.requireNonNull(kind, "kind");
            Objects.requireNonNull(view, "view");
            warnings = List.copyOf(warnings);
        }

        Decision(StartKind kind, ClusterView view, String reason, List<String> warnings) {
            this(kind, view, reason, warnings, null);
        }
    }

    /**
     * Decides how {@code self} starts.
     *
     * @param stored            the view its data dir holds, or null if none
     * @param answers           the view of each seed that answered (seeds that did not answer are absent; a seed of a
     *                          cluster not formed yet answers epoch 0)
     * @param nodes             {@code dht.nodes}
     * @param self              {@code dht.self}
     * @param replicationFactor {@code dht.replication-factor}, for a cluster not formed yet
     * @throws Refused if the stored view does not hold {@code self}: it left or was removed, and only an emptied data
     *                 dir may join again
     */
    public static Decision decide(ClusterView stored, Map<URI, ClusterView> answers, List<URI> nodes, URI self,
                                  int replicationFactor) {
        if (stored != null) {
            if (!stored.isMember(self)) {
                throw new Refused(self + " has left the cluster (it is no member of its stored view, epoch "
                        + stored.epoch() + "); empty the data dir to join anew");
            }
            List<String> warnings = new ArrayList<>();
            if (nodes.contains(self) && !stored.nodes().containsAll(nodes)) {
                warnings.add("dht.nodes " + nodes + " differs from the stored cluster view (epoch " + stored.epoch()
                        + "); the view decides membership, dht.nodes only names seeds");
            }
            if (stored.replicationFactor() != replicationFactor) {
                warnings.add("dht.replication-factor " + replicationFactor + " differs from the stored cluster view's "
                        + stored.replicationFactor() + "; the view's applies");
            }
            return new Decision(StartKind.STORED, stored, self + " goes on from its stored view, epoch "
                    + stored.epoch(), warnings);
        }
        ClusterView running = answers.values().stream().filter(view -> view.epoch() >= 1)
                .max(Comparator.comparingLong(ClusterView::epoch)).orElse(null);
        if (running != null && running.isMember(self)) {
            return new Decision(StartKind.LOST_DATA, running, self + " is a member of the running cluster (epoch "
                    + running.epoch() + ") but its data dir holds no cluster view: it lost its data; it takes that "
                    + "view and streams its records back before it serves reads", List.of());
        }
        List<Member> seeds = nodes.stream().map(node -> new Member(node, MemberState.NORMAL)).toList();
        if (running == null && nodes.contains(self)) {
            return new Decision(StartKind.FORMING, new ClusterView(0, replicationFactor, seeds), self + " has no "
                    + "cluster view and no seed holds one: it agrees on the new cluster's id with the other founding "
                    + "members, then waits for the view log to form the cluster of " + nodes, List.of());
        }
        ClusterView unformed = new ClusterView(0, replicationFactor, seeds, null,
                running != null ? running.cluster() : ClusterView.LEGACY_CLUSTER);
        return new Decision(StartKind.JOINING, unformed, self + " has no cluster view and the cluster "
                + (running == null ? "is not running yet" : "runs at epoch " + running.epoch())
                + ": it joins through the seeds " + nodes, List.of(),
                running != null ? null : "a seed of " + nodes + " that holds the running cluster's view");
    }

    /**
     * What a founding member learnt from the other founding members before its view log starts: the running
     * cluster's view if one holds this node (it lost its data: it takes the view and rebuilds), else the new
     * cluster's id once it can be known, else whom it still waits for.
     *
     * @param running  a running cluster's view that holds this node, or null
     * @param cluster  the new cluster's id, or null
     * @param waitsFor null if one of the above is set; else whose answer it waits for
     */
    public record Founding(ClusterView running, UUID cluster, String waitsFor) {
    }

    /**
     * How founding member {@code self} learns its cluster: from a running cluster that holds it (the newest such view
     * any founding member answers), else by agreement on a new id. The first node of {@code nodes} names it: once
     * every other founding member answers and holds no view (a cluster forms only then anyway), the id one of them
     * already took from it (it was started again before the cluster formed), else {@code fresh}. Every other founding
     * member takes the id the first one answers with, once it has one. So all founding members' logs start in one
     * Raft group, and a founding member whose cluster runs without it (it lost its disk while all were down) joins
     * that cluster's log, not a new one.
     *
     * @param answers the view of each other founding member that answered (epoch 0: not formed; an undecided one
     *                has {@link ClusterView#LEGACY_CLUSTER})
     * @param fresh   a random id, the new cluster's if this node names it
     */
    public static Founding founding(URI self, List<URI> nodes, Map<URI, ClusterView> answers, UUID fresh) {
        ClusterView running = answers.values().stream().filter(view -> view.epoch() >= 1 && view.isMember(self))
                .max(Comparator.comparingLong(ClusterView::epoch)).orElse(null);
        if (running != null) {
            return new Founding(running, null, null);
        }
        URI first = nodes.get(0);
        if (!first.equals(self)) {
            ClusterView named = answers.get(first);
            return named != null && named.epoch() == 0 && !named.cluster().equals(ClusterView.LEGACY_CLUSTER)
                    ? new Founding(null, named.cluster(), null)
                    : new Founding(null, null, "the first founding member " + first + " to name the new cluster's id");
        }
        List<URI> silent = nodes.stream().filter(node -> !node.equals(self))
                .filter(node -> !answers.containsKey(node) || answers.get(node).epoch() != 0).toList();
        if (!silent.isEmpty()) {
            return new Founding(null, null, "every founding member to answer that it holds no view (not yet: "
                    + silent + ")");
        }
        UUID taken = answers.values().stream().map(ClusterView::cluster)
                .filter(id -> !id.equals(ClusterView.LEGACY_CLUSTER)).findFirst().orElse(fresh);
        return new Founding(null, taken, null);
    }

    /** The data dir's view does not hold this node: it may not start on that data dir. */
    public static final class Refused extends RuntimeException {
        private static final long serialVersionUID = 1L;

        public Refused(String message) {
            super(message);
        }
    }
}
