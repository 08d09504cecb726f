package dev.dht.membership;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dht.cluster.ChangeKind;
import dev.dht.cluster.ClusterView;
import dev.dht.cluster.Node;
import dev.dht.cluster.Placement;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Which nodes run a cleanup pass after a change ({@link OwnershipCleanup#mayHoldUnreplicated}), checked against the
 * placement itself: a node skips the pass only where no key it replicated before the change moved away from it.
 * Nodes a, b, c and d; replication factor 3.
 */
class OwnershipCleanupScopeTest {
    private static final URI A = URI.create("http://a:8080");
    private static final URI B = URI.create("http://b:8080");
    private static final URI C = URI.create("http://c:8080");
    private static final URI D = URI.create("http://d:8080");
    private static final int KEYS = 3_000;

    @Test
    void afterAJoinEveryOldMemberCleansUpAndTheJoinerDoesNot() {
        ClusterView joining = ClusterView.initial(List.of(A, B, C), 3).withJoining(D);
        ClusterView joined = completed(joining);

        for (URI node : List.of(A, B, C)) {
            assertThat(losesKeys(joining, node)).as("%s loses keys to the joiner", node).isTrue();
            assertThat(OwnershipCleanup.mayHoldUnreplicated(joining.change(), joined, node)).isTrue();
        }
        assertThat(losesKeys(joining, D)).isFalse();
        assertThat(OwnershipCleanup.mayHoldUnreplicated(joining.change(), joined, D)).isFalse();
    }

    @Test
    void afterADecommissionOrRemovenodeNoRemainingMemberLosesAKeySoNoneCleansUp() {
        for (ChangeKind kind : List.of(ChangeKind.DECOMMISSION, ChangeKind.REMOVENODE)) {
            ClusterView leaving = ClusterView.initial(List.of(A, B, C, D), 3).withLeaving(D, kind);
            ClusterView left = completed(leaving);
            for (URI node : List.of(A, B, C)) {
                assertThat(losesKeys(leaving, node)).as("%s in a %s", node, kind).isFalse();
                assertThat(OwnershipCleanup.mayHoldUnreplicated(leaving.change(), left, node)).isFalse();
            }
        }
    }

    @Test
    void anAbortedDecommissionLeavesWhatTheGainersStreamedSoTheyCleanUp() {
        ClusterView leaving = ClusterView.initial(List.of(A, B, C, D), 3).withLeaving(D, ChangeKind.DECOMMISSION);
        ClusterView aborted = leaving.advanced().aborted();

        for (URI node : List.of(A, B, C)) {
            assertThat(gainsKeys(leaving, node)).as("%s gained keys it gives back", node).isTrue();
            assertThat(OwnershipCleanup.mayHoldUnreplicated(leaving.change(), aborted, node)).isTrue();
        }
        assertThat(gainsKeys(leaving, D)).isFalse();
        assertThat(OwnershipCleanup.mayHoldUnreplicated(leaving.change(), aborted, D)).isFalse();
    }

    @Test
    void anAbortedJoinLeavesNothingOnTheMembers() {
        ClusterView joining = ClusterView.initial(List.of(A, B, C), 3).withJoining(D);
        ClusterView aborted = joining.advanced().aborted();

        for (URI node : List.of(A, B, C)) {
            assertThat(gainsKeys(joining, node)).isFalse();
            assertThat(OwnershipCleanup.mayHoldUnreplicated(joining.change(), aborted, node)).isFalse();
        }
    }

    private static ClusterView completed(ClusterView changing) {
        ClusterView view = changing;
        while (view.change() != null) {
            view = view.advanced();
        }
        return view;
    }

    /** True if {@code node} is an old replica but not a new one of some key, at some {@code from}. */
    private static boolean losesKeys(ClusterView changing, URI node) {
        return moves(changing, node, true);
    }

    /** True if {@code node} is a new replica but not an old one of some key, at some {@code from}. */
    private static boolean gainsKeys(ClusterView changing, URI node) {
        return moves(changing, node, false);
    }

    private static boolean moves(ClusterView changing, URI node, boolean away) {
        Placement placement = new Placement(changing);
        for (int i = 0; i < KEYS; i++) {
            byte[] key = ("k" + i).getBytes(StandardCharsets.UTF_8);
            for (int from = 1; from <= placement.size(); from++) {
                List<Node> before = placement.oldReplicas(key, from);
                List<Node> after = placement.newReplicas(key, from);
                List<Node> held = away ? before : after;
                List<Node> kept = away ? after : before;
                if (Placement.contains(held, node) && !Placement.contains(kept, node)) {
                    return true;
                }
            }
        }
        return false;
    }
}
