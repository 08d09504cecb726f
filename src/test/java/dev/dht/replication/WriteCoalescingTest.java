package dev.dht.replication;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dht.peer.InternalProtocol;
import dev.dht.peer.RangeFrameCodec;
import dev.dht.storage.KeyedRecord;
import dev.dht.storage.Record;
import dev.dht.testing.ConcurrentRequests;
import dev.dht.testing.InProcessCluster;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.MeterRegistry;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Replica writes coalesced into batch requests, on a real 3-node cluster: with one write request in flight per
 * peer and slow answers, concurrent PUTs travel together, and every replica still gets every record. The batch
 * endpoint refuses a malformed body with 400 and changes nothing.
 */
class WriteCoalescingTest {
    private static final int PUTS = 24;

    // A 5-s replica timeout: the 3/3 PUTs wait for two slow rounds (300 ms each) one after the other, which
    // with a cold JIT on a busy 2-core machine came close to the default 1 s once (504s).
    // One write in flight per peer is the default. The cluster is shared with ReadBatchingTest (same settings).
    @RegisterExtension
    static final InProcessCluster cluster = InProcessCluster.shared(3, Map.of("dht.replica-timeout", "5s"));

    @Test
    void concurrentWritesTravelTogetherAndReachEveryReplica() {
        cluster.faults(0).delayAnswersFrom(cluster.url(1), Duration.ofMillis(300));
        cluster.faults(0).delayAnswersFrom(cluster.url(2), Duration.ofMillis(300));
        String prefix = "batch-" + UUID.randomUUID() + "-";
        List<Integer> statuses;
        try {
            statuses = ConcurrentRequests.releasedTogether(PUTS, i -> cluster.client(0).put(prefix + i, "v" + i, "3/3"));
        } finally {
            cluster.faults(0).clear();
        }

        assertThat(statuses).as("every write acknowledged by all three").containsOnly(201);
        for (int node = 0; node < 3; node++) {
            for (int i = 0; i < PUTS; i++) {
                Record stored = cluster.storedAt(node, prefix + i);
                assertThat(stored).as("node %d has key %d", node, i).isNotNull();
                assertThat(new String(stored.value(), StandardCharsets.UTF_8)).isEqualTo("v" + i);
            }
        }
        DistributionSummary batches = cluster.bean(0, MeterRegistry.class).find("dht.replica.write.batch.records")
                .tag("peer", cluster.url(1).getHost() + ":" + cluster.url(1).getPort()).summary();
        assertThat(batches).as("batches sent to node 1").isNotNull();
        assertThat(batches.count()).isPositive();
        assertThat(batches.max()).as("more than one record in a batch").isGreaterThan(1);
    }

    @Test
    void aMalformedBatchIs400AndChangesNothing() {
        String id = "malformed-" + UUID.randomUUID();
        byte[] batch = RangeFrameCodec.encodeBatch(List.of(
                new KeyedRecord(id.getBytes(StandardCharsets.UTF_8), Record.value(1, "v".getBytes(StandardCharsets.UTF_8)))));
        byte[] cut = Arrays.copyOf(batch, batch.length - 4);

        int status = cluster.client(1).send("POST", InternalProtocol.RECORDS_PATH, cut,
                InternalProtocol.SECRET_HEADER, InProcessCluster.SECRET).statusCode();

        assertThat(status).as("no end marker").isEqualTo(400);
        assertThat(cluster.storedAt(1, id)).isNull();
        assertThat(cluster.client(1).send("POST", InternalProtocol.RECORDS_PATH, batch,
                InternalProtocol.SECRET_HEADER, InProcessCluster.SECRET).statusCode()).as("the whole batch").isEqualTo(201);
        assertThat(cluster.storedAt(1, id)).isNotNull();
    }
}
