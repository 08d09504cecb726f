package dev.dht.membership;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.dht.cluster.Membership;
import dev.dht.cluster.Placement;
import dev.dht.storage.Record;
import dev.dht.testing.InProcessCluster;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A node joins a running cluster under load and is then decommissioned under load, in process: no acknowledged
 * write is lost (2/3, 1/1 and 3/3 writes and deletes), no 2/3 request fails while every node is up, and after each
 * change's cleanup every key's newest record is on exactly its {@code from} owners under the view and nowhere else.
 * The node that left answers clients 503, is not ready and refuses to start on its old data dir. A change asked for
 * while a member is down is refused with 409 naming it, the view unchanged.
 */
class LiveMembershipTest {
    private static final Duration CHANGE_TIME = Duration.ofSeconds(90);

    @Test
    void aNodeJoinsAndLeavesUnderLoadAndNoAcknowledgedWriteIsLost(@TempDir Path root) throws Exception {
        try (InProcessCluster cluster = InProcessCluster.start(3, root, Map.of())) {
            Map<String, Written> acknowledged = new ConcurrentHashMap<>();
            preload(cluster, acknowledged);

            Load load = new Load(cluster, acknowledged, "join");
            load.start();
            int joiner = cluster.add(Map.of());
            awaitMembers(cluster, 0, 4);
            load.stop();
            awaitSettled(cluster, List.of(0, 1, 2, joiner));

            assertThat(load.failures2of3.get()).as("2/3 requests that failed while every node was up").isZero();
            assertThat(load.writes.get()).as("writes made during the join").isGreaterThan(50);
            assertEveryWriteReadable(cluster, acknowledged, List.of(0, 1, 2, joiner));
            assertOwnersOnly(cluster, acknowledged, List.of(0, 1, 2, joiner));
            assertThat(copiesOnNode(cluster, acknowledged, joiner)).as("the joiner holds its share").isGreaterThan(100);

            Load leaving = new Load(cluster, acknowledged, "leave");
            leaving.start();
            HttpResponse<byte[]> started = cluster.client(joiner).admin("/actuator/cluster/decommission", null,
                    InProcessCluster.SECRET);
            assertThat(started.statusCode()).as(new String(started.body(), StandardCharsets.UTF_8)).isEqualTo(202);
            awaitMembers(cluster, 0, 3);
            leaving.stop();
            awaitSettled(cluster, List.of(0, 1, 2));

            assertThat(leaving.failures2of3.get()).as("2/3 requests that failed while every node was up").isZero();
            assertEveryWriteReadable(cluster, acknowledged, List.of(0, 1, 2));
            assertOwnersOnly(cluster, acknowledged, List.of(0, 1, 2));
            HttpResponse<byte[]> left = cluster.client(joiner).get("k-1", null);
            assertThat(left.statusCode()).as("a node that left serves no client").isEqualTo(503);
            assertThat(new String(left.body(), StandardCharsets.UTF_8)).contains("has left");
            assertThat(cluster.client(joiner).send("GET", "/actuator/health/readiness", new byte[0]).statusCode())
                    .isEqualTo(503);

            cluster.stop(joiner);
            assertThatThrownBy(() -> cluster.start(joiner)).as("a node that left refuses its old data dir")
                    .hasStackTraceContaining("has left the cluster");
        }
    }

    @Test
    void aChangeIsRefusedWhileAMemberIsDown(@TempDir Path root) throws Exception {
        try (InProcessCluster cluster = InProcessCluster.start(3, root, Map.of())) {
            cluster.stop(2);
            HttpResponse<byte[]> refused = cluster.client(1).admin("/actuator/cluster/decommission", null,
                    InProcessCluster.SECRET);
            String body = new String(refused.body(), StandardCharsets.UTF_8);
            assertThat(refused.statusCode()).as(body).isEqualTo(409);
            assertThat(body).contains(cluster.url(2).toString()).contains("down");
            assertThat(view(cluster, 0).get("epoch").asLong()).as("the view did not change").isEqualTo(1);
            assertThat(view(cluster, 1).get("change").isNull()).isTrue();

            HttpResponse<byte[]> noSecret = cluster.client(1).send("POST", "/actuator/cluster/decommission", new byte[0]);
            assertThat(noSecret.statusCode()).isEqualTo(403);
        }
    }

    /** 2/3 writes, some 1/1 and 3/3, and deletes, before any change. */
    private static void preload(InProcessCluster cluster, Map<String, Written> acknowledged) {
        for (int i = 0; i < 600; i++) {
            String replicas = i % 6 == 0 ? "1/1" : i % 6 == 1 ? "3/3" : "2/3";
            String id = "k-" + i;
            String value = "v-" + i;
            assertThat(cluster.client(i % 3).put(id, value, replicas)).isEqualTo(201);
            acknowledged.put(id, new Written(value, replicas));
            if (i % 10 == 5) {
                assertThat(cluster.client((i + 1) % 3).delete(id, replicas)).isEqualTo(202);
                acknowledged.put(id, new Written(null, replicas));
            }
        }
    }

    /** Continuous writes and deletes through every original node, recording what was acknowledged. */
    private static final class Load {
        private final InProcessCluster cluster;
        private final Map<String, Written> acknowledged;
        private final String prefix;
        private final AtomicBoolean running = new AtomicBoolean(true);
        final AtomicInteger writes = new AtomicInteger();
        final AtomicInteger failures2of3 = new AtomicInteger();
        private Thread thread;

        Load(InProcessCluster cluster, Map<String, Written> acknowledged, String prefix) {
            this.cluster = cluster;
            this.acknowledged = acknowledged;
            this.prefix = prefix;
        }

        void start() {
            thread = new Thread(() -> {
                int i = 0;
                while (running.get()) {
                    String replicas = i % 5 == 0 ? "1/1" : "2/3";
                    String id = prefix + "-" + i;
                    String value = "w-" + i;
                    int status = cluster.client(i % 3).put(id, value, replicas);
                    if (status == 201) {
                        acknowledged.put(id, new Written(value, replicas));
                        writes.incrementAndGet();
                    } else if (replicas.equals("2/3")) {
                        failures2of3.incrementAndGet();
                    }
                    if (i % 7 == 3) {
                        String old = "k-" + (i % 600);
                        Written before = acknowledged.get(old);
                        if (cluster.client((i + 1) % 3).delete(old, before.replicas()) == 202) {
                            acknowledged.put(old, new Written(null, before.replicas()));
                        } else if (before.replicas().equals("2/3")) {
                            failures2of3.incrementAndGet();
                        }
                    }
                    i++;
                }
            }, "membership-load-" + prefix);
            thread.start();
        }

        void stop() throws InterruptedException {
            running.set(false);
            thread.join();
        }
    }

    private record Written(String value, String replicas) {
    }

    private static void assertEveryWriteReadable(InProcessCluster cluster, Map<String, Written> acknowledged,
                                                 List<Integer> nodes) {
        int n = 0;
        for (Map.Entry<String, Written> entry : acknowledged.entrySet()) {
            int node = nodes.get(n++ % nodes.size());
            Written written = entry.getValue();
            String readAt = written.replicas().equals("1/1") ? "1/1" : "2/3";
            HttpResponse<byte[]> read = cluster.client(node).get(entry.getKey(), readAt);
            if (written.value() == null) {
                assertThat(read.statusCode()).as("deleted %s read at %s from node %d", entry.getKey(), readAt, node)
                        .isEqualTo(404);
            } else {
                assertThat(read.statusCode()).as("%s read at %s from node %d", entry.getKey(), readAt, node)
                        .isEqualTo(200);
                assertThat(new String(read.body(), StandardCharsets.UTF_8)).isEqualTo(written.value());
            }
        }
    }

    /** Every key's records are on exactly its {@code from} replicas under node 0's view, and nowhere else. */
    private static void assertOwnersOnly(InProcessCluster cluster, Map<String, Written> acknowledged,
                                         List<Integer> nodes) {
        Placement placement = cluster.bean(0, Membership.class).placement();
        for (Map.Entry<String, Written> entry : acknowledged.entrySet()) {
            byte[] key = entry.getKey().getBytes(StandardCharsets.UTF_8);
            int from = Integer.parseInt(entry.getValue().replicas().substring(2));
            List<String> owners = placement.newReplicas(key, from).stream().map(node -> node.url().toString()).toList();
            List<String> holders = new ArrayList<>();
            for (int i : nodes) {
                Record record = cluster.storedAt(i, entry.getKey());
                if (record != null) {
                    holders.add(cluster.url(i).toString());
                }
            }
            assertThat(holders).as("nodes holding %s (%s)", entry.getKey(), entry.getValue().replicas())
                    .containsExactlyInAnyOrderElementsOf(owners);
        }
    }

    private static long copiesOnNode(InProcessCluster cluster, Map<String, Written> acknowledged, int node) {
        return acknowledged.keySet().stream().filter(id -> cluster.storedAt(node, id) != null).count();
    }

    private static void awaitMembers(InProcessCluster cluster, int node, int members) {
        await().atMost(CHANGE_TIME).pollInterval(Duration.ofMillis(200)).untilAsserted(() -> {
            JsonNode view = view(cluster, node);
            assertThat(view.get("members").size()).isEqualTo(members);
            assertThat(view.get("change").isNull()).as("change done: %s", view).isTrue();
        });
    }

    /** Every node holds node 0's epoch and has finished its cleanup. */
    private static void awaitSettled(InProcessCluster cluster, List<Integer> nodes) {
        long epoch = cluster.bean(0, Membership.class).epoch();
        await().atMost(CHANGE_TIME).pollInterval(Duration.ofMillis(200)).untilAsserted(() -> {
            for (int i : nodes) {
                JsonNode view = view(cluster, i);
                assertThat(view.get("epoch").asLong()).as("epoch of node %d", i).isEqualTo(epoch);
                assertThat(view.get("cleanupPending").asBoolean()).as("cleanup of node %d", i).isFalse();
            }
        });
    }

    private static JsonNode view(InProcessCluster cluster, int i) throws Exception {
        HttpResponse<byte[]> response = cluster.client(i).send("GET", "/actuator/cluster", new byte[0]);
        assertThat(response.statusCode()).isEqualTo(200);
        return new ObjectMapper().readTree(response.body());
    }
}
