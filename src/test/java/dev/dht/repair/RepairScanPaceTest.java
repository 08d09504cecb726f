package dev.dht.repair;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dht.peer.InternalProtocol;
import dev.dht.testing.InProcessCluster;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ForkJoinPool;
import java.util.stream.IntStream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The scans that build hash trees are paced by {@code dht.repair.scan-rate} on both sides of a repair: with a low
 * rate, a tree over N records takes at least N / rate seconds, whether a peer asks for it over the internal API
 * or this node builds its own for a repair. Only lower bounds are asserted (a busy machine makes scans slower,
 * never faster).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class RepairScanPaceTest {
    private static final int RECORDS = 3000;
    private static final int SCAN_RATE = 1000;
    /** The least time a scan of {@link #RECORDS} records may take at {@link #SCAN_RATE}. */
    private static final Duration PACED_SCAN = Duration.ofMillis(1000L * RECORDS / SCAN_RATE);

    /** A busy machine must not turn the writes into 503s (event loop lag) or 504s (replica timeout). */
    @RegisterExtension
    static final InProcessCluster cluster = InProcessCluster.of(3, Map.of("dht.hints.enabled", "false",
            "dht.repair.interval", "0", "dht.replica-timeout", "10s", "dht.max-event-loop-lag", "10s",
            "dht.repair.scan-rate", String.valueOf(SCAN_RATE)));

    @BeforeAll
    void writeRecords() throws InterruptedException, ExecutionException {
        ForkJoinPool writers = new ForkJoinPool(4);
        try {
            writers.submit(() -> IntStream.range(0, RECORDS).parallel().forEach(i ->
                    assertThat(cluster.client(i % 3).put("key-" + i, "value-" + i, "3/3")).isEqualTo(201))).get();
        } finally {
            writers.shutdown();
        }
    }

    @Test
    void aPeersTreeOverTheInternalApiIsBuiltAtMostAtTheScanRate() {
        long started = System.nanoTime();
        HttpResponse<byte[]> tree = cluster.client(1).send("GET", InternalProtocol.REPAIR_TREE_PATH + "?peer="
                + cluster.url(0), new byte[0], InternalProtocol.SECRET_HEADER, InProcessCluster.SECRET);
        Duration took = Duration.ofNanos(System.nanoTime() - started);

        assertThat(tree.statusCode()).isEqualTo(200);
        assertThat(MerkleTree.fromBytes(tree.body()).root()).as("a tree over the records").isNotZero();
        assertThat(took).as("%d records at %d/s", RECORDS, SCAN_RATE).isGreaterThanOrEqualTo(PACED_SCAN);
    }

    @Test
    void aRepairOfNodesInSyncTakesTheTimeOfItsPacedTreeScans() {
        List<RepairResult> results = cluster.bean(0, AntiEntropyRepair.class).repairAll().block(Duration.ofMinutes(3));

        assertThat(results).hasSize(2).allSatisfy(result -> {
            assertThat(result.error()).isNull();
            assertThat(result.segmentsDiffered()).as("the nodes are in sync").isZero();
            assertThat(result.treeMillis()).as("%d records at %d/s", RECORDS, SCAN_RATE)
                    .isGreaterThanOrEqualTo(PACED_SCAN.toMillis());
            assertThat(result.millis()).isGreaterThanOrEqualTo(result.treeMillis());
        });
    }
}
