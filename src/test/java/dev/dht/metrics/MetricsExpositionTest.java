package dev.dht.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dht.admission.BodyMemory;
import dev.dht.testing.ClientRequestCounts;
import dev.dht.testing.DhtClient;
import dev.dht.testing.InProcessCluster;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The metrics the dashboards are built on, as Prometheus scrapes them from {@code /actuator/prometheus} of a
 * live 2-node cluster after requests of every kind, including a 503 refused for body memory and a 504 with the peer
 * down. Every client request is counted once in {@code dht_client_requests_seconds} with its operation and status,
 * and nothing else is: not the internal requests between the nodes, nor the actuator's.
 */
class MetricsExpositionTest {

    @Test
    void everyDashboardMetricIsExposedWithItsTags(@TempDir Path root) {
        try (InProcessCluster cluster = InProcessCluster.start(2, root)) {
            DhtClient node = cluster.client(0);
            assertThat(node.put("m1", "v", "2/2")).isEqualTo(201);
            assertThat(node.get("m1", "2/2").statusCode()).isEqualTo(200);
            assertThat(node.get("absent", null).statusCode()).isEqualTo(404);
            assertThat(node.delete("m1", null)).isEqualTo(202);
            assertThat(node.send("GET", "/v0/entities?start=m", new byte[0]).statusCode()).isEqualTo(200);
            assertThat(node.send("GET", "/v0/status", new byte[0]).statusCode()).isEqualTo(200);
            BodyMemory memory = cluster.bean(0, BodyMemory.class);
            memory.hold(memory.limitBytes());
            try {
                assertThat(node.put("m3", "v", null)).as("refused in the Netty pipeline").isEqualTo(503);
            } finally {
                memory.release(memory.limitBytes());
            }
            assertThat(node.send("GET", "/internal/record?id=m1", new byte[0]).statusCode()).isEqualTo(403);
            assertThat(node.send("GET", "/actuator/health", new byte[0]).statusCode()).isEqualTo(200);
            cluster.stop(1);
            assertThat(node.put("m2", "v", "2/2")).isEqualTo(504);

            String scrape = new String(node.send("GET", "/actuator/prometheus", new byte[0]).body(), StandardCharsets.UTF_8);
            String self = "node=\"" + cluster.url(0) + "\"";
            String peer = "peer=\"localhost:" + cluster.url(1).getPort() + "\"";
            assertThat(scrape).contains(
                    "dht_client_requests_seconds_bucket{",
                    "operation=\"put\",status=\"201\"",
                    "operation=\"get\",status=\"404\"",
                    "operation=\"delete\",status=\"202\"",
                    "operation=\"range\",status=\"200\"",
                    "operation=\"put\",status=\"504\"",
                    "dht_quorum_total{",
                    "operation=\"put\",outcome=\"failure\"",
                    "operation=\"get\",outcome=\"success\"",
                    "dht_storage_operations_seconds_bucket{",
                    "operation=\"upsert\"",
                    "dht_storage_size_bytes{",
                    "dht_storage_queue_depth{",
                    "dht_storage_rejections_total{",
                    "dht_tombstone_purged_total{",
                    "dht_tombstone_reclaimed_bytes_total{",
                    self);
            assertThat(ClientRequestCounts.of(scrape, "put", 201)).isEqualTo(1);
            assertThat(ClientRequestCounts.of(scrape, "get", 200)).isEqualTo(1);
            assertThat(ClientRequestCounts.of(scrape, "get", 404)).isEqualTo(1);
            assertThat(ClientRequestCounts.of(scrape, "delete", 202)).isEqualTo(1);
            assertThat(ClientRequestCounts.of(scrape, "range", 200)).isEqualTo(1);
            assertThat(ClientRequestCounts.of(scrape, "status", 200)).isEqualTo(1);
            assertThat(ClientRequestCounts.of(scrape, "put", 503)).isEqualTo(1);
            assertThat(ClientRequestCounts.of(scrape, "put", 504)).isEqualTo(1);
            assertThat(ClientRequestCounts.total(scrape)).as("the 8 client requests and nothing else, once each")
                    .isEqualTo(8);
            assertThat(scrape).containsPattern("dht_replica_calls_seconds_count\\{[^}]*operation=\"write\",outcome=\"ok\"," + peer);
            assertThat(scrape).containsPattern("dht_replica_calls_seconds_count\\{[^}]*operation=\"write\",outcome=\"error\"," + peer);
            assertThat(scrape).containsPattern("dht_peer_up\\{[^}]*" + peer + "[^}]*} 0\\.0");
            assertThat(scrape).contains("dht_hints_stored_total{", "dht_hints_replayed_total{", "dht_hints_size_bytes{",
                    "dht_hints_dropped_total{");
            assertThat(scrape).containsPattern("dht_hints_pending\\{[^}]*" + peer);
            assertThat(scrape).containsPattern("dht_hints_dropped_total\\{[^}]*reason=\"full\"");
        }
    }
}
