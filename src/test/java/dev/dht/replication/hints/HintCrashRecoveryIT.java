package dev.dht.replication.hints;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dht.testing.DhtClient;
import dev.dht.testing.ProcessCluster;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.UUID;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Hints survive {@code kill -9} of the coordinator that kept them: 3 node processes of {@code target/dht.jar},
 * node 2 stopped, writes through node 0 only, node 0 killed with SIGKILL once its hints are stored, then node 2
 * and node 0 started again: node 2 gets every write from node 0's hint store (node 1 coordinated none).
 */
class HintCrashRecoveryIT {
    private static final int KEYS = 50;

    @Test
    void hintsSurviveSigkillOfTheCoordinator(@TempDir Path dir) throws Exception {
        try (ProcessCluster cluster = ProcessCluster.start(3, dir, List.of("-Xmx128m"))) {
            String prefix = "crash-" + UUID.randomUUID() + "-";
            DhtClient coordinator = new DhtClient(cluster.url(0));
            for (int i = 0; i < KEYS; i++) {
                coordinator.put(prefix + "warm-up-" + i, "v", "3/3"); // a fresh JVM is slow at first (504s allowed)
            }
            cluster.stop(2);
            for (int i = 0; i < KEYS; i++) {
                assertThat(putUntilAcknowledged(coordinator, prefix + i, "v" + i)).as("PUT %d", i).isEqualTo(201);
            }
            Pattern pending = Pattern.compile("dht_hints_pending\\{[^}]*peer=\"" + Pattern.quote(cluster.hostPorts().get(2))
                    + "\"[^}]*} (\\d+)\\.0");
            HintedHandoffTest.awaitTrue("node 0 stored a hint of every write", () -> {
                Matcher scraped = pending.matcher(new String(coordinator.send("GET", "/actuator/prometheus", new byte[0])
                        .body(), StandardCharsets.UTF_8));
                return scraped.find() && Long.parseLong(scraped.group(1)) >= KEYS;
            });

            assertThat(cluster.node(0).kill()).as("exit code of SIGKILL").isEqualTo(137);
            cluster.restart(2);
            DhtClient replica = new DhtClient(cluster.url(2));
            assertThat(replica.get(prefix + 0, "1/3").statusCode()).as("node 2 missed the writes").isEqualTo(404);
            cluster.restart(0);

            HintedHandoffTest.awaitTrue("node 2 got every write from node 0's hints", () -> {
                for (int i = 0; i < KEYS; i++) {
                    HttpResponse<byte[]> answer = replica.get(prefix + i, "1/3");
                    if (answer.statusCode() != 200 || !new String(answer.body(), StandardCharsets.UTF_8).equals("v" + i)) {
                        return false;
                    }
                }
                return true;
            });
        }
    }

    /** A 2/3 PUT, sent again (up to 5 times) while it gets 504 from a node still slow after its start. */
    private static int putUntilAcknowledged(DhtClient client, String id, String value) {
        int status = client.put(id, value, "2/3");
        for (int attempt = 1; attempt < 5 && status == 504; attempt++) {
            status = client.put(id, value, "2/3");
        }
        return status;
    }
}
