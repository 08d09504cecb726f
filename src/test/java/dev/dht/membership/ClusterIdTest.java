package dev.dht.membership;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.dht.cluster.ClusterView;
import dev.dht.cluster.ClusterViewFile;
import dev.dht.cluster.Membership;
import dev.dht.peer.InternalProtocol;
import dev.dht.testing.InProcessCluster;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.util.FileSystemUtils;

/**
 * A cluster gets a random id when it forms, and a node of another cluster at the same URL is kept out: node 2's data
 * dir replaced by a view of the same members, newer by five epochs, of another cluster id (a cluster formed anew on
 * emptied disks, a data dir copied from elsewhere). The members refuse its internal calls (403), take none of its
 * views although their epoch is higher (a write through node 0 to it as a replica would have fetched it), and it
 * serves no client (its view is confirmed by no member of its cluster).
 */
class ClusterIdTest {
    @TempDir
    Path dir;

    @Test
    void aNodeOfAnotherClusterAtAMembersUrlIsRefusedAndItsViewNotTaken() throws Exception {
        try (InProcessCluster cluster = InProcessCluster.start(3, dir)) {
            ClusterView formed = cluster.bean(0, Membership.class).view();
            assertThat(formed.cluster()).as("a new cluster's id is random").isNotEqualTo(ClusterView.LEGACY_CLUSTER);
            for (int i = 1; i < 3; i++) {
                assertThat(cluster.bean(i, Membership.class).view().cluster()).isEqualTo(formed.cluster());
            }

            cluster.stop(2);
            assertThat(FileSystemUtils.deleteRecursively(cluster.dataDir(2).toFile())).isTrue();
            Files.createDirectories(cluster.dataDir(2));
            UUID other = UUID.randomUUID();
            ClusterView foreign = new ClusterView(formed.epoch() + 5, formed.replicationFactor(), formed.members(),
                    null, other);
            new ClusterViewFile(cluster.dataDir(2)).write(foreign);
            cluster.start(2);

            for (int i = 0; i < 10; i++) {
                cluster.client(0).put("foreign-" + i, "v", "1/3"); // replica calls to node 2 show it its epoch
            }
            await().pollDelay(Duration.ofSeconds(2)).until(() -> true);
            for (int i = 0; i < 2; i++) {
                ClusterView view = cluster.bean(i, Membership.class).view();
                assertThat(view.cluster()).as("node %d's cluster", i).isEqualTo(formed.cluster());
                assertThat(view.epoch()).as("node %d's epoch", i).isEqualTo(formed.epoch());
            }
            assertThat(cluster.bean(2, Membership.class).view()).as("node 2 takes no view of the cluster either")
                    .isEqualTo(foreign);
            assertThat(cluster.bean(2, Membership.class).isViewConfirmed()).isFalse();
            assertThat(cluster.client(2).send("GET", "/v0/status", new byte[0]).statusCode()).isEqualTo(503);

            assertThat(viewAsked(cluster.url(0), other, cluster.url(2)).statusCode()).as("another cluster's call")
                    .isEqualTo(403);
            HttpResponse<String> own = viewAsked(cluster.url(0), formed.cluster(), cluster.url(1));
            assertThat(own.statusCode()).isEqualTo(200);
            assertThat(own.headers().firstValue(InternalProtocol.CLUSTER_ID_HEADER))
                    .contains(formed.cluster().toString());
        }
    }

    /** {@code GET /internal/cluster/view} of {@code node} as a node of {@code cluster} at {@code sender} sends it. */
    private static HttpResponse<String> viewAsked(URI node, UUID cluster, URI sender) throws Exception {
        return HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(node + InternalProtocol.VIEW_PATH))
                .header(InternalProtocol.SECRET_HEADER, InProcessCluster.SECRET)
                .header(InternalProtocol.CLUSTER_ID_HEADER, cluster.toString())
                .header(InternalProtocol.SENDER_HEADER, sender.toString())
                .timeout(Duration.ofSeconds(5)).GET().build(), HttpResponse.BodyHandlers.ofString());
    }
}
