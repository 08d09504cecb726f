package dev.dht.replication;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.dht.storage.Record;
import dev.dht.testing.InProcessCluster;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.http.HttpStatus;

/**
 * Monotonic quorum reads (Cassandra's blocking read repair): once a 2/3 read returned a value, no later 2/3 read
 * through any node returns an older one, even when the value reached a single replica (a 3/3 PUT that got 504).
 * Hints are off, so only read repair can spread the value.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class MonotonicReadTest {
    private static final int KEYS = 6;

    @RegisterExtension
    static final InProcessCluster cluster = InProcessCluster.of(3, Map.of("dht.hints.enabled", "false", "dht.replica-timeout", "2s"));

    @Test
    void readsNeverGoBackToTheOlderValueAfterAWriteThatReachedOneReplica() throws InterruptedException {
        for (int k = 0; k < KEYS; k++) {
            String id = "monotonic-" + UUID.randomUUID();
            assertThat(cluster.client(0).put(id, "old", "3/3")).isEqualTo(201);
            cluster.faults(0).answerCallsTo(cluster.url(1), HttpStatus.INTERNAL_SERVER_ERROR);
            cluster.faults(0).answerCallsTo(cluster.url(2), HttpStatus.INTERNAL_SERVER_ERROR);
            assertThat(cluster.client(0).put(id, "new", "3/3")).as("only node 0 applied it").isEqualTo(504);
            cluster.faults(0).clear();
            awaitNewOnNodeZero(id);
            // node 0's repairs reach the others late, so a repair the answer does not wait for is still underway
            cluster.faults(0).delayCallsTo(cluster.url(1), Duration.ofMillis(400));
            cluster.faults(0).delayCallsTo(cluster.url(2), Duration.ofMillis(400));
            try {
                boolean seenNew = false;
                for (int round = 0; round < 3; round++) {
                    for (int node = 0; node < 3; node++) {
                        HttpResponse<byte[]> answer = cluster.client(node).get(id, "2/3");
                        assertThat(answer.statusCode()).isEqualTo(200);
                        String value = new String(answer.body(), StandardCharsets.UTF_8);
                        if (seenNew) {
                            assertThat(value).as("key %d, round %d, read through node %d after a read returned the"
                                    + " new value", k, round, node).isEqualTo("new");
                        }
                        seenNew |= value.equals("new");
                    }
                }
                assertThat(seenNew).as("node 0 read its own new value").isTrue();
            } finally {
                cluster.faults(0).clear();
            }
        }
    }

    private void awaitNewOnNodeZero(String id) {
        await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(20)).untilAsserted(() -> {
            Record stored = cluster.storedAt(0, id);
            assertThat(stored).as("node 0 applied the new value").isNotNull();
            assertThat(new String(stored.value(), StandardCharsets.UTF_8)).as("node 0 applied the new value")
                    .isEqualTo("new");
        });
    }
}
