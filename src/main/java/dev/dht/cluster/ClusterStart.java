package dev.dht.cluster;

import java.net.URI;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * How a node starts ({@link StartKind}), decided once from what its data dir holds and what the seeds answer
 * (Cassandra's start-up decision in one place). The stored view is the truth once there is one ({@code dht.nodes}
 * then only names seeds). Without one, the newest view a seed holds decides: a running cluster that holds this node
 * makes it a member that lost its data (it takes that view and rebuilds); one that does not hold it, or a node not in
 * {@code dht.nodes}, joins through the seeds, holding their membership at epoch 0 until then; a listed node that finds
 * no running cluster is a founding member and waits for the view log to form the cluster of {@code dht.nodes}. Pure:
 * no I/O, no clock.
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
     */
    public record Decision(StartKind kind, ClusterView view, String reason, List<String> warnings) {
        public Decision {
            Objects.requireNonNull(kind, "kind");
            Objects.requireNonNull(view, "view");
            warnings = List.copyOf(warnings);
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
        ClusterView unformed = new ClusterView(0, replicationFactor,
                nodes.stream().map(node -> new Member(node, MemberState.NORMAL)).toList());
        if (running == null && nodes.contains(self)) {
            return new Decision(StartKind.FORMING, unformed, self + " has no cluster view and no seed holds one: it "
                    + "waits for the view log to form the cluster of " + nodes, List.of());
        }
        return new Decision(StartKind.JOINING, unformed, self + " has no cluster view and the cluster "
                + (running == null ? "is not running yet" : "runs at epoch " + running.epoch())
                + ": it joins through the seeds " + nodes, List.of());
    }

    /** The data dir's view does not hold this node: it may not start on that data dir. */
    public static final class Refused extends RuntimeException {
        private static final long serialVersionUID = 1L;

        public Refused(String message) {
            super(message);
        }
    }
}
