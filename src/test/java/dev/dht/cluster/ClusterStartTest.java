package dev.dht.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dht.cluster.ClusterStart.Decision;
import dev.dht.cluster.ClusterStart.Founding;
import java.net.URI;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
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
        assertThat(decision.waitsFor()).as("a joiner learns the cluster's id from a running member first")
                .contains("seed");
    }

    @Test
    void aNodeThatFindsTheRunningClusterTakesItsId() {
        UUID id = UUID.randomUUID();
        ClusterView running = new ClusterView(7, 3, view(7, A, B, C).members(), null, id);
        Decision lost = ClusterStart.decide(null, Map.of(B, running), NODES, A, 3);
        assertThat(lost.kind()).isEqualTo(StartKind.LOST_DATA);
        assertThat(lost.view().cluster()).isEqualTo(id);
        Decision joiner = ClusterStart.decide(null, Map.of(B, running), NODES, D, 3);
        assertThat(joiner.kind()).isEqualTo(StartKind.JOINING);
        assertThat(joiner.waitsFor()).isNull();
        assertThat(joiner.view().cluster()).isEqualTo(id);
    }

    @Test
    void theFirstFoundingMemberNamesTheNewClusterIdOnceEveryOneAnswersUnformed() {
        UUID fresh = UUID.randomUUID();
        ClusterView undecided = new ClusterView(0, 3, view(1, A, B, C).members());
        assertThat(ClusterStart.founding(A, NODES, Map.of(B, undecided), fresh).waitsFor()).contains(C.toString());
        Founding first = ClusterStart.founding(A, NODES, Map.of(B, undecided, C, undecided), fresh);
        assertThat(first.cluster()).isEqualTo(fresh);

        assertThat(ClusterStart.founding(B, NODES, Map.of(A, undecided, C, undecided), UUID.randomUUID()).waitsFor())
                .as("the first one has named no id yet").contains(A.toString());
        ClusterView named = new ClusterView(0, 3, undecided.members(), null, fresh);
        Founding second = ClusterStart.founding(B, NODES, Map.of(A, named), UUID.randomUUID());
        assertThat(second.cluster()).isEqualTo(fresh);

        Founding firstAgain = ClusterStart.founding(A, NODES, Map.of(B, named, C, undecided), UUID.randomUUID());
        assertThat(firstAgain.cluster()).as("started again before the cluster formed").isEqualTo(fresh);
    }

    @Test
    void aFoundingMemberWhoseClusterRunsWithoutItTakesThatCluster() {
        ClusterView running = new ClusterView(4, 3, view(4, A, B, C).members(), null, UUID.randomUUID());
        ClusterView undecided = new ClusterView(0, 3, running.members());
        Founding lost = ClusterStart.founding(A, NODES, Map.of(B, running, C, undecided), UUID.randomUUID());
        assertThat(lost.running()).isEqualTo(running);
        assertThat(ClusterStart.founding(A, NODES, Map.of(B, view(4, B, C)), UUID.randomUUID()).waitsFor())
                .as("a cluster that runs without this node is no new one").isNotNull();
    }
}
