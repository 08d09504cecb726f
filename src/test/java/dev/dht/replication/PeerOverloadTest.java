package dev.dht.replication;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.dht.cluster.Node;
import dev.dht.cluster.Placement;
import dev.dht.cluster.Membership;
import dev.dht.membership.TopologyCoordinator;
import dev.dht.membership.raft.ViewLog;
import dev.dht.testing.ConcurrentRequests;
import dev.dht.testing.InProcessCluster;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.http.HttpStatus;

/**
 * Overload among replicas is answered 503 with Retry-After, not 504: a peer that answers 503 (its storage queue
 * is full). Other replica failures stay 504. Reads beyond a busy pool wait and coalesce rather than being
 * refused. One connection per peer, so the pool is easy to fill.
 */
class PeerOverloadTest {
    // A 5-s replica timeout: the delayed calls below (700 ms each, two in turn) must not time out on a busy
    // 2-core machine, where with the default 1 s the first one can. No hints: the writes the other tests fail
    // would be replayed to node 1 in the background, over its one connection, while the reads test the pool.
    @RegisterExtension
    static final InProcessCluster cluster = InProcessCluster.of(3, Map.of("dht.replica-pool-size", "1",
            "dht.replica-timeout", "5s", "dht.hints.enabled", "false")).restoredAfterEach();

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
        // the 503 may come before the local write lands (the quorum was out of reach once both peers refused)
        await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(cluster.client(0).get(id, "1/3").statusCode())
                .as("the local replica still took the write").isEqualTo(200));
    }

    @Test
    void peersWithFullDisksGive503ThatSaysSo() {
        // nodes 1 and 2 keep a free-space reserve no disk has: they refuse every write as disk full (503 with
        // their reason in a header), while node 0, the coordinator, stores its copy
        Map<String, String> fullDisk = Map.of("dht.storage.min-free-space", "4096TB");
        try {
            for (int i = 1; i <= 2; i++) {
                cluster.stop(i);
                cluster.start(i, fullDisk);
            }
            String id = "disk-full-" + UUID.randomUUID();

            HttpResponse<byte[]> put = cluster.client(0).send("PUT", "/v0/entity?id=" + id + "&replicas=2/3", "v".getBytes());

            assertThat(put.statusCode()).isEqualTo(503);
            assertThat(put.headers().firstValue("Retry-After")).hasValue("1");
            assertThat(new String(put.body())).as("not \"overloaded\": a retry soon will not help")
                    .startsWith("storage full on ").doesNotContain("overloaded");
        } finally {
            for (int i = 1; i <= 2; i++) {
                cluster.stop(i);
                cluster.start(i);
            }
        }
    }

    @Test
    void peersFailingOtherwiseGive504() {
        cluster.faults(0).answerCallsTo(cluster.url(1), HttpStatus.INTERNAL_SERVER_ERROR);
        cluster.faults(0).answerCallsTo(cluster.url(2), HttpStatus.SERVICE_UNAVAILABLE);

        assertThat(cluster.client(0).put("mixed-" + UUID.randomUUID(), "v", "2/3"))
                .as("quorum lost to one overloaded and one failing replica").isEqualTo(504);
    }

    @Test
    void readsBeyondTheBusyConnectionWaitAndGoTogetherInsteadOfBeingRefused() {
        // The peer answers record requests late, so each call to it holds the coordinator's one pooled connection
        // for the whole delay. Reads in flight to a peer are capped at the pool size (dht.replica-reads-in-flight,
        // at most dht.replica-pool-size): the first read holds the connection, the others wait in the
        // ReplicaCallCoalescer, not in the pool's line, and go together once it returns (see ReadBatchingTest).
        // Coordinator and peer are the two nodes that do not lead the view log: the leader's own calls to the
        // members (its topology coordinator's) would share the coordinator's one connection and its one place in
        // line with the reads, and be refused or get them refused (CI: three of four reads answered 503). So would
        // the coordinator's own liveness probes (every node probes each member it has not heard from for a second):
        // its topology coordinator is stopped while the reads run. The keys are replicated on those two nodes only,
        // so 2/2 reads at the coordinator call the peer.
        List<Integer> followers = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            if (!cluster.bean(i, ViewLog.class).isLeader()) {
                followers.add(i);
            }
        }
        assertThat(followers).as("the nodes that do not lead the view log").hasSize(2);
        int coordinator = followers.get(0);
        int peer = followers.get(1);
        cluster.serverFaults(peer).delayRecordRequests(Duration.ofMillis(700));
        List<String> ids = keysReplicatedOn(List.of(cluster.url(coordinator), cluster.url(peer)), 4);
        TopologyCoordinator probes = cluster.bean(coordinator, TopologyCoordinator.class);
        probes.stop();
        List<Integer> statuses;
        try {
            statuses = ConcurrentRequests.releasedTogether(ids.size(),
                    i -> cluster.client(coordinator).get(ids.get(i), "2/2").statusCode());
        } finally {
            probes.start();
        }

        assertThat(statuses).as("absent keys, every read served").containsOnly(404);
    }

    /** {@code count} fresh ids whose 2 replicas are the nodes with base URLs {@code nodes}. */
    private List<String> keysReplicatedOn(List<URI> nodes, int count) {
        Placement placement = cluster.bean(0, Membership.class).placement();
        List<String> ids = new ArrayList<>();
        String prefix = "pool-" + UUID.randomUUID() + "-";
        for (int i = 0; ids.size() < count; i++) {
            List<URI> replicas = placement.oldReplicas((prefix + i).getBytes(StandardCharsets.UTF_8), 2).stream()
                    .map(Node::url).toList();
            if (replicas.containsAll(nodes)) {
                ids.add(prefix + i);
            }
        }
        return ids;
    }
}
