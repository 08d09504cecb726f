package dev.dht.repair;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.dht.cluster.Node;
import dev.dht.node.RebuildGate;
import dev.dht.peer.InternalProtocol;
import dev.dht.storage.Record;
import dev.dht.testing.DhtClient;
import dev.dht.testing.InProcessCluster;
import io.micrometer.core.instrument.MeterRegistry;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ForkJoinPool;
import java.util.function.IntConsumer;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.http.HttpStatus;

/**
 * Anti-entropy repair and rebuild on a real 3-node cluster, hinted handoff off and no scheduled repairs (but in
 * the test of the schedule), so only the repairs the tests run (and no reads in between) can bring a node up to
 * date.
 */
class AntiEntropyRepairTest {
    private static final Duration REPAIR_TIMEOUT = Duration.ofMinutes(3);
    /** Hints off, no scheduled repairs; a long replica timeout, so that a busy machine does not turn writes into 504s. */
    /**
     * No hints, no scheduled repair; admission control lets the tests' bulk writes (8 threads) queue: these tests are
     * about repair, not overload, and run on busy machines (CI saw 503 "requests queued at least 370 ms").
     */
    private static final Map<String, String> SETTINGS = Map.of("dht.hints.enabled", "false", "dht.repair.interval", "0",
            "dht.replica-timeout", "10s", "dht.max-queue-delay", "10s", "dht.max-event-loop-lag", "10s");

    @TempDir
    Path root;
    /** Started by each test with its settings; closed after it, before the temp dir is deleted. */
    @AutoClose
    private InProcessCluster cluster;

    private InProcessCluster start() {
        cluster = InProcessCluster.start(3, root, SETTINGS);
        return cluster;
    }

    private List<RepairResult> repairAll(int node) {
        List<RepairResult> results = cluster.bean(node, AntiEntropyRepair.class).repairAll().block(REPAIR_TIMEOUT);
        assertThat(results).hasSize(2).allSatisfy(result -> assertThat(result.error()).isNull());
        return results;
    }

    private static String id(int i) {
        return "key-" + i;
    }

    private static String value(int i, String version) {
        return "value-" + i + "-" + version;
    }

    /** Runs {@code action} for 0..count-1 on 8 threads, so that thousands of requests take seconds. */
    private static void inParallel(int count, IntConsumer action) {
        ForkJoinPool pool = new ForkJoinPool(8);
        try {
            pool.submit(() -> IntStream.range(0, count).parallel().forEach(action)).get();
        } catch (InterruptedException | ExecutionException e) {
            throw new IllegalStateException(e);
        } finally {
            pool.shutdown();
        }
    }

    private String stored(int node, String id) {
        Record record = cluster.storedAt(node, id);
        if (record == null) {
            return null;
        }
        return record.isTombstone() ? "<tombstone>" : new String(record.value(), StandardCharsets.UTF_8);
    }

    /**
     * Stops nodes 0 and 2, then checks that node 1 alone answers the first {@code keys} keys at 1/3: 404 for every
     * tenth (deleted), version "a" of the value for the others.
     */
    private void assertNode1AloneServesKeysWithEveryTenthDeleted(int keys) {
        cluster.stop(0);
        cluster.stop(2);
        DhtClient alone = cluster.client(1);
        for (int i = 0; i < keys; i++) {
            HttpResponse<byte[]> answer = alone.get(id(i), "1/3");
            if (i % 10 == 0) {
                assertThat(answer.statusCode()).as(id(i) + " deleted").isEqualTo(404);
            } else {
                assertThat(answer.statusCode()).as(id(i)).isEqualTo(200);
                assertThat(new String(answer.body(), StandardCharsets.UTF_8)).isEqualTo(value(i, "a"));
            }
        }
    }

    @Test
    void restartedNodeHasEveryWriteAndDeleteItMissedAfterOneRepair() {
        start();
        cluster.stop(1);
        DhtClient coordinator = cluster.client(0);
        inParallel(2000, i -> assertThat(coordinator.put(id(i), value(i, "a"), "2/3")).isEqualTo(201));
        inParallel(200, i -> assertThat(coordinator.delete(id(i * 10), "2/3")).isEqualTo(202));
        cluster.start(1);
        assertThat(cluster.storedAt(1, id(1))).as("node 1 missed the writes").isNull();

        List<RepairResult> results = repairAll(1);

        assertThat(results.stream().mapToLong(RepairResult::pulled).sum()).isEqualTo(2000);
        assertThat(results.stream().mapToLong(RepairResult::pushed).sum()).isZero();
        assertNode1AloneServesKeysWithEveryTenthDeleted(2000);
    }

    @Test
    void nodeThatMissedTenThousandWritesConvergesAfterOneRepairOfAPeer() {
        start();
        DhtClient coordinator = cluster.client(0);
        inParallel(1000, i -> assertThat(coordinator.put(id(i), value(i, "old"), "2/3")).isEqualTo(201));
        cluster.stop(2);
        inParallel(10_000, i -> assertThat(coordinator.put(id(i), value(i, "new"), "2/3")).isEqualTo(201));
        cluster.start(2);
        assertThat(stored(2, id(1))).isEqualTo(value(1, "old"));

        // node 0 pushes what node 2 lacks or has older through the replica write path
        List<RepairResult> results = repairAll(0);

        assertThat(results.stream().mapToLong(RepairResult::pushed).sum()).isEqualTo(10_000);
        for (int i = 0; i < 10_000; i++) {
            assertThat(stored(2, id(i))).as(id(i)).isEqualTo(value(i, "new"));
        }
    }

    @Test
    void repairDescendsOnlyIntoTheSegmentsThatDiffer() {
        start();
        DhtClient coordinator = cluster.client(0);
        inParallel(500, i -> assertThat(coordinator.put(id(i), value(i, "a"), "2/3")).isEqualTo(201));
        cluster.stop(2);
        for (int i = 0; i < 3; i++) {
            assertThat(coordinator.put(id(i), value(i, "b"), "2/3")).isEqualTo(201);
        }
        cluster.start(2);

        RepairResult result = cluster.bean(2, AntiEntropyRepair.class).repair(peer(2, 0)).block(REPAIR_TIMEOUT);

        assertThat(result.pulled()).isEqualTo(3);
        assertThat(result.segmentsDiffered()).isBetween(1L, 3L);
        assertThat(result.rangesCompared()).isLessThanOrEqualTo(1 + 3 * 2 * MerkleTree.SEGMENT_BITS);
        assertThat(result.recordsCompared()).as("only keys of differing segments").isLessThan(100);
        for (int i = 0; i < 3; i++) {
            assertThat(stored(2, id(i))).isEqualTo(value(i, "b"));
        }
    }

    private Node peer(int node, int peer) {
        return cluster.bean(node, AntiEntropyRepair.class).peers().stream()
                .filter(candidate -> candidate.url().equals(cluster.url(peer)))
                .findFirst().orElseThrow();
    }

    @Test
    void repairsOnDemandKeepOneAndTwoReplicaWritesAtOneAndTwoCopies() {
        start();
        inParallel(200, i -> assertThat(cluster.client(i % 3).put("one-" + i, "v", "1/1")).isEqualTo(201));
        inParallel(200, i -> assertThat(cluster.client(i % 3).put("two-" + i, "v", "2/2")).isEqualTo(201));
        cluster.stop(2);
        // with node 2 down, a 2/2 write whose replicas include it lands on one replica only (504)
        inParallel(100, i -> assertThat(cluster.client(i % 2).put("two-late-" + i, "v", "2/2")).isIn(201, 504));
        inParallel(100, i -> assertThat(cluster.client(i % 2).put("one-late-" + i, "v", "1/1")).isIn(201, 504));
        cluster.start(2);

        for (int node = 0; node < 3; node++) {
            HttpResponse<byte[]> answer = cluster.client(node).send("POST", "/actuator/repair", new byte[0],
                    InternalProtocol.SECRET_HEADER, InProcessCluster.SECRET);
            assertThat(answer.statusCode()).isEqualTo(200);
            String body = new String(answer.body(), StandardCharsets.UTF_8);
            for (int peer = 0; peer < 3; peer++) {
                if (peer != node) {
                    assertThat(body).contains(cluster.url(peer).getHost() + ":" + cluster.url(peer).getPort());
                }
            }
            assertThat(body).contains("\"rangesCompared\"").doesNotContain("\"error\":\"");
        }

        for (int i = 0; i < 200; i++) {
            assertThat(cluster.copiesOf("one-" + i)).as("one-" + i).isEqualTo(1);
            assertThat(cluster.copiesOf("two-" + i)).as("two-" + i).isEqualTo(2);
        }
        for (int i = 0; i < 100; i++) {
            assertThat(cluster.copiesOf("one-late-" + i)).as("one-late-" + i).isLessThanOrEqualTo(1);
            assertThat(cluster.copiesOf("two-late-" + i)).as("two-late-" + i + " repaired to its 2 replicas").isEqualTo(2);
        }
    }

    @Test
    void rebuiltNodeRefusesReplicaReadsUntilDoneThenServesEveryKeyAlone() throws InterruptedException {
        start();
        DhtClient coordinator = cluster.client(0);
        inParallel(1000, i -> assertThat(coordinator.put(id(i), value(i, "a"), "2/3")).isEqualTo(201));
        inParallel(100, i -> assertThat(coordinator.delete(id(i * 10), "2/3")).isEqualTo(202));
        cluster.stop(1);
        deleteRecursively(cluster.dataDir(1));
        // node 1 cannot reach node 0 at first, so its rebuild cannot complete
        cluster.faults(1).answerCallsTo(cluster.url(0), HttpStatus.INTERNAL_SERVER_ERROR);
        cluster.start(1, Map.of("dht.rebuild", "true"));

        assertThat(cluster.bean(1, RebuildGate.class).isRebuilding()).isTrue();
        HttpResponse<byte[]> replicaRead = cluster.client(1).send("GET", InternalProtocol.RECORD_PATH + "?id=" + id(1),
                new byte[0], InternalProtocol.SECRET_HEADER, InProcessCluster.SECRET);
        assertThat(replicaRead.statusCode()).isEqualTo(503);
        HttpResponse<byte[]> clientRead = cluster.client(1).get(id(1), "1/3");
        assertThat(clientRead.statusCode()).as("coordinator asks another replica").isEqualTo(200);
        assertThat(new String(clientRead.body(), StandardCharsets.UTF_8)).isEqualTo(value(1, "a"));

        cluster.faults(1).clear();
        await().atMost(Duration.ofMinutes(2)).pollInterval(Duration.ofMillis(100)).untilAsserted(() ->
                assertThat(cluster.bean(1, RebuildGate.class).isRebuilding()).as("rebuild done").isFalse());
        assertThat(cluster.bean(1, MeterRegistry.class).get("dht.rebuild.records").counter().count()).isEqualTo(1000);

        assertNode1AloneServesKeysWithEveryTenthDeleted(1000);
    }

    @Test
    void scheduledRepairBringsARestartedNodeUpToDateWithoutReadsOrRequests() throws InterruptedException {
        Map<String, String> scheduled = new HashMap<>(SETTINGS);
        scheduled.put("dht.repair.interval", "2s");
        cluster = InProcessCluster.start(3, root, scheduled);
        cluster.stop(1);
        DhtClient coordinator = cluster.client(0);
        inParallel(100, i -> assertThat(coordinator.put(id(i), value(i, "a"), "2/3")).isEqualTo(201));
        cluster.start(1);

        long started = System.nanoTime();
        await().atMost(Duration.ofMinutes(1)).pollInterval(Duration.ofMillis(200)).untilAsserted(() -> {
            for (int i = 0; i < 100; i++) {
                assertThat(stored(1, id(i))).as(id(i)).isEqualTo(value(i, "a"));
            }
        });
        // node 1's own rounds run too and record their completion (within the same minute)
        await().atMost(Duration.ofMinutes(1).minusNanos(System.nanoTime() - started)).pollInterval(Duration.ofMillis(200))
                .untilAsserted(() -> assertThat(cluster.bean(1, MeterRegistry.class).get("dht.repair.last.completed")
                        .gauges()).hasSize(2).allSatisfy(gauge -> assertThat(gauge.value()).isPositive()));
    }

    @Test
    void repairEndpointsNeedTheSecretAndAKnownPeer() {
        start();
        DhtClient node = cluster.client(0);
        String self = cluster.url(1).toString();
        assertThat(node.send("GET", InternalProtocol.REPAIR_TREE_PATH + "?peer=" + self, new byte[0]).statusCode())
                .isEqualTo(403);
        assertThat(node.send("GET", InternalProtocol.REPAIR_TREE_PATH + "?peer=http://localhost:1", new byte[0],
                InternalProtocol.SECRET_HEADER, InProcessCluster.SECRET).statusCode()).isEqualTo(400);
        assertThat(node.send("GET", InternalProtocol.REPAIR_RECORDS_PATH + "?peer=" + self + "&segments=%25%25", new byte[0],
                InternalProtocol.SECRET_HEADER, InProcessCluster.SECRET).statusCode()).isEqualTo(400);
        HttpResponse<byte[]> tree = node.send("GET", InternalProtocol.REPAIR_TREE_PATH + "?peer=" + self, new byte[0],
                InternalProtocol.SECRET_HEADER, InProcessCluster.SECRET);
        assertThat(tree.statusCode()).isEqualTo(200);
        assertThat(tree.body()).hasSize(MerkleTree.ENCODED_BYTES);
    }

    private static void deleteRecursively(Path dir) {
        try (Stream<Path> paths = Files.walk(dir)) {
            for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.delete(path);
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
