package dev.dht.membership;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import dev.dht.testing.ClusterAdmin;
import dev.dht.testing.HistoryLoad;
import dev.dht.testing.KeyHistory;
import dev.dht.testing.NodeProcess;
import dev.dht.testing.ProcessCluster;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.CleanupMode;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.util.FileSystemUtils;

/**
 * Membership changes when a node they involve dies, over real node processes: the view log's leader killed
 * ({@code kill -9}) during a join for good and coming back, a joiner killed after the read switch, the first member
 * removed after its death, the first of three killed while the last is decommissioned, two of three lost for good
 * and the survivor recovered ({@code dht.raft.recover}), a member back on an empty data dir, alone (then the log's
 * leader killed) or with the whole cluster restarted at once, a member frozen, removed and resumed. These run under a
 * steady load ({@link HistoryLoad}: most keys at 2/3, some at 1/1 and 3/3, writes and deletes) and check its history
 * at the end: no acknowledged write lost, no stale read, no deleted key back, and every member settled
 * ({@code cleanupPending} false). Three more look at membership alone: a dead joiner's join rolled back while the
 * log's leader keeps changing, two founding members on empty disks that form no cluster while the third is down, and
 * a member restarted with its cleanup pending while another, frozen at a join's read switch, has not taken the final
 * view. A 1/1 write kept by the one node killed for good (or by a lost disk) is lost by definition (one copy was
 * asked for), so once a node is killed for good the 1/1 keys are left out of the final read-back.
 * {@code dht.change-failure-timeout} is {@value #FAILURE_TIMEOUT_S} s (60 s in the cleanup case), so that a change
 * whose node died is rolled back within a test.
 */
class MembershipFailuresIT {
    private static final int FAILURE_TIMEOUT_S = 10;
    /** Longest from a joiner's or leader's death to its change's rollback: the timeout, probes and ticks. */
    private static final Duration ROLLBACK_TIME = Duration.ofSeconds(FAILURE_TIMEOUT_S + 30);
    private static final Duration CHANGE_TIME = Duration.ofMinutes(3);
    private static final List<String> JVM = List.of("-Xmx256m",
            "-Ddht.change-failure-timeout=" + FAILURE_TIMEOUT_S + "s");

    private final List<NodeProcess> joiners = new ArrayList<>();

    /** Kept when a test fails: the nodes' logs, to find why a replica refused or a step stalled. */
    @TempDir(cleanup = CleanupMode.ON_SUCCESS)
    Path dir;

    private ProcessCluster cluster;
    private ClusterAdmin admin;

    @AfterEach
    void stopNodes() {
        joiners.forEach(NodeProcess::close);
        if (cluster != null) {
            cluster.close();
        }
    }

    /**
     * A joiner killed for good at write-both-read-new has its join rolled back within the failure timeout (and some
     * slack); the next join starts, and its log leader is killed for good during its streaming: that join is rolled
     * back too, the dead leader is removed with removenode, and a third join completes.
     */
    @Test
    void joinsWhoseJoinerOrLeaderDiesAreRolledBackAndTheNextChangesComplete() throws Exception {
        startCluster(3, JVM);
        List<URI> live = new ArrayList<>(cluster.urls().stream().map(URI::create).toList());
        try (HistoryLoad load = new HistoryLoad("a", live)) {
            load.preload();
            load.start();

            // the joiner killed after the read switch (a phase of a few hundred ms): a join that passes it before
            // the test sees it is decommissioned, one whose final view the leader committed just after the kill
            // (the final step needs no answer from the joiner) has the dead joiner removed; then another node joins
            NodeProcess first = null;
            long killed = 0;
            for (int attempt = 1; first == null; attempt++) {
                assertThat(attempt).as("joins that ended before the joiner could be killed at the read switch")
                        .isLessThanOrEqualTo(4);
                NodeProcess joiner = startJoiner("first-" + attempt, live, 50_000);
                if (!faultAtPhase(leader(live), joiner.baseUri(), "write-both-read-new", joiner::kill)) {
                    takeOut("decommission", live.get(0), joiner, live);
                    continue;
                }
                killed = System.nanoTime();
                JsonNode ended = admin.awaitNoChange(live.get(0), ROLLBACK_TIME);
                if (!memberUrls(ended).contains(joiner.baseUri().toString())) {
                    first = joiner;
                } else {
                    System.out.printf("join %d completed just after its joiner was killed: removing it%n", attempt);
                    load.singleCopiesMayBeLost();
                    takeOut("removenode", live.get(0), joiner, live);
                }
            }
            awaitRolledBack(live, first.baseUri());
            long rollbackMs = (System.nanoTime() - killed) / 1_000_000;
            assertThat(rollbackMs).as("ms from the joiner's death to its rollback")
                    .isLessThan(ROLLBACK_TIME.toMillis());

            // the view log's leader killed while the next join streams
            NodeProcess second = startJoiner("second", live, 20);
            awaitPhase(live.get(0), second.baseUri(), "streaming");
            URI leader = leader(live);
            int dead = cluster.urls().indexOf(leader.toString());
            load.avoid(leader);
            live.remove(leader);
            cluster.kill(dead);
            load.singleCopiesMayBeLost();
            long leaderKilled = System.nanoTime();
            awaitRolledBack(live, second.baseUri());
            long leaderRollbackMs = (System.nanoTime() - leaderKilled) / 1_000_000;
            assertThat(leader(live)).as("a new leader").isNotEqualTo(leader);
            second.close();

            HttpResponse<String> removed = removenode(live.get(0), leader);
            assertThat(removed.statusCode()).as(removed.body()).isEqualTo(202);
            admin.awaitMembers(live.get(0), 2, CHANGE_TIME);
            admin.awaitSettled(live, CHANGE_TIME);

            NodeProcess third = startJoiner("third", live, 50_000);
            admin.awaitMembers(live.get(0), 3, CHANGE_TIME);
            live.add(third.baseUri());
            admin.awaitSettled(live, CHANGE_TIME);
            assertThat(memberUrls(admin.view(live.get(0)))).containsExactlyInAnyOrderElementsOf(
                    live.stream().map(URI::toString).toList());

            load.stop();
            System.out.printf("joiner killed at write-both-read-new: rolled back %d ms later; leader killed while"
                    + " streaming: join rolled back %d ms later%n", rollbackMs, leaderRollbackMs);
            checkHistory(load, live, null);
        }
    }

    /**
     * On four nodes, the first member ({@code dht.nodes[0]}) killed for good is removed with removenode sent to
     * another member, and every key reads back at 2/3; then, while a 5th node joins, the view log's leader is killed
     * and started again: the join completes or is rolled back, never stuck.
     */
    @Test
    void theFirstMemberIsRemovedAndALeaderRestartedDuringAJoinLeavesNoChangeStuck() throws Exception {
        startCluster(4, JVM);
        List<URI> live = new ArrayList<>(cluster.urls().stream().map(URI::create).toList());
        try (HistoryLoad load = new HistoryLoad("d", live)) {
            load.preload();
            load.start();

            URI first = live.get(0);
            load.avoid(first);
            live.remove(first);
            cluster.kill(0);
            load.singleCopiesMayBeLost();
            HttpResponse<String> removed = removenode(live.get(1), first);
            assertThat(removed.statusCode()).as(removed.body()).isEqualTo(202);
            admin.awaitMembers(live.get(0), 3, CHANGE_TIME);
            admin.awaitSettled(live, CHANGE_TIME);
            assertThat(memberUrls(admin.view(live.get(0)))).doesNotContain(first.toString());
            load.assertEveryWriteReadable(live, "2/3");

            NodeProcess joiner = startJoiner("fifth", live, 50);
            awaitPhase(live.get(0), joiner.baseUri(), "streaming");
            URI leader = leader(live);
            int restarted = cluster.urls().indexOf(leader.toString());
            load.avoid(leader);
            cluster.kill(restarted);
            cluster.restart(restarted);
            load.writeThrough(live);
            load.readThrough(live);
            JsonNode after = admin.awaitNoChange(live.get(0), CHANGE_TIME);
            boolean completed = memberUrls(after).contains(joiner.baseUri().toString());
            List<URI> members = new ArrayList<>(live);
            if (completed) {
                members.add(joiner.baseUri());
            }
            admin.awaitSettled(members, CHANGE_TIME);
            assertThat(memberUrls(admin.view(live.get(0)))).containsExactlyInAnyOrderElementsOf(
                    members.stream().map(URI::toString).toList());

            load.stop();
            System.out.printf("leader restarted during a join: the join %s%n",
                    completed ? "completed" : "was rolled back");
            checkHistory(load, members, null);
        }
    }

    /**
     * The last of three members decommissioned under load, the first killed for good while the decommission streams:
     * the view log keeps a leader (the leaving member votes until its change ends; were it no voter, the two
     * {@code NORMAL} members would be one voter, the dead one), so the decommission is rolled back on both survivors
     * within the failure timeout (and some slack), the dead member is removed through a survivor, and every
     * acknowledged write reads back at 2/2.
     */
    @Test
    void theFirstMemberKilledDuringADecommissionOfTheLastLeavesNoChangeStuck() throws Exception {
        List<String> jvm = new ArrayList<>(JVM);
        jvm.add("-Ddht.stream-rate=20"); // the decommission streams for longer than the test needs
        startCluster(3, jvm);
        List<URI> live = new ArrayList<>(cluster.urls().stream().map(URI::create).toList());
        URI first = live.get(0);
        URI leaving = live.get(2);
        try (HistoryLoad load = new HistoryLoad("g", live)) {
            load.preload();
            load.start();
            HttpResponse<String> started = change(live.get(1), "decommission", leaving);
            assertThat(started.statusCode()).as(started.body()).isEqualTo(202);
            awaitPhase(live.get(1), leaving, "streaming");

            load.avoid(first);
            live.remove(first);
            cluster.kill(0);
            load.singleCopiesMayBeLost();
            load.tolerateUnavailable(); // the leaver's new replica sets hold one live node
            long killed = System.nanoTime();
            await().atMost(ROLLBACK_TIME).pollInterval(Duration.ofMillis(250)).ignoreExceptions().untilAsserted(() -> {
                for (URI node : live) {
                    JsonNode view = admin.view(node);
                    assertThat(view.get("change").isNull()).as("change on %s: %s", node, view).isTrue();
                    assertThat(memberUrls(view)).as("members of %s", node).hasSize(3);
                }
            });
            long rollbackMs = (System.nanoTime() - killed) / 1_000_000;

            HttpResponse<String> removed = removenode(live.get(0), first);
            assertThat(removed.statusCode()).as(removed.body()).isEqualTo(202);
            admin.awaitMembers(live.get(0), 2, CHANGE_TIME);
            admin.awaitSettled(live, CHANGE_TIME);
            assertThat(memberUrls(admin.view(live.get(0)))).containsExactlyInAnyOrderElementsOf(
                    live.stream().map(URI::toString).toList());

            load.stop();
            System.out.printf("first member killed while the last was decommissioned: rolled back %d ms later%n",
                    rollbackMs);
            checkHistory(load, live, "2/2");
        }
    }

    /**
     * Two members of three killed for good with their data dirs lost (the view log has lost two of its three voters):
     * the survivor refuses to remove them (409) until it is started again with {@code --dht.raft.recover=true}; then
     * it leads the log alone from the epoch it held, naming both lost, both are removed through it, two new nodes
     * join, and every key written at 3/3 before the loss reads back at 2/3 through each new node.
     */
    @Test
    void theSurvivorOfALostMajorityIsRecoveredAndTheDeadAreReplaced() throws Exception {
        startCluster(3, JVM);
        List<URI> all = cluster.urls().stream().map(URI::create).toList();
        URI survivor = all.get(0);
        int keys = 300;
        for (int i = 0; i < keys; i++) {
            HttpResponse<String> written = HistoryLoad.send("PUT", survivor, "lost-" + i, "3/3", "value-" + i);
            assertThat(written.statusCode()).as("PUT lost-%d: %s", i, written.body()).isEqualTo(201);
        }
        long epoch = admin.view(survivor).get("epoch").asLong();
        for (int dead = 1; dead <= 2; dead++) {
            cluster.kill(dead);
            assertThat(FileSystemUtils.deleteRecursively(cluster.dataDir(dead))).isTrue();
        }
        HttpResponse<String> refused = admin.post(survivor, "/actuator/cluster/removenode",
                "{\"node\":\"" + all.get(2) + "\"}");
        assertThat(refused.statusCode()).as(refused.body()).isEqualTo(409);

        cluster.stop(0);
        cluster.launchAgain(0, "--dht.raft.recover=true");
        await().atMost(CHANGE_TIME).pollInterval(Duration.ofMillis(250)).ignoreExceptions().untilAsserted(() -> {
            JsonNode view = admin.view(survivor);
            assertThat(view.get("leader").asText()).as("%s", view).isEqualTo(survivor.toString());
            assertThat(view.get("epoch").asLong()).isEqualTo(epoch);
            assertThat(view.get("lost")).hasSize(2);
        });
        for (int dead = 2; dead >= 1; dead--) {
            HttpResponse<String> removed = removenode(survivor, all.get(dead));
            assertThat(removed.statusCode()).as(removed.body()).isEqualTo(202);
            admin.awaitMembers(survivor, dead, CHANGE_TIME);
            admin.awaitSettled(List.of(survivor), CHANGE_TIME);
        }
        assertThat(admin.view(survivor).get("lost")).isEmpty();

        List<URI> members = new ArrayList<>(List.of(survivor));
        for (int joined = 1; joined <= 2; joined++) {
            members.add(startJoiner("new-" + joined, List.of(survivor), 50_000).baseUri());
            admin.awaitMembers(survivor, members.size(), CHANGE_TIME);
            admin.awaitSettled(members, CHANGE_TIME);
        }
        for (URI node : members.subList(1, 3)) {
            for (int i = 0; i < keys; i++) {
                HttpResponse<String> read = HistoryLoad.send("GET", node, "lost-" + i, "2/3", null);
                assertThat(read.statusCode()).as("GET lost-%d through %s", i, node).isEqualTo(200);
                assertThat(read.body()).isEqualTo("value-" + i);
            }
        }
    }

    /**
     * A member killed and started again on an empty data dir (a lost disk) answers {@code /v0/status} 503 until it
     * has rebuilt its store from the other replicas; then, with both its peers frozen, every acknowledged key reads
     * through it at 1/3 from its own store. Last, the view log's leader dies for good while the log is idle (no
     * change since the disk was lost): the emptied member holds the log again and votes, so it and the third member
     * elect a leader and remove the dead one through it; its Raft server ran throughout. (Before, the leader resent
     * such a member nothing of an idle log, its server closed itself every few seconds, and after the leader's death
     * the log could elect no leader: NemesisIT's failure in a CI run.)
     */
    @Test
    void aMemberOnAnEmptyDataDirRebuildsBeforeItServesAndVotes() throws Exception {
        List<String> jvm = new ArrayList<>(JVM);
        jvm.add("-Ddht.stream-rate=300"); // a rebuild long enough to be seen
        startCluster(3, jvm);
        List<URI> all = cluster.urls().stream().map(URI::create).toList();
        URI lost = all.get(2);
        try (HistoryLoad load = new HistoryLoad("e", all)) {
            load.preload();
            load.start();
            load.avoid(lost);
            cluster.kill(2);
            load.singleCopiesMayBeLost(); // 1/1 writes kept only by the lost disk
            assertThat(FileSystemUtils.deleteRecursively(cluster.dataDir(2))).isTrue();
            cluster.launchAgain(2);
            List<Integer> statuses = new ArrayList<>();
            await().atMost(CHANGE_TIME).pollInterval(Duration.ofMillis(100)).until(() -> {
                int status = admin.status(lost);
                if (status != -1 && (statuses.isEmpty() || statuses.get(statuses.size() - 1) != status)) {
                    statuses.add(status);
                }
                return status == 200;
            });
            assertThat(statuses).as("/v0/status of the node on an empty disk, in turn").startsWith(503).endsWith(200)
                    .containsOnly(503, 200);
            // logged just after the gate opened: the output may lag the first 200 a little
            await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(100))
                    .untilAsserted(() -> assertThat(cluster.node(2).output()).contains("rebuild complete"));
            admin.awaitSettled(all, CHANGE_TIME);

            load.stop();
            List<Long> peers = List.of(cluster.node(0).pid(), cluster.node(1).pid());
            NodeProcess.signal("-STOP", peers);
            try {
                load.assertEveryWriteReadable(List.of(lost), "1/3");
            } finally {
                NodeProcess.signal("-CONT", peers);
            }
            checkHistory(load, all, null);
        }

        int leader = await().atMost(CHANGE_TIME).ignoreExceptions().until(
                () -> all.indexOf(URI.create(admin.view(all.get(0)).get("leader").asText())), index -> index >= 0);
        int dead = leader == 2 ? 0 : leader;   // the emptied member leads only if it was elected since
        cluster.kill(dead);
        HttpResponse<String> removed = removenode(lost, all.get(dead));
        assertThat(removed.statusCode()).as(removed.body()).isEqualTo(202);
        List<URI> left = all.stream().filter(node -> !node.equals(all.get(dead))).toList();
        admin.awaitMembers(lost, 2, CHANGE_TIME);
        admin.awaitSettled(left, CHANGE_TIME);
        assertThat(cluster.node(2).output()).as("the emptied member's log")
                .doesNotContain("view log's Raft server of " + lost + " is CLOSED");
    }

    /**
     * A join whose joiner died for good while the view log's leader keeps changing (each leader in turn frozen 3 s
     * with SIGSTOP, so the others elect another: a new leader every few seconds, more often than the failure
     * timeout): it is rolled back within the failure timeout plus slack from the joiner's death however often the
     * leader changed, as every member's failure detector keeps its last-seen times across leader changes. (Before,
     * each leader change cleared them, so a leader changing more often than the timeout postponed the rollback
     * without bound.)
     */
    @Test
    void aJoinWhoseJoinerDiedIsRolledBackWhileTheLeaderKeepsChanging() throws Exception {
        startCluster(3, JVM);
        List<URI> all = cluster.urls().stream().map(URI::create).toList();
        NodeProcess joiner = startJoiner("churn", all, 20);
        awaitPhase(all.get(0), joiner.baseUri(), "streaming");
        long term = admin.view(all.get(0)).get("term").asLong();
        joiner.kill();
        long killed = System.nanoTime();
        int frozen = 0;
        while (!rolledBack(all, joiner.baseUri())) {
            assertThat(Duration.ofNanos(System.nanoTime() - killed)).as("time since the joiner's death, %d leaders "
                    + "frozen", frozen).isLessThan(ROLLBACK_TIME);
            long leaderPid = cluster.node(all.indexOf(leader(all))).pid();
            NodeProcess.signal("-STOP", List.of(leaderPid));
            try {
                Thread.sleep(3_000);
            } finally {
                NodeProcess.signal("-CONT", List.of(leaderPid));
            }
            frozen++;
        }
        long rollbackMs = (System.nanoTime() - killed) / 1_000_000;
        awaitRolledBack(all, joiner.baseUri());
        long terms = admin.view(all.get(0)).get("term").asLong() - term;
        assertThat(terms).as("elections (terms) of the log while the join waited for its rollback").isGreaterThan(1);
        System.out.printf("joiner killed while streaming, %d leaders frozen 3 s in turn, the log's term %d higher: "
                + "rolled back %d ms later%n", frozen, terms, rollbackMs);
    }

    /** True if every node of {@code nodes} answers a view with no change in progress and without {@code joiner}. */
    private boolean rolledBack(List<URI> nodes, URI joiner) {
        try {
            for (URI node : nodes) {
                JsonNode view = admin.view(node);
                if (!view.get("change").isNull() || memberUrls(view).contains(joiner.toString())) {
                    return false;
                }
            }
            return true;
        } catch (IOException | RuntimeException | AssertionError e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    /**
     * Two founding members lose their disks while the third, which holds the cluster, is down (all three killed,
     * two data dirs emptied, those two started again): they form no cluster of their own (a founding member on an
     * empty disk forms one only when every node of {@code dht.nodes} answers and none holds a cluster id): for 20 s
     * both stay at epoch 0, unready, and say they wait. Once the third is back both take its cluster, its id and
     * epoch, and say they lost their data. (Before, two such seeds formed a fresh epoch 1 in the same Raft group.) The
     * log has then lost two of its three voters: docs/membership.md's recovery from a lost majority goes on from there
     * ({@code theSurvivorOfALostMajorityIsRecoveredAndTheDeadAreReplaced}).
     */
    @Test
    void twoFoundingMembersOnEmptyDisksFormNoClusterWhileTheThirdIsDown() throws Exception {
        startCluster(3, JVM);
        List<URI> all = cluster.urls().stream().map(URI::create).toList();
        JsonNode formed = admin.view(all.get(0));
        for (int i = 0; i < 3; i++) {
            cluster.kill(i);
        }
        for (int i = 0; i < 2; i++) {
            assertThat(FileSystemUtils.deleteRecursively(cluster.dataDir(i))).isTrue();
            cluster.launchAgain(i);
        }
        List<URI> emptied = all.subList(0, 2);
        await().atMost(CHANGE_TIME).pollInterval(Duration.ofMillis(250)).ignoreExceptions()
                .until(() -> emptied.stream().allMatch(node -> admin.status(node) == 503));
        await().during(Duration.ofSeconds(20)).atMost(Duration.ofSeconds(25)).pollInterval(Duration.ofMillis(500))
                .ignoreExceptions().untilAsserted(() -> {
                    for (URI node : emptied) {
                        assertThat(admin.view(node).get("epoch").asLong()).as("epoch of %s", node).isZero();
                        assertThat(admin.status(node)).as("/v0/status of %s", node).isEqualTo(503);
                    }
                });
        for (int i = 0; i < 2; i++) {
            assertThat(cluster.node(i).output()).contains("the view log starts once the new cluster's id is known");
        }

        cluster.launchAgain(2);
        await().atMost(CHANGE_TIME).pollInterval(Duration.ofMillis(250)).ignoreExceptions().untilAsserted(() -> {
            for (URI node : emptied) {
                JsonNode view = admin.view(node);
                assertThat(view.get("cluster").asText()).as("cluster of %s", node)
                        .isEqualTo(formed.get("cluster").asText());
                assertThat(view.get("epoch").asLong()).as("epoch of %s", node).isEqualTo(formed.get("epoch").asLong());
            }
        });
        // said once the founding member's next round (every second) finds the view it was given meanwhile
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(250)).untilAsserted(() -> {
            for (int i = 0; i < 2; i++) {
                assertThat(cluster.node(i).output()).contains("it lost its data");
            }
        });
    }

    /**
     * The whole cluster killed ({@code kill -9}: a power loss) and started again at once, the first member's data dir
     * emptied meanwhile (a lost disk): the emptied member, which may find no seed running when it starts, forms
     * no cluster of its own (every log leader and term it names, its peers name too); every member ends on one view
     * (epoch, members, the log's leader and term), the emptied one holding the cluster's log. It answers {@code /v0/status} 503 until it has rebuilt its store from the other
     * replicas, then 200; with both its peers frozen every acknowledged key reads through it at 1/3 from its own
     * store.
     */
    @Test
    void allMembersStartedAtOnceWithOneDataDirEmptiedFormOneClusterAndTheEmptiedOneRebuilds() throws Exception {
        List<String> jvm = new ArrayList<>(JVM);
        // three cold JVMs started at once on the build machine's two cores: a replica's first answers may take over
        // the 1-s default, and a 2/3 request that times out at two replicas fails the load's check
        jvm.add("-Ddht.replica-timeout=3s");
        startCluster(3, jvm);
        List<URI> all = cluster.urls().stream().map(URI::create).toList();
        URI lost = all.get(0);
        List<URI> peers = all.subList(1, 3);
        try (HistoryLoad load = new HistoryLoad("g", all)) {
            load.preload();
            load.start();
            await().atMost(CHANGE_TIME).until(() -> load.acknowledged.sum() >= 300);
            JsonNode before = admin.view(all.get(1));

            load.idle();
            for (int i = 0; i < all.size(); i++) {
                cluster.kill(i);
            }
            load.singleCopiesMayBeLost(); // 1/1 writes kept only by the lost disk
            assertThat(FileSystemUtils.deleteRecursively(cluster.dataDir(0))).isTrue();
            cluster.launchAllAgain();

            // the emptied member watched from its start: its /v0/status answers, and the log's leader and term of
            // each view it shows at epoch 1 or more (from a log of its own they would be a leader and term its peers
            // never name)
            List<Integer> statuses = new ArrayList<>();
            Set<String> lostLeaders = new LinkedHashSet<>();
            Set<String> peerLeaders = new LinkedHashSet<>();
            await().atMost(CHANGE_TIME).pollInterval(Duration.ofMillis(100)).until(() -> {
                int status = admin.status(lost);
                if (status != -1 && (statuses.isEmpty() || statuses.get(statuses.size() - 1) != status)) {
                    statuses.add(status);
                }
                leaderOf(viewOrNull(lost)).ifPresent(lostLeaders::add);
                peers.forEach(peer -> leaderOf(viewOrNull(peer)).ifPresent(peerLeaders::add));
                return status == 200;
            });
            String output = cluster.node(0).output();
            String startKind = output.contains("no seed holds one") ? "found no running seed"
                    : output.contains("lost its data") ? "found the running cluster" : "?";
            assertThat(statuses).as("/v0/status of the node on an empty disk, in turn").startsWith(503)
                    .endsWith(200).containsOnly(503, 200);
            assertThat(output).as("the emptied node's output").contains("rebuild complete");

            // the load again, through every node, once all three run
            load.writeThrough(all);
            load.readThrough(all);
            JsonNode agreed = awaitOneView(all);
            assertThat(memberUrls(agreed)).as("members after the restart").containsExactlyElementsOf(
                    memberUrls(before));
            leaderOf(agreed).ifPresent(peerLeaders::add);
            assertThat(peerLeaders).as("log leaders and terms its peers named, against those of the emptied node")
                    .containsAll(lostLeaders);
            assertThat(admin.view(lost).get("index").asLong()).as("the emptied node's log index: the cluster's log")
                    .isGreaterThanOrEqualTo(before.get("index").asLong());
            long acknowledged = load.acknowledged.sum();
            await().atMost(CHANGE_TIME).until(() -> load.acknowledged.sum() >= acknowledged + 200);

            load.stop();
            List<Long> peerPids = List.of(cluster.node(1).pid(), cluster.node(2).pid());
            NodeProcess.signal("-STOP", peerPids);
            try {
                load.assertEveryWriteReadable(List.of(lost), "1/3");
            } finally {
                NodeProcess.signal("-CONT", peerPids);
            }
            System.out.printf("all restarted at once, %s emptied (it %s): /v0/status %s, its log leaders %s%n",
                    lost, startKind, statuses, lostLeaders);
            checkHistory(load, all, null);
        }
    }

    /**
     * A member frozen (SIGSTOP, a long GC pause or a frozen VM) is removed with removenode, then resumed while
     * writes at 1/3 are waiting for it: every write it acknowledges is readable at 2/3 from the members.
     */
    @Test
    void aMemberFrozenRemovedAndResumedLosesNoWriteItAcknowledges() throws Exception {
        startCluster(3, JVM);
        List<URI> all = cluster.urls().stream().map(URI::create).toList();
        URI frozen = all.get(2);
        List<URI> members = all.subList(0, 2);
        try (HistoryLoad load = new HistoryLoad("f", all)) {
            load.preload();
            load.start();
            load.avoid(frozen);
            NodeProcess.signal("-STOP", List.of(cluster.node(2).pid()));
            load.singleCopiesMayBeLost(); // 1/1 writes kept only by the removed node
            HttpResponse<String> removed;
            try {
                removed = removenode(all.get(0), frozen);
                assertThat(removed.statusCode()).as(removed.body()).isEqualTo(202);
                admin.awaitMembers(all.get(0), 2, CHANGE_TIME);
                admin.awaitSettled(members, CHANGE_TIME);
            } catch (AssertionError | RuntimeException e) {
                NodeProcess.signal("-CONT", List.of(cluster.node(2).pid()));
                throw e;
            }
            ExecutorService writers = Executors.newFixedThreadPool(50);
            List<String> acknowledged = new ArrayList<>();
            try {
                List<Future<Integer>> puts = new ArrayList<>();
                for (int i = 0; i < 200; i++) {
                    String id = "frozen-" + i;
                    puts.add(writers.submit(() -> HistoryLoad.send("PUT", frozen, id, "1/3", "v-" + id)
                            .statusCode()));
                }
                Thread.sleep(1_000); // the PUTs wait in the frozen node's accept queue
                NodeProcess.signal("-CONT", List.of(cluster.node(2).pid()));
                for (int i = 0; i < puts.size(); i++) {
                    if (puts.get(i).get() == 201) {
                        acknowledged.add("frozen-" + i);
                    }
                }
            } finally {
                writers.shutdownNow();
            }
            List<String> lost = new ArrayList<>();
            for (String id : acknowledged) {
                int status = HistoryLoad.send("GET", members.get(0), id, "2/3", null).statusCode();
                if (status != 200) {
                    lost.add(id + ": " + status);
                }
            }
            System.out.printf("frozen, removed, resumed: %d of 200 PUTs acknowledged by it, %d of them lost%n",
                    acknowledged.size(), lost.size());
            assertThat(lost).as("writes the removed node acknowledged after it resumed, not readable at 2/3")
                    .isEmpty();

            load.stop();
            checkHistory(load, members, "2/2"); // two members left: a from of 3 is refused (400)
        }
    }

    /**
     * Cleanup only when the change is final on every member, also after a restart: while a 4th node joins, one
     * member is frozen (SIGSTOP) once it took the read switch, so it has not taken the join's final view; another
     * member, its cleanup pending, is killed and started again: its marker file is no word to start, and its cleanup
     * stays pending (it may still receive writes placed under the read switch by the frozen member, which does not
     * yet know the change ended); once the frozen member resumes, every member's cleanup completes and every key
     * written before the join reads back at 3/3 through the restarted member. {@code dht.change-failure-timeout} is
     * 60 s here, so the frozen member is not judged dead meanwhile (a dead member is not waited for). Before, a
     * restarted member started its cleanup at once from its marker file.
     */
    @Test
    void aMemberRestartedWithItsCleanupPendingWaitsUntilAFrozenMemberTookTheFinalView() throws Exception {
        List<String> jvm = List.of("-Xmx256m", "-Ddht.change-failure-timeout=60s");
        startCluster(3, jvm);
        List<URI> all = cluster.urls().stream().map(URI::create).toList();
        List<String> keys = new ArrayList<>();
        for (int i = 0; i < 300; i++) {
            String id = "final-" + i;
            assertThat(HistoryLoad.send("PUT", all.get(i % 3), id, "3/3", "v-" + id).statusCode()).isEqualTo(201);
            keys.add(id);
        }
        URI leader = leader(all);
        List<URI> others = all.stream().filter(node -> !node.equals(leader)).toList();
        URI frozen = others.get(0);
        URI restarted = others.get(1);
        long frozenPid = cluster.node(all.indexOf(frozen)).pid();
        NodeProcess joiner = null;
        int attempt = 0;
        while (joiner == null) {
            attempt++;
            assertThat(attempt).as("joins whose final view the member to freeze took before it was frozen")
                    .isLessThanOrEqualTo(4);
            NodeProcess candidate = startJoiner("final-" + attempt, all, 50_000, jvm);
            if (faultAtPhase(frozen, candidate.baseUri(), "write-both-read-new",
                    () -> NodeProcess.signal("-STOP", List.of(frozenPid)))) {
                if (completedWithCleanupPending(leader, restarted, candidate.baseUri())) {
                    joiner = candidate;
                    continue;
                }
                NodeProcess.signal("-CONT", List.of(frozenPid));
            }
            // the frozen member had taken the final view (or the join ended before it could be frozen): again
            admin.awaitNoChange(leader, CHANGE_TIME);
            takeOut("decommission", leader, candidate, all);
        }
        long finalEpoch = admin.view(leader).get("epoch").asLong();
        int index = all.indexOf(restarted);
        long restarting = System.nanoTime();
        try {
            cluster.kill(index);
            cluster.restart(index);
            await().atMost(CHANGE_TIME).pollInterval(Duration.ofMillis(250)).ignoreExceptions()
                    .until(() -> admin.view(restarted).get("epoch").asLong() == finalEpoch);
            await().during(Duration.ofSeconds(8)).atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(500))
                    .untilAsserted(() -> assertThat(admin.view(restarted).get("cleanupPending").asBoolean())
                            .as("the restarted member's cleanup while %s has not taken epoch %d", frozen, finalEpoch)
                            .isTrue());
            assertThat(cluster.node(index).output()).as("the restarted member's log: its marker file was there")
                    .contains("cleanup pending since before the restart");
        } finally {
            NodeProcess.signal("-CONT", List.of(frozenPid));
        }
        long resumed = System.nanoTime();
        List<URI> members = new ArrayList<>(all);
        members.add(joiner.baseUri());
        admin.awaitSettled(members, CHANGE_TIME);
        System.out.printf("a member frozen at the read switch of join %d: the restarted member's cleanup pending"
                + " %.1f s from its restart until the frozen member resumed; every member settled %.1f s after that%n",
                attempt, (resumed - restarting) / 1e9, (System.nanoTime() - resumed) / 1e9);
        for (String id : keys) {
            HttpResponse<String> read = HistoryLoad.send("GET", restarted, id, "3/3", null);
            assertThat(read.statusCode()).as("GET %s at 3/3 through the restarted member: %s", id, read.body())
                    .isEqualTo(200);
            assertThat(read.body()).isEqualTo("v-" + id);
        }
    }

    /**
     * True if within 15 s the join of {@code joiner} completed on {@code leader} and {@code member} took its final view
     * with its cleanup pending; false if not (the frozen member had not answered the read switch: no final view
     * while it is frozen; or it had taken the final view too: the cleanup was allowed).
     */
    private boolean completedWithCleanupPending(URI leader, URI member, URI joiner) {
        try {
            JsonNode ended = admin.awaitNoChange(leader, Duration.ofSeconds(15));
            if (!memberUrls(ended).contains(joiner.toString())) {
                return false;
            }
            long epoch = ended.get("epoch").asLong();
            JsonNode held = await().atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(100))
                    .ignoreExceptions().until(() -> admin.view(member), view -> view.get("epoch").asLong() == epoch);
            return held.get("cleanupPending").asBoolean();
        } catch (ConditionTimeoutException e) {
            return false;
        }
    }

    private void startCluster(int size, List<String> jvm) throws IOException, InterruptedException {
        cluster = ProcessCluster.start(size, dir, jvm);
        admin = new ClusterAdmin(cluster.secret());
    }

    /**
     * The load's history: no failure during it, every acknowledged write readable at its own replicas (or at
     * {@code replicas} if not null) through the members (tombstones included: a deleted key reads absent), and every member settled.
     */
    private void checkHistory(HistoryLoad load, List<URI> members, String replicas) throws Exception {
        load.assertNoFailures(getClass().getSimpleName());
        load.assertEveryWriteReadable(members, replicas);
        admin.awaitSettled(members, CHANGE_TIME);
    }

    /** Starts a node that joins through the seeds {@code seeds}, streaming at most {@code rate} records a second. */
    private NodeProcess startJoiner(String name, List<URI> seeds, int rate) throws IOException {
        return startJoiner(name, seeds, rate, JVM);
    }

    /** {@link #startJoiner(String, List, int)} with the JVM options {@code jvm}. */
    private NodeProcess startJoiner(String name, List<URI> seeds, int rate, List<String> jvm) throws IOException {
        int port = NodeProcess.freePorts(1).get(0);
        NodeProcess joiner = NodeProcess.start(port, dir.resolve("data-" + name).toAbsolutePath(),
                dir.resolve(name + ".log"), jvm, "--dht.self=http://localhost:" + port,
                "--dht.nodes=" + String.join(",", seeds.stream().map(URI::toString).toList()),
                "--dht.cluster-secret=" + cluster.secret(), "--dht.stream-rate=" + rate);
        joiners.add(joiner);
        return joiner;
    }

    /** Waits until {@code node}'s view shows the join of {@code joiner} in {@code phase}. */
    private void awaitPhase(URI node, URI joiner, String phase) {
        await().atMost(CHANGE_TIME).pollInterval(Duration.ofMillis(100)).ignoreExceptions().until(() -> {
            JsonNode change = admin.view(node).get("change");
            return !change.isNull() && change.get("node").asText().equals(joiner.toString())
                    && change.get("phase").asText().equals(phase);
        });
    }

    /**
     * Waits until {@code node}'s view shows the join of {@code joiner} in {@code phase}, then runs {@code fault} at
     * once (kills the joiner, freezes a member) and returns true; returns false if the join completes first.
     */
    private boolean faultAtPhase(URI node, URI joiner, String phase, Fault fault) {
        AtomicBoolean struck = new AtomicBoolean();
        await().atMost(CHANGE_TIME).pollInterval(Duration.ofMillis(10)).ignoreExceptions().until(() -> {
            JsonNode view = admin.view(node);
            JsonNode change = view.get("change");
            if (!change.isNull() && change.get("node").asText().equals(joiner.toString())
                    && change.get("phase").asText().equals(phase)) {
                fault.strike();
                struck.set(true);
                return true;
            }
            return change.isNull() && memberUrls(view).contains(joiner.toString());
        });
        return struck.get();
    }

    /** A fault to strike a node with: {@code kill -9}, SIGSTOP. */
    private interface Fault {
        void strike() throws Exception;
    }

    /**
     * Takes {@code joiner} out again with {@code action} ({@code decommission}, or {@code removenode} if it is dead)
     * through {@code through}, waits until {@code members} are the members again and settled, and stops its process.
     */
    private void takeOut(String action, URI through, NodeProcess joiner, List<URI> members) {
        HttpResponse<String> answer = change(through, action, joiner.baseUri());
        assertThat(answer.statusCode()).as(answer.body()).isEqualTo(202);
        admin.awaitMembers(through, members.size(), CHANGE_TIME);
        admin.awaitSettled(members, CHANGE_TIME);
        joiner.close();
    }

    /** Waits until every live node's view has no change in progress and {@code joiner} is no member. */
    private void awaitRolledBack(List<URI> live, URI joiner) {
        await().atMost(ROLLBACK_TIME).pollInterval(Duration.ofMillis(250)).ignoreExceptions().untilAsserted(() -> {
            for (URI node : live) {
                JsonNode view = admin.view(node);
                assertThat(view.get("change").isNull()).as("change on %s: %s", node, view).isTrue();
                assertThat(memberUrls(view)).as("members of %s", node).doesNotContain(joiner.toString());
            }
        });
    }

    /** The view log's leader as the first of {@code live} knows it, once it knows one among {@code live}. */
    private URI leader(List<URI> live) {
        return await().atMost(CHANGE_TIME).pollInterval(Duration.ofMillis(250)).ignoreExceptions()
                .until(() -> URI.create(admin.view(live.get(0)).get("leader").asText()), live::contains);
    }

    /**
     * Waits until every node of {@code nodes} answers the same epoch, members, log leader and term, with no change in
     * progress: one cluster. Returns the first node's view.
     */
    private JsonNode awaitOneView(List<URI> nodes) {
        AtomicReference<JsonNode> agreed = new AtomicReference<>();
        await().atMost(CHANGE_TIME).pollInterval(Duration.ofMillis(250)).ignoreExceptions().untilAsserted(() -> {
            JsonNode first = admin.view(nodes.get(0));
            assertThat(first.get("leader").isNull()).as("a log leader known to %s", nodes.get(0)).isFalse();
            assertThat(first.get("change").isNull()).as("change in progress: %s", first).isTrue();
            for (URI node : nodes) {
                JsonNode view = admin.view(node);
                for (String field : List.of("epoch", "members", "leader", "term", "change")) {
                    assertThat(view.get(field)).as("%s of %s, against %s", field, node, nodes.get(0))
                            .isEqualTo(first.get(field));
                }
            }
            agreed.set(first);
        });
        return agreed.get();
    }

    /** "term T leader URL" of a view at epoch 1 or more that names the log's leader; empty otherwise. */
    private static Optional<String> leaderOf(JsonNode view) {
        return view == null || view.get("epoch").asLong() < 1 || view.get("leader").isNull() ? Optional.empty()
                : Optional.of("term " + view.get("term").asLong() + " leader " + view.get("leader").asText());
    }

    /** {@code GET /actuator/cluster} of {@code node}, or null while it does not answer one. */
    private JsonNode viewOrNull(URI node) {
        try {
            return admin.view(node);
        } catch (IOException | AssertionError e) {
            return null;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return null;
        }
    }

    private HttpResponse<String> removenode(URI through, URI node) {
        return change(through, "removenode", node);
    }

    /**
     * {@code POST /actuator/cluster/ACTION {"node": node}} on {@code through}, sent again while refused (409: the
     * last change's cleanup still pending, a member not yet at the last epoch); the first other answer.
     */
    private HttpResponse<String> change(URI through, String action, URI node) {
        return await().atMost(CHANGE_TIME).pollInterval(Duration.ofSeconds(1)).ignoreExceptions()
                .until(() -> admin.post(through, "/actuator/cluster/" + action, "{\"node\":\"" + node + "\"}"),
                        response -> response.statusCode() != 409);
    }

    private static List<String> memberUrls(JsonNode view) {
        return view.get("members").findValuesAsText("node");
    }


}
