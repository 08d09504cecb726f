package dev.dht.replication;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dht.peer.InternalProtocol;
import dev.dht.peer.RangeFrameCodec;
import dev.dht.storage.KeyedRecord;
import dev.dht.testing.DhtClient;
import dev.dht.testing.InProcessCluster;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.io.TempDir;

/**
 * The course's cluster scenarios, run against a real in-process cluster of {@link #size()} nodes. Each test
 * uses its own keys; a test that stops nodes has them started again afterwards.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class ReplicationScenarios {
    InProcessCluster cluster;
    int n;

    /** Number of nodes of the cluster under test. */
    abstract int size();

    @BeforeAll
    void startCluster(@TempDir Path root) {
        n = size();
        // no hinted handoff: these scenarios check what quorums and read repair do for a replica that missed writes
        // (HintedHandoffTest covers the hints)
        cluster = InProcessCluster.start(n, root, Map.of("dht.hints.enabled", "false"));
    }

    @AfterEach
    void restore() {
        cluster.restoreAll();
    }

    @AfterAll
    void stopCluster() {
        cluster.close();
    }

    static String key() {
        return "key-" + UUID.randomUUID();
    }

    DhtClient node(int i) {
        return cluster.client(i);
    }

    static String rf(int ack, int from) {
        return ack + "/" + from;
    }

    static void assertValue(HttpResponse<byte[]> response, String expected) {
        assertThat(response.statusCode()).as("status").isEqualTo(200);
        assertThat(new String(response.body(), StandardCharsets.UTF_8)).isEqualTo(expected);
    }

    @Test
    void insert() {
        String id = key();
        assertThat(node(0).put(id, "value", null)).isEqualTo(201);
        for (int i = 0; i < n; i++) {
            assertValue(node(i).get(id, null), "value");
        }
    }

    @Test
    void insertEmpty() {
        String id = key();
        assertThat(node(0).put(id, "", null)).isEqualTo(201);
        for (int i = 0; i < n; i++) {
            assertValue(node(i).get(id, null), "");
        }
    }

    @Test
    void lifecycleOfTwoKeys() {
        String first = key();
        String second = key();
        assertThat(node(0).put(first, "one", null)).isEqualTo(201);
        assertThat(node(n - 1).put(second, "two", null)).isEqualTo(201);
        assertValue(node(n - 1).get(first, null), "one");
        assertValue(node(0).get(second, null), "two");
        assertThat(node(0).delete(first, null)).isEqualTo(202);
        assertThat(node(n - 1).get(first, null).statusCode()).isEqualTo(404);
        assertValue(node(n - 1).get(second, null), "two");
        assertThat(node(n - 1).delete(second, null)).isEqualTo(202);
        assertThat(node(0).get(second, null).statusCode()).isEqualTo(404);
    }

    @Test
    void upsert() {
        String id = key();
        assertThat(node(0).put(id, "old", null)).isEqualTo(201);
        assertThat(node(n - 1).put(id, "new", null)).isEqualTo(201);
        for (int i = 0; i < n; i++) {
            assertValue(node(i).get(id, null), "new");
        }
    }

    @Test
    void upsertEmpty() {
        String id = key();
        assertThat(node(0).put(id, "old", null)).isEqualTo(201);
        assertThat(node(n - 1).put(id, "", null)).isEqualTo(201);
        for (int i = 0; i < n; i++) {
            assertValue(node(i).get(id, null), "");
        }
    }

    @Test
    void delete() {
        String id = key();
        assertThat(node(0).put(id, "value", null)).isEqualTo(201);
        assertThat(node(n - 1).delete(id, null)).isEqualTo(202);
        for (int i = 0; i < n; i++) {
            assertThat(node(i).get(id, null).statusCode()).isEqualTo(404);
        }
        assertThat(node(0).delete(key(), null)).as("delete of an absent key").isEqualTo(202);
    }

    @Test
    void distributeOneCopyAtOneOfOne() {
        for (int i = 0; i < 10; i++) {
            String id = key();
            assertThat(node(i % n).put(id, "v", rf(1, 1))).isEqualTo(201);
            assertThat(cluster.copiesOf(id)).as("copies of a 1/1 write").isEqualTo(1);
        }
    }

    @Test
    void respectReplicationFactor() {
        for (int from = 1; from <= n; from++) {
            String id = key();
            assertThat(node(0).put(id, "v", rf(from, from))).isEqualTo(201);
            assertThat(cluster.copiesOf(id)).as("copies of a %d/%d write", from, from).isEqualTo(from);
        }
    }

    @Test
    void tooSmallReplicationFactor() {
        String id = key();
        assertThat(node(0).put(id, "v", rf(0, n))).isEqualTo(400);
        assertThat(node(0).get(id, rf(0, n)).statusCode()).isEqualTo(400);
        assertThat(node(0).delete(id, rf(0, n))).isEqualTo(400);
        assertThat(cluster.copiesOf(id)).as("a refused write changes nothing").isZero();
    }

    @Test
    void tooBigReplicationFactor() {
        String id = key();
        assertThat(node(0).put(id, "v", rf(n + 1, n))).as("ack > from").isEqualTo(400);
        assertThat(node(0).put(id, "v", rf(1, n + 1))).as("from > cluster size").isEqualTo(400);
        assertThat(node(0).get(id, rf(n + 1, n + 1)).statusCode()).isEqualTo(400);
        assertThat(node(0).delete(id, rf(1, n + 1))).isEqualTo(400);
        assertThat(cluster.copiesOf(id)).isZero();
    }

    @Test
    void malformedReplicationFactor() {
        String id = key();
        for (String replicas : new String[] {"abc", "1", "1/", "/2", "1/2/3", "-1/2", "1/-2", "%20/2", "1.0/2", "%D9%A1/%D9%A2"}) {
            assertThat(node(0).put(id, "v", replicas)).as("replicas=%s", replicas).isEqualTo(400);
        }
        assertThat(node(0).send("GET", "/v0/entity?id=" + id + "&ack=1", new byte[0]).statusCode())
                .as("ack without from").isEqualTo(400);
        assertThat(cluster.copiesOf(id)).isZero();
    }

    @Test
    void ackFromSpellingIsAccepted() {
        String id = key();
        assertThat(node(0).send("PUT", "/v0/entity?id=" + id + "&ack=" + n + "&from=" + n,
                "v".getBytes(StandardCharsets.UTF_8)).statusCode()).isEqualTo(201);
        assertThat(cluster.copiesOf(id)).isEqualTo(n);
    }

    @Test
    void unreachableReplicationFactor() {
        String id = key();
        cluster.stop(0);
        assertThat(node(1).put(id, "v", rf(n, n))).isEqualTo(504);
        assertThat(node(1).get(id, rf(n, n)).statusCode()).isEqualTo(504);
        assertThat(node(1).delete(id, rf(n, n))).isEqualTo(504);
    }

    @Test
    void overlapRead() {
        String id = key();
        assertThat(node(0).put(id, "v", rf(1, n))).isEqualTo(201);
        assertValue(node(n - 1).get(id, rf(n, n)), "v");
    }

    @Test
    void overlapWrite() {
        String id = key();
        assertThat(node(0).put(id, "v", rf(n, n))).isEqualTo(201);
        assertValue(node(n - 1).get(id, rf(1, n)), "v");
    }

    @Test
    void overlapDelete() {
        String id = key();
        assertThat(node(0).put(id, "v", rf(n, n))).isEqualTo(201);
        assertThat(node(n - 1).delete(id, rf(n, n))).isEqualTo(202);
        assertThat(node(0).get(id, rf(1, n)).statusCode()).isEqualTo(404);
    }

    @Test
    void missedWrite() {
        String id = key();
        cluster.stop(0);
        assertThat(node(1).put(id, "v", rf(n - 1, n))).isEqualTo(201);
        cluster.start(0);
        assertValue(node(0).get(id, rf(2, n)), "v");
    }

    @Test
    void missedDelete() {
        String id = key();
        assertThat(node(0).put(id, "v", rf(n, n))).isEqualTo(201);
        cluster.stop(0);
        assertThat(node(1).delete(id, rf(n - 1, n))).isEqualTo(202);
        cluster.start(0);
        assertThat(cluster.storedAt(0, id).isTombstone()).as("node 0 missed the delete").isFalse();
        assertThat(node(0).get(id, rf(2, n)).statusCode()).isEqualTo(404);
    }

    @Test
    void tolerateFailure() {
        String id = key();
        assertThat(node(0).put(id, "v", rf(n, n))).isEqualTo(201);
        cluster.stop(0);
        assertValue(node(1).get(id, rf(1, n)), "v");
        assertThat(node(1).delete(id, rf(n - 1, n))).isEqualTo(202);
        assertThat(node(1).get(id, rf(n - 1, n)).statusCode()).isEqualTo(404);
    }

    @Test
    void internalEndpointsRequireTheClusterSecret() {
        String id = key();
        assertThat(node(0).put(id, "v", rf(n, n))).isEqualTo(201);
        byte[] forged = dev.dht.storage.Record.value(Long.MAX_VALUE >>> 1, "forged".getBytes(StandardCharsets.UTF_8)).encode();
        for (int i = 0; i < n; i++) {
            assertThat(node(i).send("PUT", InternalProtocol.RECORD_PATH + "?id=" + id, forged).statusCode()).isEqualTo(403);
            assertThat(node(i).send("GET", InternalProtocol.RECORD_PATH + "?id=" + id, new byte[0]).statusCode()).isEqualTo(403);
            assertThat(node(i).send("PUT", InternalProtocol.RECORD_PATH + "?id=" + id, forged,
                    InternalProtocol.SECRET_HEADER, "not-" + InProcessCluster.SECRET).statusCode()).as("wrong secret").isEqualTo(403);
            assertThat(node(i).send("POST", InternalProtocol.RECORDS_PATH, RangeFrameCodec.encodeBatch(
                    List.of(new KeyedRecord(id.getBytes(StandardCharsets.UTF_8), dev.dht.storage.Record.decode(forged)))))
                    .statusCode()).as("batch without secret").isEqualTo(403);
            assertThat(node(i).send("GET", InternalProtocol.RANGE_PATH + "?start=a", new byte[0],
                    InternalProtocol.SECRET_HEADER, InProcessCluster.SECRET + "x").statusCode()).as("wrong secret").isEqualTo(403);
        }
        assertValue(node(0).get(id, rf(n, n)), "v");
    }
}
