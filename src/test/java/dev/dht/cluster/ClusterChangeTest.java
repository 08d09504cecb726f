package dev.dht.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Who gains in a change, checked against the placement: every node that a key's new replica set holds and its old set
 * does not is a gainer (so it pulls that key in the streaming phase), for every kind of change of 2 to 6 members with
 * a replication factor of 3; the node that leaves never gains, and in a join only the joiner does.
 */
class ClusterChangeTest {
    private static final URI JOINER = URI.create("http://node-new:8080");

    @Test
    void everyNewReplicaOfAKeyIsAGainer() {
        for (int size = 2; size <= 6; size++) {
            ClusterView base = ClusterView.initial(nodes(size), 3);
            List<ClusterView> changes = new ArrayList<>(List.of(base.withJoining(JOINER)));
            for (URI member : base.nodes()) {
                changes.add(base.withLeaving(member, ChangeKind.DECOMMISSION));
                changes.add(base.withLeaving(member, ChangeKind.REMOVENODE));
            }
            for (ClusterView view : changes) {
                ClusterChange change = view.change();
                Set<URI> newReplicas = newReplicas(new Placement(view));
                for (URI node : newReplicas) {
                    assertThat(change.gains(node)).as("%s gains keys in %s", node, change).isTrue();
                }
                assertThat(change.gains(change.node())).as("the changing node of %s", change)
                        .isEqualTo(change.kind() == ChangeKind.JOIN);
                if (change.kind() == ChangeKind.JOIN) {
                    assertThat(base.nodes()).noneMatch(change::gains);
                }
            }
        }
    }

    /** The nodes that some key's new replica set holds and its old set does not, over 2 000 keys. */
    private static Set<URI> newReplicas(Placement placement) {
        Set<URI> gained = new HashSet<>();
        for (int i = 0; i < 2_000; i++) {
            byte[] key = ("k-" + i).getBytes(StandardCharsets.UTF_8);
            List<Node> old = placement.oldReplicasAtMost(key, 3);
            for (Node node : placement.newReplicasAtMost(key, 3)) {
                if (!old.contains(node)) {
                    gained.add(node.url());
                }
            }
        }
        return gained;
    }

    private static List<URI> nodes(int size) {
        List<URI> nodes = new ArrayList<>();
        for (int i = 0; i < size; i++) {
            nodes.add(URI.create("http://node-" + i + ":8080"));
        }
        return nodes;
    }
}
