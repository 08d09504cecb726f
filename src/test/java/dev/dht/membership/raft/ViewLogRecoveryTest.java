package dev.dht.membership.raft;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dht.cluster.ClusterView;
import dev.dht.cluster.Member;
import dev.dht.cluster.MemberState;
import java.net.URI;
import java.nio.file.Path;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;
import org.apache.ratis.protocol.RaftPeerId;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** When {@code dht.raft.recover=true} recovers the view log, and when it refuses to (it would fork a healthy log). */
class ViewLogRecoveryTest {
    private static final URI A = URI.create("http://a:8080");
    private static final URI B = URI.create("http://b:8080");
    private static final URI C = URI.create("http://c:8080");
    private static final URI D = URI.create("http://d:8080");
    private static final URI E = URI.create("http://e:8080");
    private static final ClusterView THREE = view(7, A, B, C);
    private static final ClusterView FIVE = view(9, A, B, C, D, E);

    @TempDir
    Path dataDir;

    @Test
    void theOnlySurvivorOfThreeVotersRecoversAndTheOthersAreLost() {
        ViewLogRecovery.Decision decision = ViewLogRecovery.decide(A, THREE, voters(A, B, C), Map.of(),
                Optional.empty());

        assertThat(decision.recovers()).as(decision.reason()).isTrue();
        assertThat(decision.lost()).containsExactlyInAnyOrder(B, C);
    }

    @Test
    void aMajorityOfTheVotersAnsweringRefusesIt() {
        ViewLogRecovery.Decision decision = ViewLogRecovery.decide(A, THREE, voters(A, B, C), Map.of(B, THREE),
                Optional.empty());

        assertThat(decision.recovers()).isFalse();
        assertThat(decision.reason()).contains("2 of the 3 voters").contains("fork");
    }

    @Test
    void twoSurvivorsOfFiveVotersRecoverAndTheAnsweringOneStaysAMember() {
        ViewLogRecovery.Decision decision = ViewLogRecovery.decide(A, FIVE, voters(A, B, C, D, E), Map.of(B, FIVE),
                Optional.empty());

        assertThat(decision.recovers()).as(decision.reason()).isTrue();
        assertThat(decision.lost()).containsExactlyInAnyOrder(C, D, E);
    }

    @Test
    void aMajorityOfEitherSideOfAConfigurationInTransitionRefusesIt() {
        List<Collection<RaftPeerId>> joint = List.of(ids(A, B, C), ids(A, D, E));

        assertThat(ViewLogRecovery.decide(A, FIVE, joint, Map.of(D, FIVE), Optional.empty()).recovers()).isFalse();
        assertThat(ViewLogRecovery.decide(A, FIVE, joint, Map.of(), Optional.empty()).recovers()).isTrue();
    }

    @Test
    void aMemberWithANewerEpochRefusesItThere() {
        ViewLogRecovery.Decision decision = ViewLogRecovery.decide(A, view(6, A, B, C), voters(A, B, C),
                Map.of(B, THREE), Optional.empty());

        assertThat(decision.recovers()).isFalse();
        assertThat(decision.reason()).contains(B + " holds epoch 7");
    }

    @Test
    void aLogRecoveredBeforeIsNotRecoveredAgain() {
        ViewLogRecovery.Decision decision = ViewLogRecovery.decide(A, THREE, voters(A, B, C), Map.of(),
                Optional.of("recovered-at=2026-01-01T00:00:00Z epoch=7 index=12\nlost=" + B + "\n"));

        assertThat(decision.recovers()).isFalse();
        assertThat(decision.reason()).contains("recovered already").contains(ViewLogRecovery.MARKER);
    }

    @Test
    void aNodeThatIsNoMemberHasNothingToRecover() {
        assertThat(ViewLogRecovery.decide(D, THREE, voters(A, B, C), Map.of(), Optional.empty()).recovers())
                .isFalse();
        assertThat(ViewLogRecovery.decide(D, null, voters(A, B, C), Map.of(), Optional.empty()).recovers())
                .isFalse();
    }

    @Test
    void theMarkerKeepsTheLostMembersUntilForgotten() {
        assertThat(ViewLogRecovery.lost(dataDir)).isEmpty();
        assertThat(ViewLogRecovery.epoch(dataDir)).isZero();

        ViewLogRecovery.keepLost(dataDir, Set.of(B)); // no marker: nothing to keep
        assertThat(ViewLogRecovery.lost(dataDir)).isEmpty();

        ViewLogRecovery.writeMarker(dataDir, "recovered-at=2026-01-01T00:00:00Z epoch=7 index=12", Set.of(B, C));
        assertThat(ViewLogRecovery.lost(dataDir)).containsExactlyInAnyOrder(B, C);
        assertThat(ViewLogRecovery.epoch(dataDir)).isEqualTo(7);
        ViewLogRecovery.keepLost(dataDir, Set.of(C));
        assertThat(ViewLogRecovery.lost(dataDir)).containsExactly(C);
        assertThat(ViewLogRecovery.epoch(dataDir)).isEqualTo(7);
    }

    private static ClusterView view(long epoch, URI... nodes) {
        return new ClusterView(epoch, 3, List.of(nodes).stream().map(node -> new Member(node, MemberState.NORMAL))
                .toList());
    }

    private static List<Collection<RaftPeerId>> voters(URI... nodes) {
        return List.of(ids(nodes), List.of());
    }

    private static Collection<RaftPeerId> ids(URI... nodes) {
        return List.of(nodes).stream().map(RaftPeers::id).collect(Collectors.toSet());
    }
}
