package dev.dht.replication.hints;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dht.testing.InProcessCluster;
import io.micrometer.core.instrument.MeterRegistry;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Hints for a peer that was taken out of {@code dht.nodes}: nothing would ever replay them, so a node restarted
 * without that peer deletes them at start-up and counts them as dropped ({@code reason=removed_peer}). That the
 * hints of the other peers stay is {@link HintStoreTest}'s.
 */
class RemovedPeerHintsTest {
    private static final int WRITES = 20;

    @TempDir
    Path root;

    @Test
    void theHintsKeptForARemovedNodeAreDeleted() throws InterruptedException {
        try (InProcessCluster cluster = InProcessCluster.start(3, root, Map.of("dht.max-event-loop-lag", HintBoundsTest.LAG))) {
            cluster.stop(2);
            for (int i = 0; i < WRITES; i++) {
                assertThat(cluster.client(0).put("removed-" + i, "v" + i, "2/3")).isEqualTo(201);
            }
            HintedHandoffTest.awaitTrue("a hint for node 2 of every write",
                    () -> gauge(cluster, "dht.hints.pending", "peer", peer(cluster, 2)) == WRITES);
            assertThat(gauge(cluster, "dht.hints.size", null, null)).isPositive();

            HttpResponse<byte[]> removed = cluster.client(1).admin("/actuator/cluster/removenode",
                    "{\"node\": \"" + cluster.url(2) + "\"}", InProcessCluster.SECRET);
            assertThat(removed.statusCode()).as(new String(removed.body(), StandardCharsets.UTF_8)).isEqualTo(202);

            // deleted with the removed peer, or, when the replayer's probe of the down node took one as the change
            // ended, dropped as a hint of a key the node no longer replicates (most go with the peer): gone either
            // way
            HintedHandoffTest.awaitTrue("the hints of the removed node deleted",
                    () -> dropped(cluster, HintedHandoff.REMOVED_PEER) + dropped(cluster, HintedHandoff.NOT_REPLICA) >= WRITES);
            assertThat(dropped(cluster, HintedHandoff.REMOVED_PEER)).as("deleted with the removed peer").isPositive();
            assertThat(gauge(cluster, "dht.hints.size", null, null)).as("no hint left").isZero();
            cluster.stop(0);
            cluster.start(0);
            assertThat(cluster.bean(0, MeterRegistry.class).find("dht.hints.pending").tag("peer", peer(cluster, 2))
                    .gauge()).as("node 2 is no peer any more").isNull();
            assertThat(cluster.client(0).put("after", "v", "2/2")).as("the two-node cluster takes writes").isEqualTo(201);
        }
    }

    private static double dropped(InProcessCluster cluster, String reason) {
        return cluster.bean(0, MeterRegistry.class).get("dht.hints.dropped").tag("reason", reason).counter().count();
    }

    private static String peer(InProcessCluster cluster, int i) {
        return cluster.url(i).getHost() + ":" + cluster.url(i).getPort();
    }

    /** Node 0's gauge {@code name}, with tag {@code key=value} unless {@code key} is null. */
    private static double gauge(InProcessCluster cluster, String name, String key, String value) {
        var search = cluster.bean(0, MeterRegistry.class).get(name);
        return (key == null ? search : search.tag(key, value)).gauge().value();
    }
}
