package dev.dht.membership.raft;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.dht.cluster.ChangeKind;
import dev.dht.cluster.ClusterView;
import dev.dht.testing.NodeProcess;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.apache.ratis.protocol.RaftGroup;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.util.FileSystemUtils;

/**
 * Three view logs in this JVM over loopback: a cluster forms once, a step computed from an old view is refused,
 * the log goes on after its leader is closed, a restarted server recovers its view from its own log, a voter back on
 * an empty disk cannot help elect a leader that misses a committed view, and a node added as a listener receives the
 * views.
 */
class ViewLogTest {
    private static final RaftPeers PEERS = new RaftPeers(1000, 5);
    @TempDir
    Path dir;
    private final List<URI> nodes = new ArrayList<>();
    private final Map<URI, ViewLog> logs = new ConcurrentHashMap<>();
    private final Map<URI, List<ClusterView>> applied = new ConcurrentHashMap<>();

    @AfterEach
    void close() {
        logs.values().forEach(ViewLog::close);
    }

    private ViewLog start(URI node, RaftGroup group) {
        applied.putIfAbsent(node, new CopyOnWriteArrayList<>());
        ViewLog viewLog = new ViewLog(node, node.getPort() + 1000, dir.resolve(node.getPort() + ""), null, null,
                view -> applied.get(node).add(view));
        viewLog.start(group);
        logs.put(node, viewLog);
        return viewLog;
    }

    private ClusterView formCluster(int size) throws IOException {
        for (int i = 0; i < size; i++) {
            nodes.add(URI.create("http://127.0.0.1:" + NodeProcess.freePort()));
        }
        ClusterView first = ClusterView.initial(nodes, 3);
        nodes.forEach(node -> start(node, PEERS.group(first)));
        ClusterView formed = leader().compareAndSet(0, first);
        await().atMost(Duration.ofSeconds(20))
                .until(() -> nodes.stream().allMatch(node -> logs.get(node).view() != null));
        return formed;
    }

    private ViewLog leader() {
        await().atMost(Duration.ofSeconds(20)).until(() -> logs.values().stream().anyMatch(ViewLog::isLeader));
        return logs.values().stream().filter(ViewLog::isLeader).findFirst().orElseThrow();
    }

    @Test
    void everyServerAppliesTheSameViewsAndAStaleStepIsRefused() throws IOException {
        ClusterView first = formCluster(3);
        ClusterView leaving = first.withLeaving(nodes.get(2), ChangeKind.DECOMMISSION);
        ViewLog follower = logs.values().stream().filter(log -> !log.isLeader()).findFirst().orElseThrow();
        assertThat(follower.compareAndSet(1, leaving)).isEqualTo(leaving);
        assertThatThrownBy(() -> follower.compareAndSet(1, first.withLeaving(nodes.get(1), ChangeKind.DECOMMISSION)))
                .isInstanceOf(ViewLog.Refused.class).hasMessageContaining("moved on");
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> nodes.forEach(node ->
                assertThat(applied.get(node)).containsExactly(first, leaving)));
    }

    @Test
    void theLogGoesOnWithoutItsLeaderAndARestartedServerRecoversItsView() throws IOException {
        ClusterView first = formCluster(3);
        ViewLog oldLeader = leader();
        URI oldLeaderNode = nodes.stream().filter(node -> logs.get(node) == oldLeader).findFirst().orElseThrow();
        oldLeader.close();
        logs.remove(oldLeaderNode);
        ClusterView next = first.withLeaving(oldLeaderNode, ChangeKind.REMOVENODE);
        assertThat(leader().compareAndSet(1, next)).isEqualTo(next);

        applied.get(oldLeaderNode).clear();
        ViewLog restarted = start(oldLeaderNode, RaftGroup.valueOf(RaftPeers.GROUP_ID));
        await().atMost(Duration.ofSeconds(20)).until(() -> next.equals(restarted.view()));
    }

    /**
     * A view committed by two of three voters, one of which then loses its disk while the other is down: the third
     * voter, which missed the view, gets no vote from the one on the empty disk (a server formatted without peers
     * votes for no candidate until the leader gave it the log's configuration), so no leader can forget the view.
     * Once its other holder is back the log goes on from it and the emptied voter catches up.
     */
    @Test
    void aVoterBackOnAnEmptyDiskCannotElectALeaderThatMissesACommittedView() throws IOException {
        ClusterView first = formCluster(3);
        URI leaderNode = node(leader());
        URI behind = nodes.stream().filter(node -> !node.equals(leaderNode)).findFirst().orElseThrow();
        URI emptied = nodes.stream().filter(node -> !node.equals(leaderNode) && !node.equals(behind))
                .findFirst().orElseThrow();
        stop(behind);
        ClusterView next = first.withLeaving(nodes.get(0), ChangeKind.DECOMMISSION);
        assertThat(logs.get(leaderNode).compareAndSet(1, next)).isEqualTo(next);
        await().atMost(Duration.ofSeconds(10)).until(() -> next.equals(logs.get(emptied).view()));

        stop(emptied);
        assertThat(FileSystemUtils.deleteRecursively(dir.resolve(emptied.getPort() + ""))).isTrue();
        stop(leaderNode);
        ViewLog missed = start(behind, RaftGroup.valueOf(RaftPeers.GROUP_ID));
        ViewLog empty = start(emptied, RaftGroup.valueOf(RaftPeers.GROUP_ID));
        await().during(Duration.ofSeconds(6)).atMost(Duration.ofSeconds(8))
                .until(() -> !missed.isLeader() && !empty.isLeader());
        assertThat(missed.view()).isEqualTo(first);

        ViewLog holder = start(leaderNode, RaftGroup.valueOf(RaftPeers.GROUP_ID));
        await().atMost(Duration.ofSeconds(20)).until(() -> next.equals(holder.view()) && next.equals(missed.view())
                && next.equals(empty.view()));
        assertThat(leader().view()).isEqualTo(next);
    }

    private URI node(ViewLog viewLog) {
        return nodes.stream().filter(node -> logs.get(node) == viewLog).findFirst().orElseThrow();
    }

    private void stop(URI node) {
        logs.remove(node).close();
    }

    /** Two members (one voter, the other a listener) and a joiner become three members, three voters. */
    @Test
    void oneVoterAndTwoListenersBecomeThreeVotersInOneStep() throws IOException {
        NodeProcess.freePorts(3).forEach(port -> nodes.add(URI.create("http://127.0.0.1:" + port)));
        RaftGroup oneVoter = RaftGroup.valueOf(RaftPeers.GROUP_ID, PEERS.peer(nodes.get(0), true),
                PEERS.peer(nodes.get(1), false), PEERS.peer(nodes.get(2), false));
        nodes.forEach(node -> start(node, oneVoter));
        ClusterView three = leader().compareAndSet(0, ClusterView.initial(nodes, 3));
        leader().reconfigure(PEERS.group(three));
        assertThat(leader().hasConfiguration(PEERS.group(three))).isTrue();
    }

    @Test
    void aNodeAddedAsListenerReceivesTheViews() throws IOException {
        ClusterView first = formCluster(3);
        URI joiner = URI.create("http://127.0.0.1:" + NodeProcess.freePort());
        ViewLog joining = start(joiner, RaftGroup.valueOf(RaftPeers.GROUP_ID));
        ClusterView withJoiner = leader().compareAndSet(1, first.withJoining(joiner));
        leader().reconfigure(PEERS.group(withJoiner));
        await().atMost(Duration.ofSeconds(20)).until(() -> withJoiner.equals(joining.view()));
        assertThat(leader().listeners()).containsExactly(RaftPeers.id(joiner));
    }
}
