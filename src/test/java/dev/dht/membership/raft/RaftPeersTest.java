package dev.dht.membership.raft;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dht.cluster.ChangeKind;
import dev.dht.cluster.ChangePhase;
import dev.dht.cluster.ClusterView;
import dev.dht.cluster.MemberState;
import java.net.URI;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.apache.ratis.proto.RaftProtos.RaftPeerRole;
import org.apache.ratis.protocol.RaftGroup;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The voters of the view log over every change a cluster of 3, 4 and 5 members can run (a join, the decommission
 * and the removenode of each member), at every phase, forward, rolled back from each phase, and a decommission turned
 * into a removenode at each phase: after the death of any one member (for a removenode: of the removed node, dead by
 * definition) a majority of the voters is alive, both in the configuration of each view and in the one of the view
 * before it (Raft's joint consensus needs both while the configuration changes between them). Views of fewer than
 * three members are left out: a cluster of two has one voter (docs/membership.md, Limits).
 */
class RaftPeersTest {
    private static final URI JOINER = URI.create("http://node-new:8080");

    @ParameterizedTest(name = "dht.raft.voters={0}")
    @ValueSource(ints = {3, 5, 7})
    void anySingleDeathLeavesAMajorityOfVotersAliveAtEveryStepOfEveryChange(int maxVoters) {
        RaftPeers peers = new RaftPeers(1000, maxVoters);
        int checked = 0;
        Set<String> phases = new HashSet<>();
        for (int size = 3; size <= 5; size++) {
            ClusterView base = ClusterView.initial(nodes(size), 3);
            List<Step> steps = new ArrayList<>(steps(base.withJoining(JOINER), null, base));
            for (URI member : base.nodes()) {
                steps.addAll(steps(base.withLeaving(member, ChangeKind.DECOMMISSION), null, base));
                steps.addAll(steps(base.withLeaving(member, ChangeKind.REMOVENODE), member, base));
            }
            for (Step step : steps) {
                if (step.before().members().size() < 3 || step.after().members().size() < 3) {
                    continue;
                }
                Set<URI> deaths = step.dead() != null ? Set.of(step.dead()) : union(step.before(), step.after());
                for (URI dead : deaths) {
                    for (ClusterView view : List.of(step.before(), step.after())) {
                        if (view.change() != null) {
                            phases.add(view.change().kind() + " " + view.change().phase());
                        }
                        List<URI> voters = peers.voters(view);
                        long alive = voters.stream().filter(voter -> !voter.equals(dead)).count();
                        assertThat(alive).as("voters %s of %s (dht.raft.voters=%d) after %s died", voters, view,
                                maxVoters, dead).isGreaterThan(voters.size() / 2);
                        checked++;
                    }
                }
            }
        }
        assertThat(checked).as("configurations checked").isGreaterThan(500);
        for (ChangeKind kind : ChangeKind.values()) {
            for (ChangePhase phase : ChangePhase.values()) {
                assertThat(phases).as("phases checked").contains(kind + " " + phase);
            }
        }
    }

    @ParameterizedTest(name = "dht.raft.voters={0}")
    @ValueSource(ints = {1, 2, 3, 4, 5})
    void votersAreAnOddNumberOfMembersThatAreNotJoiningAndAtMostTheSetting(int maxVoters) {
        RaftPeers peers = new RaftPeers(1000, maxVoters);
        for (int size = 1; size <= 6; size++) {
            ClusterView base = ClusterView.initial(nodes(size), 3);
            List<ClusterView> views = new ArrayList<>(List.of(base));
            views.addAll(forward(base.withJoining(JOINER)));
            if (size > 1) {
                views.addAll(forward(base.withLeaving(base.nodes().get(0), ChangeKind.DECOMMISSION)));
            }
            for (ClusterView view : views) {
                List<URI> voters = peers.voters(view);
                assertThat(voters.size() % 2).as("voters of %s", view).isEqualTo(1);
                assertThat(voters.size()).isLessThanOrEqualTo(maxVoters);
                assertThat(voters).allMatch(voter -> view.state(voter).orElseThrow() != MemberState.JOINING);
                assertThat(peers.group(view).getPeers()).hasSize(view.members().size());
            }
        }
    }

    /** One step of a change: the view before and the view after, and the node dead by definition (or null). */
    private record Step(ClusterView before, ClusterView after, URI dead) {
    }

    /**
     * Every step of the change that {@code first} starts from {@code base}: forward to its end, rolled back from each
     * phase, and (a decommission) turned into a removenode of its leaver at each phase and then taken forward.
     */
    private static List<Step> steps(ClusterView first, URI dead, ClusterView base) {
        List<Step> steps = new ArrayList<>();
        steps.add(new Step(base, first, dead));
        ClusterView view = first;
        while (view.change() != null) {
            if (!view.change().rollingBack()) {
                addPath(steps, view, view.aborted(), dead);
            }
            if (view.change().kind() == ChangeKind.DECOMMISSION) {
                ClusterView removing = view.asRemovenode();
                addPath(steps, view, removing, removing.change().node());
            }
            ClusterView next = view.advanced();
            steps.add(new Step(view, next, dead));
            view = next;
        }
        return steps;
    }

    /** The step from {@code view} to {@code next}, then every step forward from {@code next} to the end. */
    private static void addPath(List<Step> steps, ClusterView view, ClusterView next, URI dead) {
        steps.add(new Step(view, next, dead));
        for (ClusterView from = next; from.change() != null; from = from.advanced()) {
            steps.add(new Step(from, from.advanced(), dead));
        }
    }

    /** {@code first} and every view after it on the way forward, to the end of its change. */
    private static List<ClusterView> forward(ClusterView first) {
        List<ClusterView> views = new ArrayList<>();
        for (ClusterView view = first; ; view = view.advanced()) {
            views.add(view);
            if (view.change() == null) {
                return views;
            }
        }
    }

    private static Set<URI> union(ClusterView before, ClusterView after) {
        Set<URI> nodes = new HashSet<>(before.nodes());
        nodes.addAll(after.nodes());
        return nodes;
    }

    /**
     * A node that starts its log to wait for the leader's entries: a member of the view is its group's only peer, a
     * listener (it votes for nobody until the log's configuration reaches it), at its Raft port; a node outside the
     * view has no peer. Both in the cluster's group.
     */
    @Test
    void aMemberAwaitsTheLogAsItsOwnOnlyListenerAndANonMemberWithNoPeer() {
        RaftPeers peers = new RaftPeers(1000, 5);
        ClusterView view = ClusterView.initial(nodes(3), 3);
        URI member = view.nodes().get(1);
        RaftGroup awaiting = peers.awaitingGroup(view, member);
        assertThat(awaiting.getGroupId()).isEqualTo(RaftPeers.groupId(view.cluster()));
        assertThat(awaiting.getPeers()).singleElement().satisfies(peer -> {
            assertThat(peer.getId()).isEqualTo(RaftPeers.id(member));
            assertThat(peer.getStartupRole()).isEqualTo(RaftPeerRole.LISTENER);
            assertThat(peer.getAddress()).isEqualTo(member.getHost() + ":" + (member.getPort() + 1000));
        });
        RaftGroup outside = peers.awaitingGroup(view, JOINER);
        assertThat(outside.getGroupId()).isEqualTo(RaftPeers.groupId(view.cluster()));
        assertThat(outside.getPeers()).isEmpty();
    }

    private static List<URI> nodes(int size) {
        List<URI> nodes = new ArrayList<>();
        for (int i = 0; i < size; i++) {
            nodes.add(URI.create("http://node-" + i + ":8080"));
        }
        return nodes;
    }
}
