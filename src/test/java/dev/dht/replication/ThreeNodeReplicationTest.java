package dev.dht.replication;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * The course's scenarios on a 3-node cluster, plus the default quorum with one node down and the "respect RF"
 * checks, which count the copies in the nodes' stores (the course started one node at a time and read from it, but a
 * node started while the others are down does not serve: it has no member or view log to confirm its view with).
 */
class ThreeNodeReplicationTest extends ReplicationScenarios {
    @Override
    int size() {
        return 3;
    }

    @Test
    void defaultQuorumToleratesOneNodeDown() {
        String id = key();
        cluster.stop(2);
        assertThat(node(0).put(id, "v", null)).isEqualTo(201);
        assertValue(node(1).get(id, null), "v");
        assertThat(node(1).delete(id, null)).isEqualTo(202);
        assertThat(node(0).get(id, null).statusCode()).isEqualTo(404);
    }

    @Test
    void restartedNodeThatMissedAWriteAnswersRightAtQuorum() {
        String id = writtenWhileNode2WasDown("v");
        assertValue(node(2).get(id, "2/3"), "v");
    }

    @Test
    void aReadRepairsAReplicaThatMissedAWrite() {
        String id = writtenWhileNode2WasDown("v1");
        assertValue(node(1).get(id, "3/3"), "v1");
        await().atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(50)).untilAsserted(() ->
                assertThat(cluster.storedAt(2, id)).as("repaired by the read").isNotNull());
        assertThat(new String(cluster.storedAt(2, id).value(), java.nio.charset.StandardCharsets.UTF_8)).isEqualTo("v1");
        cluster.stop(0);
        cluster.stop(1);
        assertValue(node(2).get(id, "1/3"), "v1");
    }

    @Test
    void aReadRepairsAReplicaThatMissedADelete() {
        String id = key();
        assertThat(node(0).put(id, "v", "3/3")).isEqualTo(201);
        cluster.stop(2);
        assertThat(node(0).delete(id, "2/3")).isEqualTo(202);
        cluster.start(2);
        assertThat(node(1).get(id, "3/3").statusCode()).isEqualTo(404);
        await().atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(50)).untilAsserted(() ->
                assertThat(cluster.storedAt(2, id).isTombstone()).as("tombstone repaired onto node 2").isTrue());
    }

    @Test
    void respectReplicationFactorOne() {
        String id = key();
        assertThat(node(0).put(id, "v", "1/1")).isEqualTo(201);
        assertThat(cluster.copiesOf(id)).isEqualTo(1);
    }

    @Test
    void respectReplicationFactorTwo() {
        String id = key();
        assertThat(node(0).put(id, "v", "2/2")).isEqualTo(201);
        assertThat(cluster.copiesOf(id)).isEqualTo(2);
    }

    @Test
    void readRepairKeepsAWriteToItsFromReplicas() {
        String single = key();
        String pair = key();
        assertThat(node(0).put(single, "one", "1/1")).isEqualTo(201);
        assertThat(node(0).put(pair, "two", "2/2")).isEqualTo(201);
        assertValue(node(1).get(single, "3/3"), "one");
        assertValue(node(2).get(pair, "3/3"), "two");
        assertThat(cluster.copiesOf(single)).as("copies of a 1/1 write after a 3/3 read").isEqualTo(1);
        assertThat(cluster.copiesOf(pair)).as("copies of a 2/2 write after a 3/3 read").isEqualTo(2);
    }

    /** A new key written at 2/3 through node 0 while node 2 was stopped; node 2 is up again and misses it. */
    private String writtenWhileNode2WasDown(String value) {
        String id = key();
        cluster.stop(2);
        assertThat(node(0).put(id, value, "2/3")).isEqualTo(201);
        cluster.start(2);
        assertThat(cluster.storedAt(2, id)).as("node 2 missed the write").isNull();
        return id;
    }
}
