package dev.dht.replication;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dht.cluster.ChangeKind;
import dev.dht.cluster.ClusterView;
import dev.dht.cluster.Membership;
import dev.dht.cluster.Node;
import dev.dht.cluster.Placement;
import dev.dht.node.HybridLogicalClock;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.URI;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A request whose {@code from} its handler checked under three members, coordinated under the next view, in which
 * one of them is being removed (two members keep replicas): the coordinator refuses it as
 * {@link ClusterTooSmallException} (400, "from 3 exceeds the cluster size 2"), stores nothing and leaves the view's
 * request count as it found it, so the membership step that waits for that view's requests is not held: not a
 * bare {@link IllegalArgumentException} (500 "internal error") for a write, nor, for a read, an answer from the old
 * set, the leaving member included, in this phase and that 500 after the read switch, its view left counted. No sockets: in-memory replicas.
 */
class ShrunkClusterRequestTest {
    private static final List<URI> NODES = List.of(URI.create("http://a:8080"), URI.create("http://b:8080"),
            URI.create("http://c:8080"));
    private static final ReplicationFactor TWO_OF_THREE = new ReplicationFactor(2, 3);

    private final ClusterView removing = ClusterView.initial(NODES, 3).withLeaving(NODES.get(2), ChangeKind.REMOVENODE);
    private final Membership membership = new Membership(NODES.get(0), removing, null);
    private final Map<Node, InMemoryReplica> replicas = new HashMap<>();
    private final Coordinator coordinator;

    ShrunkClusterRequestTest() {
        Map<Node, Replica> byNode = new HashMap<>();
        for (Node node : new Placement(removing, NODES.get(0)).members()) {
            InMemoryReplica replica = new InMemoryReplica(node.self() ? Replica.IN_PROCESS : Replica.PEER_UP);
            replicas.put(node, replica);
            byNode.put(node, replica);
        }
        coordinator = new Coordinator(membership, FixedReplicas.of(byNode), new HybridLogicalClock(),
                Duration.ofSeconds(5), Duration.ZERO, new SimpleMeterRegistry());
    }

    @Test
    void aWriteIsRefusedAsTooLargeAFromAndStoresNothing() {
        assertThat(membership.placement().size()).as("members that keep replicas through the removal").isEqualTo(2);

        assertThatThrownBy(() -> coordinator.write(new WriteRequest("k", new byte[] {1}, TWO_OF_THREE, null))
                .block(Duration.ofSeconds(5)))
                .isInstanceOf(ClusterTooSmallException.class)
                .hasMessage("from 3 exceeds the cluster size 2");
        assertThatThrownBy(() -> coordinator.write(WriteRequest.delete("k", TWO_OF_THREE))
                .block(Duration.ofSeconds(5)))
                .isInstanceOf(ClusterTooSmallException.class);
        for (InMemoryReplica replica : replicas.values()) {
            assertThat(replica.read("k").block()).isEmpty();
        }
        assertDrained();
    }

    @Test
    void aReadIsRefusedAsTooLargeAFromAndHoldsNoView() {
        assertThatThrownBy(() -> coordinator.get("k", TWO_OF_THREE).block(Duration.ofSeconds(5)))
                .isInstanceOf(ClusterTooSmallException.class)
                .hasMessage("from 3 exceeds the cluster size 2");
        assertDrained();
    }

    @Test
    void aFromTheViewCanGiveIsServed() {
        ReplicationFactor twoOfTwo = new ReplicationFactor(2, 2);
        coordinator.write(new WriteRequest("k", new byte[] {7}, twoOfTwo, null)).block(Duration.ofSeconds(5));

        assertThat(coordinator.get("k", twoOfTwo).block(Duration.ofSeconds(5))).hasValueSatisfying(
                record -> assertThat(record.value()).containsExactly(7));
        assertDrained();
    }

    /** The refused requests exited their view: a step waiting for the view after it goes on at once. */
    private void assertDrained() {
        assertThat(membership.adopt(removing.advanced())).isTrue();
        membership.drained(membership.epoch(), Duration.ofHours(1)).block(Duration.ofSeconds(5));
    }
}
