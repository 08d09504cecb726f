package dev.dht.membership;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.dht.testing.InProcessCluster;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code GET /actuator/cluster} shows each node's view of the cluster, the same on every node; a restarted node keeps
 * its stored view, also when its {@code dht.nodes} now names other nodes (they are only seeds once a view is stored).
 */
class ClusterEndpointTest {

    @Test
    void everyNodeShowsTheSameViewAndARestartKeepsTheStoredView(@TempDir Path root) throws Exception {
        try (InProcessCluster cluster = InProcessCluster.start(3, root, Map.of())) {
            for (int i = 0; i < 3; i++) {
                JsonNode view = view(cluster, i);
                assertThat(view.get("epoch").asLong()).isEqualTo(1);
                assertThat(view.get("replicationFactor").asInt()).isEqualTo(3);
                assertThat(view.get("change").isNull()).isTrue();
                List<String> members = nodesOf(view);
                assertThat(members).containsExactly(cluster.url(0).toString(), cluster.url(1).toString(),
                        cluster.url(2).toString());
                assertThat(view.get("members").findValuesAsText("state")).containsOnly("NORMAL");
            }

            cluster.stop(2);
            cluster.start(2);
            assertThat(view(cluster, 2).get("epoch").asLong()).as("same nodes: same epoch").isEqualTo(1);

            cluster.stop(2);
            String twoNodes = cluster.url(1) + "," + cluster.url(2);
            cluster.start(2, Map.of("dht.nodes", twoNodes));
            JsonNode kept = view(cluster, 2);
            assertThat(kept.get("epoch").asLong()).as("dht.nodes only names seeds now").isEqualTo(1);
            assertThat(nodesOf(kept)).containsExactly(cluster.url(0).toString(), cluster.url(1).toString(),
                    cluster.url(2).toString());
            String metrics = new String(cluster.client(2).send("GET", "/actuator/prometheus", new byte[0]).body());
            assertThat(metrics).contains("dht_cluster_epoch{").containsPattern("dht_cluster_members\\{[^}]*state=\"normal\"[^}]*} 3.0");
        }
    }

    private static JsonNode view(InProcessCluster cluster, int i) throws Exception {
        HttpResponse<byte[]> response = cluster.client(i).send("GET", "/actuator/cluster", new byte[0]);
        assertThat(response.statusCode()).isEqualTo(200);
        return new ObjectMapper().readTree(response.body());
    }

    private static List<String> nodesOf(JsonNode view) {
        return view.get("members").findValuesAsText("node").stream().collect(Collectors.toList());
    }
}
