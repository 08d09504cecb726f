package dev.dht.membership;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.dht.membership.raft.RaftPeers;
import dev.dht.membership.raft.ViewLog;
import dev.dht.testing.InProcessCluster;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.stream.Stream;
import org.apache.ratis.protocol.RaftGroup;
import org.awaitility.core.ThrowingRunnable;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.CleanupMode;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.springframework.util.FileSystemUtils;

/**
 * Membership changes that lose a node they involve, in one JVM: the view log's leader drives every change, so a
 * change goes on (or is rolled back) when the node that started it, the leader or the joiner dies, and any dead
 * member can be removed, the first one too; a leader that comes back at once finds the change ended or going on.
 * The members hold their streams, so that a join stays in its streaming phase until the test has stopped a node.
 * Also the survivors of a lost majority: recovered with {@code dht.raft.recover=true}, the dead removed through them
 * and replaced, every key read back (each method's Javadoc says what it shows).
 */
class MembershipFailoverIT {
    private static final Duration CHANGE_TIME = Duration.ofSeconds(90);
    /** A change rolls back 5 s after a member it waits for stopped answering. */
    private static final Map<String, String> FAST_ROLLBACK = Map.of("dht.change-failure-timeout", "5s",
            "dht.repair.interval", "0s");
    private static final int KEYS = 300;
    /** The phases of a change, in order: the change's first view is the one after the view it starts from. */
    private static final List<String> PHASES = List.of("write-both-read-old", "streaming", "write-both-read-new");

    /** Kept when a test fails: the nodes' logs, to find why a replica refused or a step stalled. */
    @TempDir(cleanup = CleanupMode.ON_SUCCESS)
    Path root;

    @Test
    void aJoinerStoppedForGoodIsRolledBackAndTheNextJoinCompletes() throws Exception {
        try (InProcessCluster cluster = InProcessCluster.start(3, root, FAST_ROLLBACK)) {
            int joiner = joinHeldInStreaming(cluster);
            cluster.stop(joiner);

            await().atMost(CHANGE_TIME).untilAsserted(() -> {
                JsonNode view = view(cluster, 0);
                assertThat(view.get("change").isNull()).as("no change in progress: %s", view).isTrue();
                assertThat(view.get("members")).hasSize(3);
            });
            releaseStreams(cluster);
            int next = cluster.add(Map.of());
            await().atMost(CHANGE_TIME).untilAsserted(() -> {
                JsonNode view = view(cluster, 0);
                assertThat(view.get("members")).as("%s", view).hasSize(4);
                assertThat(view.get("change").isNull()).isTrue();
            });
            readAll(cluster, next, "3/3");
        }
    }

    @Test
    void theLeaderStoppedDuringAJoinLeavesTheChangeToTheNextLeader() throws Exception {
        try (InProcessCluster cluster = InProcessCluster.start(3, root, FAST_ROLLBACK)) {
            int joiner = joinHeldInStreaming(cluster);
            int leader = leader(cluster);
            cluster.stop(leader);
            int survivor = leader == 0 ? 1 : 0;

            await().atMost(CHANGE_TIME).untilAsserted(() -> {
                JsonNode view = view(cluster, survivor);
                assertThat(view.get("change").isNull()).as("the change ended: %s", view).isTrue();
                assertThat(view.get("leader").asText()).isNotEqualTo(cluster.url(leader).toString());
            });
            // the stopped leader is a member the join waited for: it was rolled back, and the dead leader can go
            releaseStreams(cluster);
            removeDead(cluster, survivor, leader);
            await().atMost(CHANGE_TIME).untilAsserted(() -> {
                JsonNode view = view(cluster, survivor);
                assertThat(view.get("change").isNull()).as("%s", view).isTrue();
                assertThat(view.toString()).doesNotContain(cluster.url(leader).toString());
            });
            readAll(cluster, survivor, "2/2");
            assertThat(cluster.client(joiner).get("k-0", "1/1").statusCode()).as("the rolled back joiner serves none")
                    .isEqualTo(503);
        }
    }

    /** Both kinds of change, each held at each of its three phases. */
    static Stream<Arguments> changesAndPhases() {
        return Stream.of("join", "decommission")
                .flatMap(kind -> PHASES.stream().map(phase -> Arguments.of(kind, phase)));
    }

    /**
     * The view log's leader stopped for good while a join or a decommission is held at each of its phases (a member
     * holds the proposal of that phase's view, so the change cannot move past it while another node drives it): the
     * next leader rolls the change back once the dead leader has not answered for the failure timeout (a joiner is
     * no member, a leaver NORMAL again), or completes it before that timeout (which load can bring about, e.g. a
     * decommission held at streaming with the ITs in two JVMs); never stuck. The dead leader is then removed, and every key reads
     * back.
     */
    @ParameterizedTest(name = "{0} held at {1}")
    @MethodSource("changesAndPhases")
    void theLeaderStoppedAtEachPhaseLeavesNoChangeStuck(String kind, String phase) throws Exception {
        boolean join = kind.equals("join");
        try (InProcessCluster cluster = InProcessCluster.start(join ? 3 : 4, root, FAST_ROLLBACK)) {
            HeldChange held = heldAt(cluster, join, phase);
            int leader = held.leader();
            int holder = held.holder();
            cluster.stop(leader);

            awaitEnded(cluster, holder, join, () -> { });
            int members = view(cluster, holder).get("members").size();
            cluster.serverFaults(holder).clear();
            removeDead(cluster, holder, leader);
            awaitSettled(cluster, holder, members - 1);
            readAll(cluster, holder, members - 1 >= 3 ? "2/3" : "2/2");
        }
    }

    /**
     * The view log's leader stopped while a join or a decommission is held at each of its phases, then started
     * again on its data dir at once: the change completes (or, if the restart took longer than the failure timeout,
     * is rolled back), never stuck; the returned leader takes the final view, every member is NORMAL and settled,
     * and every key reads back through the returned node.
     */
    @ParameterizedTest(name = "{0} held at {1}")
    @MethodSource("changesAndPhases")
    void theLeaderStoppedAndStartedAgainAtEachPhaseLeavesNoChangeStuck(String kind, String phase) throws Exception {
        boolean join = kind.equals("join");
        try (InProcessCluster cluster = InProcessCluster.start(join ? 3 : 4, root, FAST_ROLLBACK)) {
            HeldChange held = heldAt(cluster, join, phase);
            int leader = held.leader();
            int holder = held.holder();
            int leaver = held.leaver();
            cluster.stop(leader);
            cluster.start(leader);
            cluster.serverFaults(holder).clear();

            awaitEnded(cluster, leader, join, () -> {
                assertThat(view(cluster, leader).get("epoch").asLong())
                        .isEqualTo(view(cluster, holder).get("epoch").asLong());
                for (int i = 0; i < cluster.size(); i++) {
                    if (i != leaver) {
                        assertThat(view(cluster, i).get("cleanupPending").asBoolean()).as("node %d settled", i)
                                .isFalse();
                    }
                }
            });
            readAll(cluster, leader, "2/3");
        }
    }

    /**
     * The last member of three decommissioned, held in its streaming phase, and the first member stopped for good:
     * the view log keeps a leader (the leaving member votes until its change ends), so the decommission is rolled
     * back on both survivors, the dead member is removed, and every key reads back at 2/2. (Were the leaving member no
     * voter, two NORMAL members would be one voter, the first, and the change would stay in streaming for good:
     * neither abort nor removenode can run without a leader.)
     */
    @Test
    void theFirstMemberStoppedDuringADecommissionOfTheLastLeavesTheLogALeader() throws Exception {
        try (InProcessCluster cluster = InProcessCluster.start(3, root, FAST_ROLLBACK)) {
            write(cluster);
            holdStreams(cluster);
            HttpResponse<byte[]> started = cluster.client(1).admin("/actuator/cluster/decommission",
                    "{\"node\": \"" + cluster.url(2) + "\"}", InProcessCluster.SECRET);
            assertThat(started.statusCode()).as(new String(started.body(), StandardCharsets.UTF_8)).isEqualTo(202);
            awaitPhase(cluster, "streaming");
            cluster.stop(0);

            await().atMost(CHANGE_TIME).untilAsserted(() -> {
                for (int survivor = 1; survivor <= 2; survivor++) {
                    JsonNode view = view(cluster, survivor);
                    assertThat(view.get("change").isNull()).as("change on node %d: %s", survivor, view).isTrue();
                    assertThat(view.get("members")).hasSize(3);
                }
            });
            releaseStreams(cluster);
            removeDead(cluster, 1, 0);
            awaitSettled(cluster, 1, 2);
            readAll(cluster, 1, "2/2");
        }
    }

    /**
     * A joiner stopped for good while the view log's leader keeps changing (each leader's Raft server closed and
     * started again 1 s after it took over, its node up all along; a 10 s failure timeout, so that several leaders
     * come and go within it): the join is rolled back while the leaders still change. The failure detector's times
     * belong to every node, not to the leader, so no new leader starts the count afresh (if each did, a leader
     * lasting less than the timeout would postpone the rollback for as long as the churn goes on).
     */
    @Test
    void aJoinerStoppedIsRolledBackWhileTheLeaderKeepsChanging() throws Exception {
        Map<String, String> settings = Map.of("dht.change-failure-timeout", "10s", "dht.repair.interval", "0s");
        try (InProcessCluster cluster = InProcessCluster.start(3, root, settings)) {
            int joiner = joinHeldInStreaming(cluster);
            cluster.stop(joiner);
            long stopped = System.nanoTime();
            int changes = 0;
            boolean rolledBack = false;
            while (!rolledBack && System.nanoTime() - stopped < Duration.ofSeconds(60).toNanos()) {
                int leader = await().atMost(CHANGE_TIME).pollInterval(Duration.ofMillis(50))
                        .until(() -> logLeader(cluster), index -> index >= 0);
                Thread.sleep(1_000);
                rolledBack = view(cluster, 0).get("change").isNull();
                if (!rolledBack) {
                    ViewLog log = cluster.bean(leader, ViewLog.class);
                    // the cluster's own group: its id is the cluster id the views carry
                    RaftGroup group = RaftGroup.valueOf(RaftPeers.groupId(
                            UUID.fromString(view(cluster, leader).get("cluster").asText())));
                    log.close();
                    log.start(group);
                    changes++;
                }
            }
            long rollbackMs = (System.nanoTime() - stopped) / 1_000_000;
            System.out.printf("joiner stopped, leader changed %d times: rolled back %d ms later%n", changes,
                    rollbackMs);
            assertThat(rolledBack).as("rolled back within 60 s, the leader changed every few s (%d times)",
                    changes).isTrue();
            assertThat(changes).as("leader changes before the rollback").isGreaterThanOrEqualTo(2);
            JsonNode view = view(cluster, 0);
            assertThat(view.get("members")).as("%s", view).hasSize(3);
            readAll(cluster, 0, "3/3");
        }
    }

    /**
     * A member whose cleanup is pending after a join restarts while another member has not yet answered the proposal
     * of the join's final view (it holds its answer: it may still finish a write placed under the change on the
     * restarted member; it holds the view from the log and answers the probes, for longer than the 5 s failure
     * timeout): the restarted member's cleanup stays pending, its marker file is no word to start, nor is the other
     * member judged down; once the other member answers, every member's cleanup completes and every key reads back.
     */
    @Test
    void aMemberRestartedWithItsCleanupPendingWaitsUntilEveryMemberTookTheFinalView() throws Exception {
        try (InProcessCluster cluster = InProcessCluster.start(3, root, FAST_ROLLBACK)) {
            write(cluster);
            int leader = leader(cluster);
            int holder = leader == 0 ? 1 : 0;
            int restarted = firstOtherThan(cluster, leader, holder);
            long formed = view(cluster, holder).get("epoch").asLong();
            long last = formed + 1 + PHASES.size(); // the join's final view
            cluster.serverFaults(holder).holdViewProposals(last);
            cluster.add(Map.of());
            await().atMost(CHANGE_TIME).untilAsserted(() -> {
                JsonNode view = view(cluster, restarted);
                assertThat(view.get("epoch").asLong()).as("%s", view).isEqualTo(last);
                assertThat(view.get("cleanupPending").asBoolean()).isTrue();
            });

            cluster.stop(restarted);
            cluster.start(restarted);
            Thread.sleep(OwnershipCleanup.RESUME_RETRY.toMillis());
            JsonNode held = view(cluster, restarted);
            assertThat(held.get("cleanupPending").asBoolean())
                    .as("the restarted member's cleanup while a member has not taken epoch %d: %s", last, held)
                    .isTrue();

            cluster.serverFaults(holder).clear();
            await().atMost(CHANGE_TIME).untilAsserted(() -> {
                for (int i = 0; i < cluster.size(); i++) {
                    assertThat(view(cluster, i).get("cleanupPending").asBoolean()).as("node %d settled", i).isFalse();
                }
            });
            readAll(cluster, restarted, "3/3");
        }
    }

    /** Waits until {@code through}'s view has no change in progress and {@code members} members. */
    private static void awaitSettled(InProcessCluster cluster, int through, int members) {
        await().atMost(CHANGE_TIME).untilAsserted(() -> {
            JsonNode view = view(cluster, through);
            assertThat(view.get("change").isNull()).as("%s", view).isTrue();
            assertThat(view.get("members")).hasSize(members);
        });
    }

    /** The index of the node whose view log leads now, or -1. */
    private static int logLeader(InProcessCluster cluster) {
        for (int i = 0; i < cluster.size(); i++) {
            try {
                if (cluster.bean(i, ViewLog.class).isLeader()) {
                    return i;
                }
            } catch (RuntimeException stopped) {
                // a stopped node has no beans
            }
        }
        return -1;
    }

    /**
     * Waits until {@code through}'s view shows the held change ended, completed or rolled back (the members of a
     * join 3 or 4, of a decommission 4 or 3), every member NORMAL, and {@code also} holds.
     */
    private static void awaitEnded(InProcessCluster cluster, int through, boolean join,
                                   ThrowingRunnable also) {
        int before = join ? 3 : 4;
        int after = join ? 4 : 3;
        await().atMost(CHANGE_TIME).untilAsserted(() -> {
            JsonNode view = view(cluster, through);
            assertThat(view.get("change").isNull()).as("the change ended: %s", view).isTrue();
            assertThat(view.get("members").size()).as("completed or rolled back: %s", view).isIn(before, after);
            view.get("members").forEach(member -> assertThat(member.get("state").asText()).isEqualTo("NORMAL"));
            also.run();
        });
    }

    /** The nodes of a change {@link #heldAt} started: the view log's leader, the member holding it, the leaver. */
    private record HeldChange(int leader, int holder, int leaver) {
    }

    /**
     * Writes the keys, then starts a join (a new node) or the decommission of a member that neither leads the view
     * log nor holds the change, held at {@code phase}: a member other than the leader holds the proposal of that
     * phase's view. Returns once the change is there.
     */
    private static HeldChange heldAt(InProcessCluster cluster, boolean join, String phase) throws Exception {
        write(cluster);
        int leader = leader(cluster);
        int holder = leader == 0 ? 1 : 0;
        int leaver = join ? -1 : firstOtherThan(cluster, leader, holder);
        long formed = view(cluster, holder).get("epoch").asLong();
        cluster.serverFaults(holder).holdViewProposals(formed + 1 + PHASES.indexOf(phase));
        if (join) {
            cluster.add(Map.of());
        } else {
            HttpResponse<byte[]> started = cluster.client(holder).admin("/actuator/cluster/decommission",
                    "{\"node\": \"" + cluster.url(leaver) + "\"}", InProcessCluster.SECRET);
            assertThat(started.statusCode()).as(new String(started.body(), StandardCharsets.UTF_8))
                    .isEqualTo(202);
        }
        awaitPhase(cluster, phase); // node 0 is the holder or the leader, both still up
        return new HeldChange(leader, holder, leaver);
    }

    /**
     * Removes the dead node {@code dead} through {@code through}, asking again while the answer is 409, as an operator
     * would: right after a rollback the members' cleanup may still run, and a removenode waits for it (the leader
     * tells the live members to clean up without waiting for a member down for the failure timeout).
     */
    private static void removeDead(InProcessCluster cluster, int through, int dead) {
        await().atMost(CHANGE_TIME).pollInterval(Duration.ofMillis(500)).untilAsserted(() -> {
            HttpResponse<byte[]> removed = cluster.client(through).admin("/actuator/cluster/removenode",
                    "{\"node\": \"" + cluster.url(dead) + "\"}", InProcessCluster.SECRET);
            assertThat(removed.statusCode()).as(new String(removed.body(), StandardCharsets.UTF_8)).isEqualTo(202);
        });
    }

    private static int firstOtherThan(InProcessCluster cluster, int a, int b) {
        for (int i = 0; i < cluster.size(); i++) {
            if (i != a && i != b) {
                return i;
            }
        }
        throw new AssertionError("no third node");
    }

    @Test
    void theFirstMemberDeadIsRemovedFromAnyOther() throws Exception {
        try (InProcessCluster cluster = InProcessCluster.start(3, root, FAST_ROLLBACK)) {
            write(cluster);
            cluster.stop(0);
            removeDead(cluster, 2, 0);
            awaitSettled(cluster, 1, 2);
            readAll(cluster, 1, "2/2");
        }
    }

    /**
     * Two members of three stopped for good with their data dirs lost: the view log has lost two of its three voters.
     * Without a recovery the survivor refuses to remove them (409: a member is down; the log could not commit it
     * either). Started again with {@code dht.raft.recover=true}, the survivor is the log's only voter, going on from
     * the epoch it holds; both dead members are removed through it, two new nodes join, and every key written at 3/3
     * before reads back at 2/3 through each new node. Started once more with the setting left on, it recovers
     * nothing (the marker): the log of three voters goes on.
     */
    @Test
    void theSurvivorOfALostMajorityRecoversTheLogAndTheDeadAreReplaced() throws Exception {
        try (InProcessCluster cluster = InProcessCluster.start(3, root, FAST_ROLLBACK)) {
            write(cluster);
            long epoch = view(cluster, 0).get("epoch").asLong();
            for (int dead = 1; dead <= 2; dead++) {
                cluster.stop(dead);
                FileSystemUtils.deleteRecursively(cluster.dataDir(dead));
            }
            HttpResponse<byte[]> frozen = cluster.client(0).admin("/actuator/cluster/removenode",
                    "{\"node\": \"" + cluster.url(2) + "\"}", InProcessCluster.SECRET);
            assertThat(frozen.statusCode()).as(new String(frozen.body(), StandardCharsets.UTF_8)).isEqualTo(409);

            cluster.stop(0);
            cluster.start(0, Map.of("dht.raft.recover", "true"));
            await().atMost(CHANGE_TIME).untilAsserted(() -> {
                JsonNode view = view(cluster, 0);
                assertThat(view.get("leader").asText()).as("%s", view).isEqualTo(cluster.url(0).toString());
                assertThat(view.get("epoch").asLong()).isEqualTo(epoch);
                assertThat(view.get("lost")).hasSize(2);
            });
            for (int dead = 2; dead >= 1; dead--) {
                int members = 1 + dead;
                removeDead(cluster, 0, dead);
                awaitSettled(cluster, 0, members - 1);
            }
            assertThat(view(cluster, 0).get("lost")).isEmpty();
            for (int joined = 2; joined <= 3; joined++) {
                int members = joined;
                cluster.add(Map.of());
                awaitSettled(cluster, 0, members);
            }
            readAll(cluster, 3, "2/3");
            readAll(cluster, 4, "2/3");

            cluster.stop(0);
            cluster.start(0, Map.of("dht.raft.recover", "true"));
            await().atMost(CHANGE_TIME).untilAsserted(() -> {
                JsonNode view = view(cluster, 3);
                assertThat(view.get("leader").isNull()).as("%s", view).isFalse();
                assertThat(view(cluster, 0).get("lost")).isEmpty();
                assertThat(cluster.client(0).get("k-0", "3/3").statusCode()).isEqualTo(200);
            });
        }
    }

    /**
     * Two survivors of four members: the two voters besides the first stopped for good with their data dirs lost
     * (four members have three voters), the first recovered, the fourth (a listener) answers and stays a member. The
     * lost ones are removed through the recovered one; the fourth gains keys in the first removal (four members, three
     * copies) and pulls them from the live replicas only, as the coordinator names the lost ones, which it does not
     * know of itself: no removal waits for a lost member. Every key reads back at 2/2 through the fourth.
     */
    @Test
    void twoSurvivorsRecoverThroughOneAndTheOtherStreamsFromTheLiveOnly() throws Exception {
        try (InProcessCluster cluster = InProcessCluster.start(4, root, FAST_ROLLBACK)) {
            write(cluster);
            for (int dead = 1; dead <= 2; dead++) {
                cluster.stop(dead);
                FileSystemUtils.deleteRecursively(cluster.dataDir(dead));
            }
            cluster.stop(0);
            cluster.start(0, Map.of("dht.raft.recover", "true"));
            await().atMost(CHANGE_TIME).untilAsserted(() -> {
                JsonNode view = view(cluster, 0);
                assertThat(view.get("leader").asText()).as("%s", view).isEqualTo(cluster.url(0).toString());
                assertThat(view.get("lost")).hasSize(2);
            });
            for (int dead = 2; dead >= 1; dead--) {
                int members = 2 + dead;
                removeDead(cluster, 0, dead);
                awaitSettled(cluster, 3, members - 1);
            }
            readAll(cluster, 3, "2/2");
        }
    }

    /** Writes the keys and starts a join that stays in its streaming phase ({@link #holdStreams}); its node index. */
    private static int joinHeldInStreaming(InProcessCluster cluster) throws Exception {
        write(cluster);
        holdStreams(cluster);
        int joiner = cluster.add(Map.of());
        awaitPhase(cluster, "streaming");
        return joiner;
    }

    /** The three members hold the records a joiner pulls, so the join stays in its streaming phase. */
    private static void holdStreams(InProcessCluster cluster) {
        for (int i = 0; i < 3; i++) {
            cluster.serverFaults(i).holdMembershipStreams();
        }
    }

    private static void releaseStreams(InProcessCluster cluster) {
        for (int i = 0; i < 3; i++) {
            cluster.serverFaults(i).clear();
        }
    }

    private static void write(InProcessCluster cluster) {
        for (int i = 0; i < KEYS; i++) {
            assertThat(cluster.client(i % 3).put("k-" + i, "v" + i, "3/3")).isEqualTo(201);
        }
    }

    private static void readAll(InProcessCluster cluster, int through, String replicas) {
        for (int i = 0; i < KEYS; i++) {
            HttpResponse<byte[]> read = cluster.client(through).get("k-" + i, replicas);
            assertThat(read.statusCode()).as("k-%d at %s", i, replicas).isEqualTo(200);
            assertThat(new String(read.body(), StandardCharsets.UTF_8)).isEqualTo("v" + i);
        }
    }

    private static void awaitPhase(InProcessCluster cluster, String phase) {
        await().atMost(CHANGE_TIME).pollInterval(Duration.ofMillis(20)).untilAsserted(() -> {
            JsonNode change = view(cluster, 0).get("change");
            assertThat(change.isNull() ? null : change.get("phase").asText()).isEqualTo(phase);
        });
    }

    /** The index of the node that leads the view log now. */
    private static int leader(InProcessCluster cluster) throws Exception {
        String leader = view(cluster, 0).get("leader").asText();
        for (int i = 0; i < cluster.size(); i++) {
            if (cluster.url(i).toString().equals(leader)) {
                return i;
            }
        }
        throw new AssertionError("no node is the leader " + leader);
    }

    private static JsonNode view(InProcessCluster cluster, int i) throws Exception {
        HttpResponse<byte[]> response = cluster.client(i).send("GET", "/actuator/cluster", new byte[0]);
        assertThat(response.statusCode()).isEqualTo(200);
        return new ObjectMapper().readTree(response.body());
    }
}
