package dev.dht.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dht.cluster.ClusterStart.Decision;
import java.net.URI;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The start-up decision over each case: what the data dir holds, what the seeds answer, and who this node is. */
class ClusterStartTest {
    private static final URI A = URI.create("http://a:8080");
    private static final URI B = URI.create("http://b:8080");
    private static final URI C = URI.create("http://c:8080");
    private static final URI D = URI.create("http://d:8080");
    private static final List<URI> NODES = List.of(A, B, C);

    private static ClusterView view(long epoch, URI... members) {
        return new ClusterView(epoch, 3, List.of(members).stream().map(node -> new Member(node, MemberState.NORMAL))
                .toList());
    }

    @Test
    void aStoredViewThatHoldsThisNodeDecidesWhateverTheSeedsSay() {
        ClusterView stored = view(4, A, B, C);
        Decision decision = ClusterStart.decide(stored, Map.of(B, view(9, B, C)), NODES, A, 3);
        assertThat(decision.kind()).isEqualTo(StartKind.STORED);
        assertThat(decision.view()).isEqualTo(stored);
        assertThat(decision.warnings()).isEmpty();
    }

    @Test
    void aStoredViewThatDoesNotHoldThisNodeIsRefused() {
        assertThatThrownBy(() -> ClusterStart.decide(view(5, B, C), Map.of(), NODES, A, 3))
                .isInstanceOf(ClusterStart.Refused.class).hasMessageContaining("has left the cluster")
                .hasMessageContaining("epoch 5");
    }

    @Test
    void settingsThatDifferFromTheStoredViewAreNamedAndTheViewApplies() {
        ClusterView stored = view(3, A, B);
        Decision decision = ClusterStart.decide(stored, Map.of(), NODES, A, 2);
        assertThat(decision.view()).isEqualTo(stored);
        assertThat(decision.warnings()).hasSize(2).anyMatch(line -> line.startsWith("dht.nodes"))
                .anyMatch(line -> line.startsWith("dht.replication-factor 2"));
    }

    @Test
    void anEmptyDataDirOfAMemberOfTheRunningClusterLostItsDataAndTakesTheNewestView() {
        Map<URI, ClusterView> answers = new LinkedHashMap<>();
        answers.put(B, view(3, A, B, C));
        answers.put(C, view(6, A, B, C));
        Decision decision = ClusterStart.decide(null, answers, NODES, A, 3);
        assertThat(decision.kind()).isEqualTo(StartKind.LOST_DATA);
        assertThat(decision.view().epoch()).isEqualTo(6);
    }

    @Test
    void anEmptyDataDirOfANodeTheRunningClusterDoesNotHoldJoins() {
        Decision removed = ClusterStart.decide(null, Map.of(B, view(7, B, C)), NODES, A, 3);
        assertThat(removed.kind()).isEqualTo(StartKind.JOINING);
        assertThat(removed.view().epoch()).isZero();
        Decision unlisted = ClusterStart.decide(null, Map.of(B, view(7, A, B, C)), NODES, D, 3);
        assertThat(unlisted.kind()).isEqualTo(StartKind.JOINING);
    }

    @Test
    void aListedNodeThatFindsNoRunningClusterIsAFoundingMember() {
        Decision silent = ClusterStart.decide(null, Map.of(), NODES, A, 3);
        assertThat(silent.kind()).isEqualTo(StartKind.FORMING);
        assertThat(silent.view()).isEqualTo(new ClusterView(0, 3, view(1, A, B, C).members()));
        Decision unformed = ClusterStart.decide(null, Map.of(B, silent.view(), C, silent.view()), NODES, A, 3);
        assertThat(unformed.kind()).isEqualTo(StartKind.FORMING);
    }

    @Test
    void anUnlistedNodeThatFindsNoRunningClusterWaitsToJoin() {
        Decision decision = ClusterStart.decide(null, Map.of(), NODES, D, 3);
        assertThat(decision.kind()).isEqualTo(StartKind.JOINING);
        assertThat(decision.reason()).contains("is not running yet");
    }
}
