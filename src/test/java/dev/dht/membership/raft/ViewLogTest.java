package dev.dht.membership.raft;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.dht.cluster.ChangeKind;
import dev.dht.cluster.ClusterView;
import dev.dht.testing.NodeProcess;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.apache.ratis.RaftConfigKeys;
import org.apache.ratis.client.RaftClient;
import org.apache.ratis.client.RaftClientConfigKeys;
import org.apache.ratis.conf.RaftProperties;
import org.apache.ratis.proto.RaftProtos.AppendEntriesRequestProto;
import org.apache.ratis.proto.RaftProtos.LogEntryProto;
import org.apache.ratis.proto.RaftProtos.RaftPeerRole;
import org.apache.ratis.protocol.RaftClientReply;
import org.apache.ratis.protocol.RaftGroup;
import org.apache.ratis.protocol.RaftPeer;
import org.apache.ratis.protocol.RaftPeerId;
import org.apache.ratis.protocol.exceptions.ReconfigurationTimeoutException;
import org.apache.ratis.retry.RetryPolicies;
import org.apache.ratis.rpc.SupportedRpcType;
import org.apache.ratis.server.RaftServer;
import org.apache.ratis.server.RaftServerConfigKeys;
import org.apache.ratis.util.CodeInjectionForTesting;
import org.apache.ratis.util.SizeInBytes;
import org.apache.ratis.util.TimeDuration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.util.FileSystemUtils;

/**
 * Three view logs in this JVM over loopback: a cluster forms once, a step computed from an old view is refused,
 * the log goes on after its leader is closed, a restarted server recovers its view from its own log, a voter back on
 * an empty disk cannot help elect a leader that misses a committed view but, its server running throughout, gets an
 * idle log back and votes, and a node added as a listener receives the views (also by a snapshot's installation once
 * the log was purged). One voter with two listeners becomes three
 * voters in one step; a server whose part of the group was closed is started again and applies the next view; a
 * joiner too slow for its first staging is added by the next reconfiguration.
 */
class ViewLogTest {
    private static final RaftPeers PEERS = new RaftPeers(1000, 5);
    /** Ratis's injection point at the start of a follower's handling of an append (RaftServerImpl.APPEND_ENTRIES). */
    private static final String RAFT_APPEND_ENTRIES = "RaftServerImpl.appendEntries";
    @TempDir
    Path dir;
    private final List<URI> nodes = new ArrayList<>();
    private final Map<URI, ViewLog> logs = new ConcurrentHashMap<>();
    private final Map<URI, List<ClusterView>> applied = new ConcurrentHashMap<>();
    /** The Ratis settings of the logs a test starts: the product's unless the test compacts the log early. */
    private Consumer<RaftProperties> tuning = properties -> { };

    @AfterEach
    void close() {
        logs.values().forEach(ViewLog::close);
    }

    private ViewLog start(URI node, RaftGroup group) {
        applied.putIfAbsent(node, new CopyOnWriteArrayList<>());
        ViewLog viewLog = new ViewLog(node, node.getPort() + 1000, dir.resolve(node.getPort() + ""), null, null,
                view -> applied.get(node).add(view), tuning);
        viewLog.start(group);
        logs.put(node, viewLog);
        return viewLog;
    }

    /** Starts the log of {@code node} as the product starts a member's or a joiner's ({@link ViewLog#startAwaiting}). */
    private ViewLog startAwaiting(URI node, ClusterView view) {
        applied.putIfAbsent(node, new CopyOnWriteArrayList<>());
        ViewLog viewLog = new ViewLog(node, node.getPort() + 1000, dir.resolve(node.getPort() + ""), null, null,
                applied.get(node)::add, tuning);
        viewLog.startAwaiting(PEERS, view, null);
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
     * A server whose division of the group Ratis closed (as it does when its state-machine updater fails; its RPC
     * server then refuses every append as not ready) says so ({@link ViewLog#problem}, which makes the node not
     * ready), is started again from its storage by the watchdog, and applies the next view.
     */
    @Test
    void aServerWhoseGroupDivisionClosedIsStartedAgainAndAppliesTheNextView() throws IOException {
        ClusterView first = formCluster(3);
        ViewLog follower = logs.values().stream().filter(log -> !log.isLeader()).findFirst().orElseThrow();
        follower.server().getDivision(RaftPeers.GROUP_ID).close();
        List<String> problems = new CopyOnWriteArrayList<>();
        await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(50)).until(() -> {
            String problem = follower.problem();
            if (problem != null) {
                problems.add(problem);
            }
            return !problems.isEmpty() && problem == null;
        });
        assertThat(problems).first().asString().containsPattern("CLOS(ING|ED)");   // seen while Ratis closes it, or after
        ClusterView next = first.withLeaving(nodes.get(0), ChangeKind.DECOMMISSION);
        assertThat(leader().compareAndSet(1, next)).isEqualTo(next);
        await().atMost(Duration.ofSeconds(20)).until(() -> next.equals(follower.view()));
    }

    /**
     * A view committed by two of three voters, one of which then loses its disk while the other is down: the third
     * voter, which missed the view, gets no vote from the one on the empty disk (started as it is by the product, its
     * own only listener, {@link ViewLog#startAwaiting}, it votes for no candidate until the leader gave it the log's
     * configuration), so no leader can forget the view.
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
        ViewLog empty = startAwaiting(emptied, next);
        await().during(Duration.ofSeconds(6)).atMost(Duration.ofSeconds(8))
                .until(() -> !missed.isLeader() && !empty.isLeader());
        assertThat(missed.view()).isEqualTo(first);

        ViewLog holder = start(leaderNode, RaftGroup.valueOf(RaftPeers.GROUP_ID));
        await().atMost(Duration.ofSeconds(20)).until(() -> next.equals(holder.view()) && next.equals(missed.view())
                && next.equals(empty.view()));
        assertThat(leader().view()).isEqualTo(next);
    }

    /**
     * A voter back on an empty disk while the log is idle and the leader retries it only every 5 s (Ratis's default
     * once a follower has been dead for about 20 s; this test's retry policy gets there after one failure), started
     * as the product starts it ({@link ViewLog#startAwaiting}), and the first append that brings it entries is slow
     * (held 3 s here, longer than an election timeout, as on a loaded machine): its server runs throughout (no
     * {@link ViewLog#problem}), it gets the log although nothing else is appended, and it votes: once the leader is
     * gone, it and the third voter elect a leader that holds the next view.
     *
     * <p>Fails on the code before: started in an empty group, the leader's first heartbeat started its election timer;
     * the timer fired before the entries came and the election, finding the server in no configuration, closed its
     * part of the group, after each restart again (NemesisIT's wiped member in a CI run). Nor did the log come back
     * while it was idle: the leader sent heartbeats only, as Ratis resends nothing below the index it last saw that
     * member hold.
     */
    @Test
    void aVoterBackOnAnEmptyDiskRunsThroughoutGetsTheIdleLogBackAndVotes() throws IOException {
        tuning = properties -> RaftServerConfigKeys.Log.Appender.setRetryPolicy(properties, "1ms,1, 5s,1000");
        ClusterView first = formCluster(3);
        URI leaderNode = node(leader());
        URI emptied = nodes.stream().filter(node -> !node.equals(leaderNode)).findFirst().orElseThrow();
        stop(emptied);
        assertThat(FileSystemUtils.deleteRecursively(dir.resolve(emptied.getPort() + ""))).isTrue();
        sleepUninterruptibly(Duration.ofSeconds(2));   // the leader's appends to it fail: its retries go 5 s apart

        RaftPeerId emptiedId = RaftPeers.id(emptied);
        AtomicBoolean held = new AtomicBoolean();
        CodeInjectionForTesting.put(RAFT_APPEND_ENTRIES, (localId, leaderId, args) -> {
            if (emptiedId.equals(localId) && args.length > 1 && args[1] instanceof AppendEntriesRequestProto append
                    && append.getEntriesCount() > 0 && held.compareAndSet(false, true)) {
                sleepUninterruptibly(Duration.ofSeconds(3));
            }
            return true;
        });
        List<String> problems = new CopyOnWriteArrayList<>();
        ScheduledExecutorService watcher = Executors.newSingleThreadScheduledExecutor();
        try {
            ViewLog empty = startAwaiting(emptied, first);
            watcher.scheduleWithFixedDelay(() -> {
                String problem = empty.problem();
                if (problem != null) {
                    problems.add(problem);
                }
            }, 0, 50, TimeUnit.MILLISECONDS);
            await().atMost(Duration.ofSeconds(25)).until(() -> first.equals(empty.view()));
            assertThat(held).as("an append with entries was held").isTrue();
            ClusterView next = first.withLeaving(leaderNode, ChangeKind.DECOMMISSION);
            assertThat(logs.get(leaderNode).compareAndSet(1, next)).isEqualTo(next);
            await().atMost(Duration.ofSeconds(15)).until(() -> next.equals(empty.view()));
            stop(leaderNode);
            assertThat(leader().view()).isEqualTo(next);
        } finally {
            watcher.shutdownNow();
            CodeInjectionForTesting.remove(RAFT_APPEND_ENTRIES);
        }
        assertThat(problems).as("the emptied voter's problems").isEmpty();
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

    /**
     * A listener made a voter in the place of another voter (a decommission: the leaver steps down, the next member
     * steps up) takes part in the next election: the leader closed right after the change, the new voter and the
     * remaining old one elect a leader, and the log goes on. (Ratis before 3.2.2 left such a listener a listener,
     * so it voted for nobody and the two could never elect one.)
     */
    @Test
    void aListenerMadeAVoterVotesOnceTheLeaderIsGone() throws IOException {
        NodeProcess.freePorts(4).forEach(port -> nodes.add(URI.create("http://127.0.0.1:" + port)));
        RaftGroup first = RaftGroup.valueOf(RaftPeers.GROUP_ID, PEERS.peer(nodes.get(0), true),
                PEERS.peer(nodes.get(1), true), PEERS.peer(nodes.get(2), true), PEERS.peer(nodes.get(3), false));
        nodes.forEach(node -> start(node, first));
        ClusterView four = leader().compareAndSet(0, ClusterView.initial(nodes, 3));
        URI leaderNode = node(leader());
        URI stays = nodes.stream().limit(3).filter(node -> !node.equals(leaderNode)).findFirst().orElseThrow();
        URI stepsDown = nodes.stream().limit(3).filter(node -> !node.equals(leaderNode) && !node.equals(stays))
                .findFirst().orElseThrow();
        URI stepsUp = nodes.get(3);
        RaftGroup swapped = RaftGroup.valueOf(RaftPeers.GROUP_ID, PEERS.peer(leaderNode, true),
                PEERS.peer(stays, true), PEERS.peer(stepsUp, true), PEERS.peer(stepsDown, false));
        logs.get(leaderNode).reconfigure(swapped);
        assertThat(logs.get(leaderNode).hasConfiguration(swapped)).isTrue();
        long configured = logs.get(leaderNode).appliedIndex();
        await().atMost(Duration.ofSeconds(10)).until(() -> logs.get(stepsUp).appliedIndex() >= configured);

        stop(leaderNode);
        ViewLog next = leader();
        assertThat(node(next)).isIn(stays, stepsUp);
        ClusterView leaving = four.withLeaving(stepsDown, ChangeKind.DECOMMISSION);
        assertThat(next.compareAndSet(1, leaving)).isEqualTo(leaving);
    }

    /**
     * A listener made a voter while its follower thread, just woken from its election-timeout sleep, waits for the
     * server's lock (Ratis 3.2.2 then waits under that lock for that thread to end, and the server would stay frozen:
     * {@link FollowerStateRelease}): the server is released within two watchdog beats, the reconfiguration completes
     * and the new voter applies the next view. The timing is made certain here: another thread holds the listener's
     * lock until its follower thread and then the append that carries the new configuration wait for it; the JVM
     * gives the lock to the later one, the append (without the release this test fails on Ratis 3.2.2: the
     * reconfiguration is refused after its retries, the listener frozen).
     */
    @Test
    void aListenerMadeAVoterWhileItsFollowerThreadWaitsForTheLockIsNotFrozen() throws Exception {
        NodeProcess.freePorts(2).forEach(port -> nodes.add(URI.create("http://127.0.0.1:" + port)));
        URI voter = nodes.get(0);
        URI listener = nodes.get(1);
        RaftGroup oneVoter = RaftGroup.valueOf(RaftPeers.GROUP_ID, PEERS.peer(voter, true),
                PEERS.peer(listener, false));
        RaftGroup twoVoters = RaftGroup.valueOf(RaftPeers.GROUP_ID, PEERS.peer(voter, true),
                PEERS.peer(listener, true));
        nodes.forEach(node -> start(node, oneVoter));
        ClusterView two = leader().compareAndSet(0, ClusterView.initial(nodes, 2));
        await().atMost(Duration.ofSeconds(20)).until(() -> two.equals(logs.get(listener).view()));
        RaftServer.Division division = logs.get(listener).server().getDivision(RaftPeers.GROUP_ID);
        RaftPeerId listenerId = RaftPeers.id(listener);
        AtomicBoolean held = new AtomicBoolean();
        CodeInjectionForTesting.put(RAFT_APPEND_ENTRIES, (localId, leaderId, args) -> {
            if (listenerId.equals(localId) && args.length > 1 && args[1] instanceof AppendEntriesRequestProto append
                    && makesVoter(append, listenerId) && held.compareAndSet(false, true)) {
                Thread appender = Thread.currentThread();
                CountDownLatch locked = new CountDownLatch(1);
                Thread holder = new Thread(() -> {
                    synchronized (division) {
                        locked.countDown();
                        await().atMost(Duration.ofSeconds(10)).until(() -> followerThreadWaitsForLock(listenerId)
                                && appender.getState() == Thread.State.BLOCKED);
                    }
                }, "lock-holder");
                holder.start();
                try {
                    locked.await();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                // the follower thread waits for the lock first, then this append: the lock goes to the later one
                await().atMost(Duration.ofSeconds(10)).until(() -> followerThreadWaitsForLock(listenerId));
            }
            return true;
        });
        ExecutorService steps = Executors.newSingleThreadExecutor();
        try {
            steps.submit(() -> logs.get(voter).reconfigure(twoVoters)).get(30, TimeUnit.SECONDS);
            assertThat(held).as("the append with the new configuration was held").isTrue();
            ClusterView leaving = two.withLeaving(voter, ChangeKind.DECOMMISSION);
            assertThat(steps.submit(() -> leader().compareAndSet(1, leaving)).get(30, TimeUnit.SECONDS))
                    .isEqualTo(leaving);
            await().atMost(Duration.ofSeconds(20)).until(() -> leaving.equals(logs.get(listener).view()));
        } finally {
            CodeInjectionForTesting.remove(RAFT_APPEND_ENTRIES);
            steps.shutdownNow();
        }
    }

    /** True if {@code append} carries a settled configuration (no old one) in which {@code peer} votes. */
    private static boolean makesVoter(AppendEntriesRequestProto append, RaftPeerId peer) {
        return append.getEntriesList().stream().filter(LogEntryProto::hasConfigurationEntry)
                .map(LogEntryProto::getConfigurationEntry)
                .anyMatch(conf -> conf.getOldPeersCount() == 0 && conf.getOldListenersCount() == 0
                        && conf.getPeersList().stream().anyMatch(p -> RaftPeerId.valueOf(p.getId()).equals(peer)));
    }

    /** True if a follower thread of {@code server} waits for a lock (the server's, here). */
    private static boolean followerThreadWaitsForLock(RaftPeerId server) {
        return FollowerStateRelease.followerStateThreads().stream()
                .anyMatch(thread -> thread.getName().startsWith(server + "@")
                        && thread.getState() == Thread.State.BLOCKED);
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

    /**
     * A joiner that did not answer the leader's first appends within Ratis's staging timeout (a fresh JVM on a
     * loaded machine) is added by the next reconfiguration, although it has the whole log by then. Ratis counts a
     * new peer caught up only once its match index reaches the configuration's index, and a heartbeat does not
     * raise it: a joiner that needs no entry stays "progressing" for ever, and every later reconfiguration is
     * refused as "already in progress", unless the log gets a new entry while the staging runs.
     */
    @Test
    void aJoinerWhoseFirstStagingTimedOutIsAddedByTheNextReconfiguration() throws Exception {
        ClusterView first = formCluster(3);
        URI joiner = URI.create("http://127.0.0.1:" + NodeProcess.freePort());
        ViewLog joining = start(joiner, RaftGroup.valueOf(RaftPeers.GROUP_ID));
        ViewLog leader = leader();
        ClusterView withJoiner = leader.compareAndSet(1, first.withJoining(joiner));
        RaftGroup group = PEERS.group(withJoiner);
        AtomicLong frozenUntil = new AtomicLong();
        // the joiner freezes for 12 s from the leader's first append that carries entries: it answers no append,
        // heartbeats included, past the staging timeout (3 x 2 s, less the 2 s Ratis backdates), then catches up
        CodeInjectionForTesting.put(RAFT_APPEND_ENTRIES, (localId, leaderId, args) -> {
            if (RaftPeers.id(joiner).equals(localId)) {
                if (args.length > 1 && args[1] instanceof AppendEntriesRequestProto append
                        && append.getEntriesCount() > 0) {
                    frozenUntil.compareAndSet(0, System.currentTimeMillis() + 12_000);
                }
                long frozen = frozenUntil.get() - System.currentTimeMillis();
                if (frozen > 0) {
                    sleepUninterruptibly(Duration.ofMillis(frozen));
                }
            }
            return true;
        });
        try {
            RaftProperties properties = new RaftProperties();
            RaftConfigKeys.Rpc.setType(properties, SupportedRpcType.GRPC);
            RaftClientConfigKeys.Rpc.setRequestTimeout(properties, TimeDuration.valueOf(20, TimeUnit.SECONDS));
            try (RaftClient once = RaftClient.newBuilder().setRaftGroup(PEERS.group(first))
                    .setLeaderId(RaftPeers.id(node(leader))).setProperties(properties)
                    .setRetryPolicy(RetryPolicies.noRetry()).build()) {
                List<RaftPeer> listeners = group.getPeers().stream()
                        .filter(peer -> peer.getStartupRole() == RaftPeerRole.LISTENER).toList();
                List<RaftPeer> voters = group.getPeers().stream()
                        .filter(peer -> peer.getStartupRole() != RaftPeerRole.LISTENER).toList();
                assertThatThrownBy(() -> {
                    RaftClientReply reply = once.admin().setConfiguration(voters, listeners);
                    if (!reply.isSuccess()) {
                        throw reply.getException();
                    }
                }).isInstanceOf(ReconfigurationTimeoutException.class);
            }
            await().atMost(Duration.ofSeconds(30)).until(() -> withJoiner.equals(joining.view()));

            leader.reconfigure(group);

            assertThat(leader.listeners()).containsExactly(RaftPeers.id(joiner));
            assertThat(frozenUntil.get()).isPositive();
        } finally {
            CodeInjectionForTesting.remove(RAFT_APPEND_ENTRIES);
        }
    }

    private static void sleepUninterruptibly(Duration duration) {
        try {
            Thread.sleep(duration.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * A node added after the members took a snapshot and purged the log before it receives the view by the
     * snapshot's installation (the log no longer holds the entries it misses): its state machine pauses, loads the
     * installed view file and runs on, applying the entries after it. The logs here snapshot every 4 entries and
     * purge closed segments of 1 KB; the product's do so after 1 000 entries.
     */
    @Test
    void aNodeAddedAfterTheLogWasPurgedReceivesTheViewBySnapshot() throws IOException {
        tuning = properties -> {
            RaftServerConfigKeys.Snapshot.setAutoTriggerThreshold(properties, 4);
            RaftServerConfigKeys.Log.setSegmentSizeMax(properties, SizeInBytes.valueOf("1KB"));
            RaftServerConfigKeys.Log.setPreallocatedSize(properties, SizeInBytes.valueOf("1KB"));
            RaftServerConfigKeys.Log.setPurgeGap(properties, 1);
            RaftServerConfigKeys.Log.setPurgeUptoSnapshotIndex(properties, true);
        };
        ClusterView view = formCluster(3);
        URI stranger = URI.create("http://127.0.0.1:" + NodeProcess.freePort());
        for (int i = 0; i < 15; i++) {
            ClusterView joining = view.withJoining(stranger);
            view = leader().compareAndSet(view.epoch(), joining);
            view = leader().compareAndSet(view.epoch(), view.aborted());
        }
        ClusterView before = view;
        await().atMost(Duration.ofSeconds(20)).until(() -> nodes.stream().allMatch(node ->
                fileNames(groupDir(node).resolve("current")).stream()
                        .noneMatch(segment -> segment.matches("log_(inprogress_)?0(-.*)?"))));

        URI joiner = URI.create("http://127.0.0.1:" + NodeProcess.freePort());
        ViewLog joining = start(joiner, RaftGroup.valueOf(RaftPeers.GROUP_ID));
        ClusterView withJoiner = leader().compareAndSet(before.epoch(), before.withJoining(joiner));
        leader().reconfigure(PEERS.group(withJoiner));
        await().atMost(Duration.ofSeconds(20)).until(() -> withJoiner.equals(joining.view()));
        assertThat(applied.get(joiner)).as("views applied by the joiner").first()
                .satisfies(first -> assertThat(first.epoch()).isGreaterThan(1));
        assertThat(fileNames(groupDir(joiner).resolve("sm")))
                .as("the installed snapshot").anyMatch(name -> name.startsWith("snapshot."));
        ClusterView advanced = leader().compareAndSet(withJoiner.epoch(), withJoiner.advanced());
        await().atMost(Duration.ofSeconds(20)).until(() -> advanced.equals(joining.view()));
    }

    private Path groupDir(URI node) {
        return ViewLog.storageDir(dir.resolve(node.getPort() + "")).resolve(RaftPeers.GROUP_ID.getUuid().toString());
    }

    /** The names of the files in {@code folder}. */
    private static List<String> fileNames(Path folder) {
        try (Stream<Path> files = Files.list(folder)) {
            return files.map(file -> file.getFileName().toString()).toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
