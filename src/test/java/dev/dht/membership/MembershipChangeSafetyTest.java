package dev.dht.membership;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.dht.cluster.ClusterView;
import dev.dht.cluster.Placement;
import dev.dht.storage.LocalStore;
import dev.dht.storage.Record;
import dev.dht.testing.InProcessCluster;
import java.net.URI;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * What keeps a membership change safe: cleanup, without which a key deleted on its owners comes back from a former
 * owner after a round trip 3 -> 4 -> 3 (scylla#12220); abort up to the read switch, after which the cluster takes the
 * next change; removenode, after which the survivors hold every copy again. Also: a version only one old replica
 * holds (newer there, or the key absent on the primary source) reaches the joiner; removenode is refused for a live
 * node; the removed node back on its data dir answers clients 503 (no member), not 504.
 */
class MembershipChangeSafetyTest {
    private static final Duration CHANGE_TIME = Duration.ofSeconds(90);
    /** Tombstones collected a second after they are written, hints kept no longer; no scheduled repair. */
    private static final Map<String, String> FAST_GC = Map.of("dht.tombstone.gc-grace", "1s",
            "dht.tombstone.gc-interval", "1s", "dht.hints.window", "1s", "dht.repair.interval", "0s");

    @TempDir
    Path root;

    @ParameterizedTest(name = "cleanup {0}")
    @ValueSource(booleans = {true, false})
    void aKeyDeletedOnItsOwnersComesBackAfterARoundTripOnlyWithoutCleanup(boolean cleanup) throws Exception {
        Map<String, String> settings = new HashMap<>(FAST_GC);
        settings.put("dht.cleanup", Boolean.toString(cleanup));
        try (InProcessCluster cluster = InProcessCluster.start(3, root, settings)) {
            int keys = 200;
            for (int i = 0; i < keys; i++) {
                assertThat(cluster.client(0).put("z-" + i, "v" + i, "2/3")).isEqualTo(201);
            }
            int joiner = cluster.add(Map.of());
            awaitMembers(cluster, 4);
            awaitNoCleanupPending(cluster, 4);
            for (int i = 0; i < keys; i++) {
                assertThat(cluster.client(0).delete("z-" + i, "2/3")).isEqualTo(202);
            }
            await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
                for (int node = 0; node < 4; node++) {
                    for (int i = 0; i < keys; i++) {
                        Record record = cluster.storedAt(node, "z-" + i);
                        assertThat(record == null || !record.isTombstone()).as("tombstones collected").isTrue();
                    }
                }
            });

            HttpResponse<byte[]> leave = cluster.client(joiner).admin("/actuator/cluster/decommission", null,
                    InProcessCluster.SECRET);
            assertThat(leave.statusCode()).isEqualTo(202);
            awaitMembers(cluster, 3);
            awaitNoCleanupPending(cluster, 3);

            int resurrected = 0;
            for (int i = 0; i < keys; i++) {
                resurrected += cluster.client(0).get("z-" + i, "3/3").statusCode() == 200 ? 1 : 0;
            }
            if (cleanup) {
                assertThat(resurrected).as("deleted keys that came back").isZero();
            } else {
                assertThat(resurrected).as("without cleanup, a former owner brings deleted keys back").isPositive();
            }
        }
    }

    /**
     * Each old replica sends in full only the keys it is the first replica of, and digests of the rest; a version
     * that only another replica holds (newer there, or absent on the first) still reaches the joiner.
     */
    @Test
    void theJoinerGetsTheNewestVersionWhereverOnlyOneOldReplicaHoldsIt() throws Exception {
        try (InProcessCluster cluster = InProcessCluster.start(3, root, Map.of())) {
            int keys = 300;
            for (int i = 0; i < keys; i++) {
                assertThat(cluster.client(0).put("u-" + i, "v0", "3/3")).isEqualTo(201);
            }
            Map<String, String> newest = new HashMap<>();
            Map<String, Integer> heldBy = new HashMap<>();
            for (int i = 0; i < keys; i++) {
                String id = i % 2 == 0 ? "u-" + i : "only-" + i; // a newer version on one node, or a key only it has
                int node = i % 3;
                Record stored = cluster.storedAt(node, "u-" + i);
                Record version = Record.value(stored.timestamp() + 1, ("new-" + node).getBytes(StandardCharsets.UTF_8),
                        3, 0);
                assertThat(cluster.bean(node, LocalStore.class).write(id.getBytes(StandardCharsets.UTF_8), version)
                        .block()).isTrue();
                newest.put(id, "new-" + node);
                heldBy.put(id, node);
            }

            int joiner = cluster.add(Map.of());
            awaitMembers(cluster, 4);
            Placement joined = new Placement(ClusterView.initial(List.of(cluster.url(0), cluster.url(1),
                    cluster.url(2)), 3).withJoining(cluster.url(joiner)));
            int gained = 0;
            int fromASecondReplica = 0;
            for (Map.Entry<String, String> key : newest.entrySet()) {
                byte[] id = key.getKey().getBytes(StandardCharsets.UTF_8);
                if (!Placement.contains(joined.newReplicas(id, 3), cluster.url(joiner))) {
                    continue;
                }
                gained++;
                URI holder = cluster.url(heldBy.get(key.getKey()));
                fromASecondReplica += joined.oldReplicas(id, 3).get(0).url().equals(holder) ? 0 : 1;
                Record arrived = cluster.storedAt(joiner, key.getKey());
                assertThat(arrived).as("%s on the joiner", key.getKey()).isNotNull();
                assertThat(new String(arrived.value(), StandardCharsets.UTF_8)).as(key.getKey())
                        .isEqualTo(key.getValue());
            }
            assertThat(gained).isGreaterThan(keys / 2);
            assertThat(fromASecondReplica).as("gained keys whose newest version only a second replica held")
                    .isGreaterThan(gained / 3);
        }
    }

    @Test
    void aJoinAbortedInItsStreamingPhaseLeavesTheClusterAsItWasAndTheNextJoinCompletes() throws Exception {
        try (InProcessCluster cluster = InProcessCluster.start(3, root, Map.of())) {
            for (int i = 0; i < 100; i++) {
                assertThat(cluster.client(0).put("a-" + i, "v" + i, "2/3")).isEqualTo(201);
            }
            for (int node = 0; node < 3; node++) {
                cluster.serverFaults(node).holdMembershipStreams();
            }
            int aborted = cluster.add(Map.of());
            await().atMost(CHANGE_TIME).untilAsserted(() -> assertThat(view(cluster, 0).path("change").path("phase")
                    .asText()).isEqualTo("streaming"));

            HttpResponse<byte[]> abort = cluster.client(0).admin("/actuator/cluster/abort", null, InProcessCluster.SECRET);
            assertThat(abort.statusCode()).as(new String(abort.body(), StandardCharsets.UTF_8)).isEqualTo(202);
            awaitMembers(cluster, 3);
            for (int node = 0; node < 3; node++) {
                cluster.serverFaults(node).clear();
            }
            await().atMost(CHANGE_TIME).untilAsserted(() ->
                    assertThat(cluster.client(aborted).get("a-1", null).statusCode()).isEqualTo(503));
            HttpResponse<byte[]> again = cluster.client(0).admin("/actuator/cluster/abort", null, InProcessCluster.SECRET);
            assertThat(again.statusCode()).as("nothing left to abort").isEqualTo(409);

            cluster.stop(aborted);
            int next = cluster.add(Map.of());
            awaitMembers(cluster, 4);
            assertThat(view(cluster, next).path("members").findValuesAsText("node"))
                    .contains(cluster.url(next).toString()).doesNotContain(cluster.url(aborted).toString());
            for (int i = 0; i < 100; i++) {
                HttpResponse<byte[]> read = cluster.client(next).get("a-" + i, "2/3");
                assertThat(read.statusCode()).isEqualTo(200);
            }
        }
    }

    @Test
    void removenodeReReplicatesFromTheSurvivingCopiesAndTheRemovedNodeBackServesNoClient() throws Exception {
        try (InProcessCluster cluster = InProcessCluster.start(3, root, Map.of())) {
            cluster.add(Map.of());
            awaitMembers(cluster, 4);
            awaitNoCleanupPending(cluster, 4);
            int keys = 200;
            for (int i = 0; i < keys; i++) {
                assertThat(cluster.client(0).put("r-" + i, "v" + i, "2/3")).isEqualTo(201);
            }
            cluster.stop(1);
            HttpResponse<byte[]> alive = cluster.client(0).admin("/actuator/cluster/removenode",
                    "{\"node\": \"" + cluster.url(2) + "\"}", InProcessCluster.SECRET);
            assertThat(alive.statusCode()).as("a live node is decommissioned, not removed").isEqualTo(409);

            HttpResponse<byte[]> removed = cluster.client(0).admin("/actuator/cluster/removenode",
                    "{\"node\": \"" + cluster.url(1) + "\"}", InProcessCluster.SECRET);
            assertThat(removed.statusCode()).as(new String(removed.body(), StandardCharsets.UTF_8)).isEqualTo(202);
            awaitMembers(cluster, 3);
            for (int i = 0; i < keys; i++) {
                assertThat(cluster.copiesOf("r-" + i)).as("copies of r-%d on the three survivors", i).isEqualTo(3);
                assertThat(cluster.client(2).get("r-" + i, "2/3").statusCode()).isEqualTo(200);
            }

            // back on its data dir, with the view from before its removal: it serves no client (503, not 504)
            cluster.start(1);
            for (int i = 0; i < 20; i++) {
                HttpResponse<byte[]> read = cluster.client(1).get("r-" + i, "2/3");
                String body = new String(read.body(), StandardCharsets.UTF_8);
                assertThat(read.statusCode()).as(body).isEqualTo(503);
                assertThat(body).contains("no member of the cluster");
            }
        }
    }

    private static void awaitMembers(InProcessCluster cluster, int members) {
        await().atMost(CHANGE_TIME).pollInterval(Duration.ofMillis(200)).untilAsserted(() -> {
            JsonNode view = view(cluster, 0);
            assertThat(view.get("members").size()).isEqualTo(members);
            assertThat(view.get("change").isNull()).as("change done: %s", view).isTrue();
        });
    }

    private static void awaitNoCleanupPending(InProcessCluster cluster, int nodes) {
        await().atMost(CHANGE_TIME).pollInterval(Duration.ofMillis(200)).untilAsserted(() -> {
            for (int i = 0; i < nodes; i++) {
                assertThat(view(cluster, i).get("cleanupPending").asBoolean()).as("cleanup of node %d", i).isFalse();
            }
        });
    }

    private static JsonNode view(InProcessCluster cluster, int i) throws Exception {
        HttpResponse<byte[]> response = cluster.client(i).send("GET", "/actuator/cluster", new byte[0]);
        assertThat(response.statusCode()).isEqualTo(200);
        return new ObjectMapper().readTree(response.body());
    }
}
