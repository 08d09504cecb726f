package dev.dht.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The old and new replica sets of a key while a member joins or leaves: the joiner is never an old replica, the
 * leaver never a new one, and a key changes replicas only where the joiner or leaver is among them.
 */
class PlacementTest {
    private static final List<URI> NODES = List.of(URI.create("http://a:8080"), URI.create("http://b:8080"),
            URI.create("http://c:8080"), URI.create("http://d:8080"));
    private static final URI D = NODES.get(3);
    private static final URI C = NODES.get(2);

    @Test
    void withEveryMemberNormalBothSetsAreTheRoutersReplicas() {
        Placement placement = new Placement(view(MemberState.NORMAL, MemberState.NORMAL));
        ShardRouter router = new ShardRouter(NODES.stream().map(node -> new Node(node, false)).toList());
        for (byte[] key : keys(500)) {
            List<URI> expected = router.replicas(key, 3).stream().map(Node::url).toList();
            assertThat(urls(placement.oldReplicas(key, 3))).isEqualTo(expected);
            assertThat(urls(placement.newReplicas(key, 3))).isEqualTo(expected);
        }
    }

    @Test
    void aJoinerIsOnlyANewReplicaAndDisplacesOneOldReplicaOfTheKeysItGains() {
        Placement placement = new Placement(view(MemberState.NORMAL, MemberState.JOINING));
        int gained = 0;
        for (byte[] key : keys(1000)) {
            List<URI> before = urls(placement.oldReplicas(key, 3));
            List<URI> after = urls(placement.newReplicas(key, 3));
            assertThat(before).doesNotContain(D).containsExactlyInAnyOrderElementsOf(
                    urls(new Placement(ClusterView.initial(NODES.subList(0, 3), 3)).newReplicas(key, 3)));
            if (after.contains(D)) {
                gained++;
                List<URI> kept = new ArrayList<>(after);
                kept.remove(D);
                assertThat(before).as("one old replica makes room for the joiner").containsAll(kept);
            } else {
                assertThat(after).as("a key the joiner does not gain keeps its replicas").isEqualTo(before);
            }
        }
        assertThat(gained).as("about from/(n+1) = 3/4 of the keys").isBetween(650, 850);
    }

    @Test
    void aLeaverIsOnlyAnOldReplica() {
        Placement placement = new Placement(view(MemberState.LEAVING, MemberState.NORMAL));
        for (byte[] key : keys(500)) {
            assertThat(urls(placement.oldReplicas(key, 3))).isEqualTo(
                    urls(new Placement(ClusterView.initial(NODES, 3)).oldReplicas(key, 3)));
            assertThat(urls(placement.newReplicas(key, 3))).doesNotContain(C);
        }
    }

    @Test
    void aSetNeedsEnoughMembers() {
        Placement placement = new Placement(view(MemberState.NORMAL, MemberState.JOINING));
        assertThatThrownBy(() -> placement.oldReplicas(key(1), 4)).isInstanceOf(IllegalArgumentException.class);
        assertThat(placement.newReplicas(key(1), 4)).hasSize(4);
    }

    /**
     * A cluster below its replication factor that grows: one member, then two. A record written with from 3 has one
     * old replica (the one member) and two new ones, so the joiner gains every key; each set holds as many replicas
     * as it has members up to from. Capping from at the smaller set (1) gave the joiner only the keys it comes first
     * for, about half, and the keys it missed stayed on one node after the change (a 2/3 read then answered 404).
     */
    @Test
    void aJoinerOfAClusterBelowItsReplicationFactorGainsEveryKey() {
        Placement growing = new Placement(ClusterView.initial(NODES.subList(0, 1), 3).withJoining(NODES.get(1)));
        Placement toThree = new Placement(ClusterView.initial(NODES.subList(0, 2), 3).withJoining(C));
        for (byte[] key : keys(200)) {
            int from = growing.placedFrom(3);
            assertThat(urls(growing.oldReplicasAtMost(key, from))).containsExactly(NODES.get(0));
            assertThat(urls(growing.newReplicasAtMost(key, from))).containsExactlyInAnyOrder(NODES.get(0), NODES.get(1));
            assertThat(growing.replicates(NODES.get(1), key, 3)).isTrue();
            assertThat(urls(toThree.newReplicasAtMost(key, toThree.placedFrom(3)))).hasSize(3).contains(C);
        }
        assertThat(growing.size()).as("the largest from both sets hold, for client requests").isEqualTo(1);
    }

    /** A and B normal, C (third) and D (fourth) in the given states (at most one of them not NORMAL). */
    private static ClusterView view(MemberState c, MemberState d) {
        ClusterView normal = ClusterView.initial(NODES, 3);
        if (d == MemberState.JOINING) {
            return ClusterView.initial(NODES.subList(0, 3), 3).withJoining(D);
        }
        return c == MemberState.LEAVING ? normal.withLeaving(C, ChangeKind.DECOMMISSION) : normal;
    }

    private static List<URI> urls(List<Node> nodes) {
        return nodes.stream().map(Node::url).toList();
    }

    private static List<byte[]> keys(int count) {
        List<byte[]> keys = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            keys.add(key(i));
        }
        return keys;
    }

    private static byte[] key(int i) {
        return ("key-" + i).getBytes(StandardCharsets.UTF_8);
    }
}
