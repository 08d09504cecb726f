package dev.dht.replication;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dht.testing.ConcurrentRequests;
import dev.dht.testing.InProcessCluster;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.http.HttpStatus;

/**
 * Overload among replicas is answered 503 with Retry-After, not 504: a peer that answers 503 (its storage queue
 * is full), and a peer to which every pooled connection is busy with a full line of reads waiting. Other
 * replica failures stay 504. One connection per peer, so the pool is easy to fill.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class PeerOverloadTest {
    InProcessCluster cluster;

    @BeforeAll
    void start(@TempDir Path root) {
        cluster = InProcessCluster.start(3, root, Map.of("dht.replica-pool-size", "1"));
    }

    @AfterEach
    void clearFaults() {
        cluster.faults(0).clear();
    }

    @AfterAll
    void stop() {
        cluster.close();
    }

    @Test
    void peersAnswering503Give503WithRetryAfter() {
        cluster.faults(0).answerCallsTo(cluster.url(1), HttpStatus.SERVICE_UNAVAILABLE);
        cluster.faults(0).answerCallsTo(cluster.url(2), HttpStatus.SERVICE_UNAVAILABLE);
        String id = "busy-" + UUID.randomUUID();

        HttpResponse<byte[]> put = cluster.client(0).send("PUT", "/v0/entity?id=" + id + "&replicas=2/3", "v".getBytes());
        HttpResponse<byte[]> get = cluster.client(0).get(id, "2/3");

        assertThat(put.statusCode()).isEqualTo(503);
        assertThat(put.headers().firstValue("Retry-After")).hasValue("1");
        assertThat(get.statusCode()).isEqualTo(503);
        assertThat(cluster.client(0).get(id, "1/3").statusCode()).as("the local replica still took the write").isEqualTo(200);
    }

    @Test
    void peersFailingOtherwiseGive504() {
        cluster.faults(0).answerCallsTo(cluster.url(1), HttpStatus.INTERNAL_SERVER_ERROR);
        cluster.faults(0).answerCallsTo(cluster.url(2), HttpStatus.SERVICE_UNAVAILABLE);

        assertThat(cluster.client(0).put("mixed-" + UUID.randomUUID(), "v", "2/3"))
                .as("quorum lost to one overloaded and one failing replica").isEqualTo(504);
    }

    @Test
    void readsBeyondTheBusyConnectionAndItsWaitingLineGive503AtOnce() {
        cluster.faults(0).delayAnswersFrom(cluster.url(1), Duration.ofMillis(700));
        cluster.faults(0).delayAnswersFrom(cluster.url(2), Duration.ofMillis(700));
        // Reads at 3/3 call both peers through the pool (writes wait in the WriteCoalescer instead, see
        // WriteCoalescerTest); four of them in flight at once.
        String prefix = "pool-" + UUID.randomUUID() + "-";
        List<Integer> statuses = ConcurrentRequests.releasedTogether(4,
                i -> cluster.client(0).get(prefix + i, "3/3").statusCode());

        // per peer: one call holds the connection, one waits for it (and may time out), the rest are refused at once
        assertThat(statuses).as("absent keys: 404 when served").allMatch(s -> s == 404 || s == 503 || s == 504);
        assertThat(statuses).as("some refused for overload").contains(503);
        assertThat(statuses).as("the first one served").contains(404);
    }
}
