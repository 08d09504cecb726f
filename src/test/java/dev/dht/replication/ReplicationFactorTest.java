package dev.dht.replication;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.dht.testing.InProcessCluster;
import java.time.Duration;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code dht.replication-factor} (default 3): on a cluster larger than the factor, a request without
 * {@code replicas} keeps that many copies and needs a majority of them, so adding nodes adds capacity, not copies;
 * an explicit {@code replicas} still reaches up to every node, and {@code from} above the cluster size is 400.
 */
class ReplicationFactorTest {
    private static final Duration SETTLE = Duration.ofSeconds(10);

    @RegisterExtension
    static final InProcessCluster cluster = InProcessCluster.of(4);

    @Test
    void aWriteWithoutReplicasKeepsThreeCopiesOnFourNodes() {
        for (int i = 0; i < 10; i++) {
            String id = "rf-default-" + UUID.randomUUID();
            assertThat(cluster.client(i % 4).put(id, "v", null)).isEqualTo(201);
            // writes to replicas not needed for the answer complete in the background: three copies, and they stay three
            await().atMost(SETTLE).during(Duration.ofMillis(500)).until(() -> cluster.copiesOf(id) == 3);
            assertThat(cluster.client((i + 1) % 4).get(id, null).statusCode()).isEqualTo(200);
        }
    }

    @Test
    void anExplicitFromStillReachesEveryNodeAndNoMore() {
        String id = "rf-explicit-" + UUID.randomUUID();
        assertThat(cluster.client(0).put(id, "v", "4/4")).isEqualTo(201);
        assertThat(cluster.copiesOf(id)).isEqualTo(4);
        assertThat(cluster.client(1).put("rf-too-many-" + UUID.randomUUID(), "v", "3/5")).isEqualTo(400);
    }
}
