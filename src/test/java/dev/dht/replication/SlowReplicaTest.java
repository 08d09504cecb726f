package dev.dht.replication;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.dht.storage.Record;
import dev.dht.testing.InProcessCluster;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.UUID;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A slow replica: node 0's calls to node 2 are delayed 2 s (replica timeout 1 s). A coordinator must answer
 * from the replicas it needs without waiting for the slow one, and the slow one must still get the write.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class SlowReplicaTest {
    private static final Duration DELAY = Duration.ofSeconds(2);

    @RegisterExtension
    static final InProcessCluster cluster = InProcessCluster.of(3);

    @BeforeEach
    void slowDownNodeTwo() {
        cluster.faults(0).delayCallsTo(cluster.url(2), DELAY);
    }

    @Test
    void quorumOfTwoAnswersWithoutWaitingForTheSlowReplica() {
        String id = "slow-" + UUID.randomUUID();
        long started = System.nanoTime();
        assertThat(cluster.client(0).put(id, "v", "2/3")).isEqualTo(201);
        assertThat(cluster.client(0).get(id, "2/3").statusCode()).isEqualTo(200);
        Duration elapsed = Duration.ofNanos(System.nanoTime() - started);
        assertThat(elapsed).as("two requests, neither waiting for the 2 s replica").isLessThan(Duration.ofMillis(1500));
    }

    @Test
    void allThreeAnswers504AtTheTimeout() {
        String id = "slow-" + UUID.randomUUID();
        long started = System.nanoTime();
        assertThat(cluster.client(0).put(id, "v", "3/3")).isEqualTo(504);
        Duration elapsed = Duration.ofNanos(System.nanoTime() - started);
        assertThat(elapsed).as("answered at the 1 s replica timeout, not after the 2 s delay")
                .isGreaterThanOrEqualTo(Duration.ofMillis(900)).isLessThan(DELAY);
    }

    @Test
    void theSlowReplicaStillGetsTheWrite() throws InterruptedException {
        String id = "slow-" + UUID.randomUUID();
        assertThat(cluster.client(0).put(id, "late", "2/3")).isEqualTo(201);
        assertThat(cluster.storedAt(2, id)).as("not there yet: the call to node 2 is still delayed").isNull();
        Record stored = await().atMost(Duration.ofSeconds(6)).pollInterval(Duration.ofMillis(100))
                .until(() -> cluster.storedAt(2, id), record -> record != null);
        assertThat(new String(stored.value(), StandardCharsets.UTF_8)).isEqualTo("late");
    }
}
