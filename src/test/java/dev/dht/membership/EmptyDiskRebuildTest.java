package dev.dht.membership;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.dht.cluster.Membership;
import dev.dht.node.RebuildGate;
import dev.dht.testing.InProcessCluster;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.http.HttpStatus;
import org.springframework.util.FileSystemUtils;

/**
 * A member whose data dir is empty while its cluster exists rebuilds from every replica of its ranges: with one of
 * them not answering it stays not ready (503) however long, and completes once that replica answers; only a replica
 * named in {@code dht.rebuild.accept-missing} is done without.
 */
class EmptyDiskRebuildTest {
    private static final int KEYS = 30;
    /** How long a rebuild missing a replica is watched for staying unready. */
    private static final Duration WATCHED = Duration.ofSeconds(8);

    @TempDir
    Path dir;

    @Test
    void aFoundingMemberBackOnAnEmptyDiskWaitsForEveryReplicaOfAClusterThatNeverChanged() {
        try (InProcessCluster cluster = InProcessCluster.start(3, dir)) {
            write(cluster);
            assertThat(cluster.bean(0, Membership.class).epoch()).as("a cluster whose membership never changed")
                    .isEqualTo(1);
            for (int i = 0; i < 3; i++) {
                cluster.stop(i);
            }
            assertThat(FileSystemUtils.deleteRecursively(cluster.dataDir(2).toFile())).isTrue();
            // node 1, a replica of all of node 2's ranges, does not answer node 2 (its calls get 503 unsent)
            cluster.faults(2).answerCallsTo(cluster.url(1), HttpStatus.SERVICE_UNAVAILABLE);
            cluster.start(2); // no seed answers: a founding member, until it finds the cluster that holds it
            cluster.start(0);
            cluster.start(1);

            long until = System.nanoTime() + WATCHED.toNanos();
            while (System.nanoTime() < until) {
                assertThat(cluster.client(2).send("GET", "/v0/status", new byte[0]).statusCode())
                        .as("node 2 while node 1 does not answer it").isEqualTo(503);
                await().pollDelay(Duration.ofMillis(250)).until(() -> true);
            }
            assertThat(cluster.bean(2, RebuildGate.class).isRebuilding()).isTrue();

            cluster.faults(2).clear();
            awaitServing(cluster, 2);
            assertEveryKeyStoredAt(cluster, 2);
        }
    }

    @Test
    void aRebuildCompletesWithoutAReplicaOnlyWhenTheOperatorAcceptsItMissing() {
        try (InProcessCluster cluster = InProcessCluster.start(3, dir)) {
            write(cluster);
            cluster.stop(2);
            cluster.stop(1);
            assertThat(FileSystemUtils.deleteRecursively(cluster.dataDir(2).toFile())).isTrue();
            cluster.start(2, Map.of("dht.rebuild.accept-missing", cluster.url(1).toString()));

            awaitServing(cluster, 2);
            assertEveryKeyStoredAt(cluster, 2);
        }
    }

    /** Writes every key at 3/3 (again after a 504 on a busy machine), so that every replica holds it. */
    private static void write(InProcessCluster cluster) {
        for (int i = 0; i < KEYS; i++) {
            String key = "rebuilt-" + i;
            String value = "v" + i;
            int node = i % 3;
            await().atMost(Duration.ofSeconds(60)).until(() -> cluster.client(node).put(key, value, "3/3") == 201);
        }
    }

    private static void awaitServing(InProcessCluster cluster, int node) {
        await().atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofMillis(250)).untilAsserted(() -> {
            assertThat(cluster.bean(node, RebuildGate.class).isRebuilding()).isFalse();
            assertThat(cluster.client(node).send("GET", "/v0/status", new byte[0]).statusCode()).isEqualTo(200);
        });
    }

    private static void assertEveryKeyStoredAt(InProcessCluster cluster, int node) {
        for (int i = 0; i < KEYS; i++) {
            assertThat(cluster.storedAt(node, "rebuilt-" + i)).as("rebuilt-%d at node %d", i, node).isNotNull();
        }
    }
}
