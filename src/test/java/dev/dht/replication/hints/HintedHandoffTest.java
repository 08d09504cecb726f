package dev.dht.replication.hints;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.dht.cluster.Membership;
import dev.dht.cluster.Node;
import dev.dht.storage.Record;
import dev.dht.testing.InProcessCluster;
import io.micrometer.core.instrument.MeterRegistry;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Hinted handoff on a real 3-node cluster: writes a stopped replica missed reach it once it is back, without any
 * read touching the keys, also after the coordinator that kept the hints restarted; and hints never add copies
 * beyond a key's {@code from} replicas.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class HintedHandoffTest {
    private static final Duration CONVERGENCE_DEADLINE = Duration.ofSeconds(60);

    @RegisterExtension
    static final InProcessCluster cluster = InProcessCluster.of(3, Map.of("dht.max-event-loop-lag", HintBoundsTest.LAG))
            .restoredAfterEach();

    /**
     * Node 2 stopped while 300 PUTs and 30 DELETEs are acknowledged at 2/3, then started: once it has every hint,
     * node 2 alone (the others stopped), at 1/3, answers every key as the cluster acknowledged it.
     */
    @Test
    void aRestartedReplicaGetsTheWritesAndDeletesItMissed() throws InterruptedException {
        String prefix = "missed-" + UUID.randomUUID() + "-";
        int puts = 300;
        int deletes = 30;
        for (int i = 0; i < deletes; i++) {
            assertThat(cluster.client(i % 2).put(prefix + "deleted-" + i, "old", "3/3")).isEqualTo(201);
        }
        cluster.stop(2);
        for (int i = 0; i < puts; i++) {
            assertThat(cluster.client(i % 2).put(prefix + i, "v" + i, "2/3")).isEqualTo(201);
        }
        for (int i = 0; i < deletes; i++) {
            assertThat(cluster.client(i % 2).delete(prefix + "deleted-" + i, "2/3")).isEqualTo(202);
        }
        awaitTrue("a hint kept for node 2 of every write", () -> hintsPending(0) + hintsPending(1) == puts + deletes);

        cluster.start(2);
        awaitTrue("node 2 got every hint", () -> hintsPending(0) + hintsPending(1) == 0);

        cluster.stop(0);
        cluster.stop(1);
        for (int i = 0; i < puts; i++) {
            HttpResponse<byte[]> answer = cluster.client(2).get(prefix + i, "1/3");
            assertThat(answer.statusCode()).as("key %d", i).isEqualTo(200);
            assertThat(new String(answer.body(), StandardCharsets.UTF_8)).isEqualTo("v" + i);
        }
        for (int i = 0; i < deletes; i++) {
            assertThat(cluster.client(2).get(prefix + "deleted-" + i, "1/3").statusCode()).as("deleted %d", i).isEqualTo(404);
        }
    }

    @Test
    void hintsSurviveARestartOfTheCoordinatorThatKeptThem() throws InterruptedException {
        String prefix = "restart-" + UUID.randomUUID() + "-";
        cluster.stop(2);
        for (int i = 0; i < 20; i++) {
            assertThat(cluster.client(0).put(prefix + i, "v" + i, "2/3")).isEqualTo(201);
        }
        awaitTrue("hints stored on node 0", () -> hintsPending(0) == 20);
        cluster.stop(0);
        cluster.start(2);
        assertThat(cluster.storedAt(2, prefix + 0)).as("node 2 missed the writes").isNull();

        cluster.start(0);
        awaitTrue("node 2 got the hints of the restarted node 0", () -> {
            for (int i = 0; i < 20; i++) {
                Record stored = cluster.storedAt(2, prefix + i);
                if (stored == null || !new String(stored.value(), StandardCharsets.UTF_8).equals("v" + i)) {
                    return false;
                }
            }
            return true;
        });
        awaitTrue("replayed hints deleted", () -> hintsPending(0) == 0);
    }

    /** A 1/1 and a 2/2 write whose replicas include stopped node 2 end up on exactly their first from nodes. */
    @Test
    void hintsGoOnlyToTheKeysFirstFromReplicas() throws InterruptedException {
        String single = keyWhoseReplicasInclude(2, 1);
        String pair = keyWhoseReplicasInclude(2, 2);
        cluster.stop(2);
        assertThat(cluster.client(0).put(single, "one", "1/1")).as("its only replica is down").isEqualTo(504);
        assertThat(cluster.client(0).put(pair, "two", "1/2")).isEqualTo(201);
        cluster.start(2);
        awaitTrue("hints replayed", () -> hintsPending(0) == 0);

        assertThat(holders(single)).containsExactlyElementsOf(replicaIndexes(single, 1));
        assertThat(holders(pair)).containsExactlyInAnyOrderElementsOf(replicaIndexes(pair, 2));
    }

    private String keyWhoseReplicasInclude(int node, int from) {
        while (true) {
            String id = "rf-" + UUID.randomUUID();
            if (replicaIndexes(id, from).contains(node)) {
                return id;
            }
        }
    }

    private List<Integer> replicaIndexes(String id, int from) {
        List<Integer> indexes = new ArrayList<>();
        for (Node replica : cluster.bean(0, Membership.class).placement()
                .oldReplicas(id.getBytes(StandardCharsets.UTF_8), from)) {
            for (int i = 0; i < cluster.size(); i++) {
                if (replica.url().equals(cluster.url(i))) {
                    indexes.add(i);
                }
            }
        }
        return indexes;
    }

    private List<Integer> holders(String id) {
        List<Integer> holders = new ArrayList<>();
        for (int i = 0; i < cluster.size(); i++) {
            if (cluster.storedAt(i, id) != null) {
                holders.add(i);
            }
        }
        return holders;
    }

    /** Hints node {@code i} keeps for node 2 (Gauge {@code dht.hints.pending}). */
    private long hintsPending(int i) {
        String peer = cluster.url(2).getHost() + ":" + cluster.url(2).getPort();
        return (long) cluster.bean(i, MeterRegistry.class).get("dht.hints.pending").tag("peer", peer).gauge().value();
    }

    static void awaitTrue(String what, BooleanSupplier condition) {
        await(what).atMost(CONVERGENCE_DEADLINE).pollInterval(Duration.ofMillis(50)).until(condition::getAsBoolean);
    }
}
