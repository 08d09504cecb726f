package dev.dht.membership;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.dht.testing.ClusterAdmin;
import dev.dht.testing.DhtClient;
import dev.dht.testing.NodeProcess;
import dev.dht.testing.ProcessCluster;
import java.net.URI;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.util.FileSystemUtils;

/**
 * How a node starts when its disk or the cluster cannot be trusted, over real node processes of one three-node
 * cluster (its tests run in order, each leaving the cluster for the next): a rebuild cut by {@code kill -9} runs again
 * at the next start, the node unready until it completed; then a node removed while it was down, started again while
 * every member is frozen (SIGSTOP), serves no client (it never confirms its view by silence) and learns it was removed
 * once they resume.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class StartupSafetyIT {
    private static final int KEYS = 400;
    private static final Duration CHANGE_TIME = Duration.ofMinutes(3);
    /** Repairs at 40 records per second: a rebuild from two peers of {@value #KEYS} keys takes about 20 s. */
    private static final List<String> JVM = List.of("-Xmx256m", "-Ddht.repair.max-rate=40",
            "-Ddht.change-failure-timeout=10s");


    @TempDir
    static Path dir;

    private ProcessCluster cluster;
    private ClusterAdmin admin;
    private List<URI> nodes;

    @BeforeAll
    void startCluster() throws Exception {
        cluster = ProcessCluster.start(3, dir, JVM);
        admin = new ClusterAdmin(cluster.secret());
        nodes = cluster.urls().stream().map(URI::create).toList();
        DhtClient client = new DhtClient(nodes.get(0));
        for (int i = 0; i < KEYS; i++) {
            assertThat(client.put("k" + i, "v" + i, "3/3")).as("PUT k%d at 3/3", i).isEqualTo(201);
        }
    }

    @AfterAll
    void stopCluster() {
        if (cluster != null) {
            cluster.close();
        }
    }

    /**
     * A member on an emptied data dir is killed ({@code kill -9}) a few seconds into its rebuild and started again on
     * the same dir: it says it resumes the rebuild, answers {@code /v0/status} 503 until the rebuild completed, then
     * 200, and with both peers frozen every key reads through it at 1/3 from its own store.
     */
    @Test
    @Order(1)
    void aRebuildCutByACrashRunsAgainBeforeTheNodeServes() throws Exception {
        cluster.kill(2);
        assertThat(FileSystemUtils.deleteRecursively(cluster.dataDir(2))).isTrue();
        cluster.launchAgain(2);
        await().atMost(CHANGE_TIME).pollInterval(Duration.ofMillis(100))
                .until(() -> cluster.node(2).output().contains("rebuild: streaming"));
        Thread.sleep(3_000);
        assertThat(cluster.node(2).output()).as("the first start's output").doesNotContain("rebuild complete");
        cluster.kill(2);

        cluster.launchAgain(2);
        List<Integer> statuses = new ArrayList<>();
        await().atMost(CHANGE_TIME).pollInterval(Duration.ofMillis(100)).until(() -> {
            int status = admin.status(nodes.get(2));
            if (status != -1 && (statuses.isEmpty() || statuses.get(statuses.size() - 1) != status)) {
                statuses.add(status);
            }
            return status == 200;
        });
        String output = cluster.node(2).output();
        assertThat(output).as("the second start's output").contains("a rebuild that did not complete")
                .contains("rebuild complete");
        assertThat(statuses).as("/v0/status of the restarted node, in turn").startsWith(503).endsWith(200)
                .containsOnly(503, 200);

        List<Long> peers = List.of(cluster.node(0).pid(), cluster.node(1).pid());
        NodeProcess.signal("-STOP", peers);
        try {
            DhtClient restarted = new DhtClient(nodes.get(2));
            List<String> missing = new ArrayList<>();
            for (int i = 0; i < KEYS; i++) {
                HttpResponse<byte[]> read = restarted.get("k" + i, "1/3");
                if (read.statusCode() != 200 || !new String(read.body(), StandardCharsets.UTF_8).equals("v" + i)) {
                    missing.add("k" + i + ": " + read.statusCode());
                }
            }
            assertThat(missing).as("keys the rebuilt node does not hold").isEmpty();
        } finally {
            NodeProcess.signal("-CONT", peers);
        }
    }

    /**
     * A member killed, removed (removenode), and started again on its old data dir while both members are frozen
     * (SIGSTOP: to it, a partition): no member answers and the view log has no leader it reaches, so it stays
     * unready and refuses every client write ({@code /v0/status} 503); once the members resume it learns it was
     * removed and still acknowledges nothing.
     */
    @Test
    @Order(2)
    void aRemovedNodeStartedWhileTheMembersAreFrozenAcknowledgesNoWrite() throws Exception {
        admin.awaitSettled(nodes, CHANGE_TIME);
        cluster.kill(2);
        HttpResponse<String> removed = await().atMost(CHANGE_TIME).pollInterval(Duration.ofSeconds(1))
                .ignoreExceptions().until(() -> admin.post(nodes.get(0), "/actuator/cluster/removenode",
                        "{\"node\":\"" + nodes.get(2) + "\"}"), response -> response.statusCode() != 409);
        assertThat(removed.statusCode()).as(removed.body()).isEqualTo(202);
        admin.awaitMembers(nodes.get(0), 2, CHANGE_TIME);
        admin.awaitSettled(nodes.subList(0, 2), CHANGE_TIME);

        List<Long> members = List.of(cluster.node(0).pid(), cluster.node(1).pid());
        NodeProcess.signal("-STOP", members);
        List<Integer> answers = new ArrayList<>();
        try {
            cluster.launchAgain(2);
            await().atMost(CHANGE_TIME).pollInterval(Duration.ofMillis(200)).until(() -> admin.status(nodes.get(2)) != -1);
            DhtClient removedNode = new DhtClient(nodes.get(2));
            long until = System.nanoTime() + Duration.ofSeconds(15).toNanos();
            for (int i = 0; System.nanoTime() < until; i++) {
                answers.add(removedNode.put("frozen-" + i, "x", "1/3"));
                assertThat(admin.status(nodes.get(2))).as("/v0/status of the removed node").isEqualTo(503);
                Thread.sleep(100);
            }
        } finally {
            NodeProcess.signal("-CONT", members);
        }
        assertThat(answers).as("answers to PUTs at 1/3 through the removed node while the members were frozen")
                .isNotEmpty().doesNotContain(201);
        await().atMost(CHANGE_TIME).pollInterval(Duration.ofMillis(200)).untilAsserted(() -> assertThat(
                cluster.node(2).output()).as("the removed node's output").contains("is no member of the cluster"));
        answers.add(new DhtClient(nodes.get(2)).put("resumed", "x", "1/3"));
        assertThat(answers).as("answers to PUTs at 1/3 through the removed node").doesNotContain(201);
        assertThat(admin.status(nodes.get(2))).as("/v0/status of the removed node after the members resumed")
                .isNotEqualTo(200);
    }


}
