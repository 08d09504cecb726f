package dev.dht.replication;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dht.testing.InProcessCluster;
import dev.dht.testing.SlowedClock;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Writes sent one after the other through two coordinators order as the client sent them, also within one
 * wall-clock millisecond: three nodes share a wall clock that advances one millisecond every {@value #SLOWDOWN} ms,
 * so that two writes in a row mostly share a millisecond, and node 0's copies to node 2 are held back, so that node
 * 2 stamps its write before it has seen the one it overwrites. An overwrite with an empty value (which loses a tie
 * of timestamps) and a delete through node 2 right after a write through node 0 both win.
 */
class CrossCoordinatorOrderTest {
    private static final int SLOWDOWN = 4;

    @TempDir
    Path root;

    @Test
    void anOverwriteOrDeleteThroughAnotherNodeRightAfterAWriteWins() {
        Clock wall = new SlowedClock(SLOWDOWN);
        try (InProcessCluster cluster = InProcessCluster.start(3, root, Map.of("dht.replica-timeout", "5s"),
                node -> wall)) {
            cluster.faults(0).delayCallsTo(cluster.url(2), Duration.ofMillis(300));
            for (int i = 0; i < 40; i++) {
                String overwritten = "overwritten-" + i;
                assertThat(cluster.client(0).put(overwritten, "first", "2/3")).isEqualTo(201);
                assertThat(cluster.client(2).put(overwritten, "", "2/3")).isEqualTo(201);
                String deleted = "deleted-" + i;
                assertThat(cluster.client(0).put(deleted, "first", "2/3")).isEqualTo(201);
                assertThat(cluster.client(2).delete(deleted, "2/3")).isEqualTo(202);

                HttpResponse<byte[]> read = cluster.client(1).get(overwritten, "2/3");
                assertThat(read.statusCode()).isEqualTo(200);
                assertThat(new String(read.body(), StandardCharsets.UTF_8)).as("%s", overwritten).isEmpty();
                assertThat(cluster.client(1).get(deleted, "2/3").statusCode()).as("%s", deleted).isEqualTo(404);
            }
        }
    }
}
