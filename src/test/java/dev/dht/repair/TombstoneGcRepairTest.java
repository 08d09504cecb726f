package dev.dht.repair;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.dht.storage.Record;
import dev.dht.testing.InProcessCluster;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.springframework.http.HttpStatus;

/**
 * Tombstone GC together with anti-entropy repair: a replica that missed a delete gets the
 * tombstone from a repair within the grace, every node then purges it, and later repairs bring nothing back.
 * Hints are off, so only the repair can carry the missed delete.
 */
class TombstoneGcRepairTest {
    /** Long enough for the repair to run before the tombstone may be purged, even on a busy machine. */
    private static final Duration GRACE = Duration.ofSeconds(15);
    private static final Duration DEADLINE = Duration.ofSeconds(90);
    private static final Duration REPAIR_TIMEOUT = Duration.ofMinutes(2);

    @RegisterExtension
    final InProcessCluster cluster = InProcessCluster.of(3, Map.of(
            "dht.tombstone.gc-grace", GRACE.toSeconds() + "s",
            "dht.tombstone.gc-interval", "500ms",
            "dht.hints.enabled", "false",
            "dht.hints.window", "0s",
            "dht.repair.interval", "0s",
            "dht.replica-timeout", "10s"));

    @Test
    void aDeleteOneReplicaMissedIsRepairedWithinTheGraceAndStaysDeletedAfterThePurgeAndLaterRepairs()
            throws InterruptedException {
        String id = "deleted-while-cut-off";
        assertThat(cluster.client(0).put(id, "old", "3/3")).isEqualTo(201);

        cluster.faults(0).answerCallsTo(cluster.url(2), HttpStatus.SERVICE_UNAVAILABLE); // node 2 misses the delete
        assertThat(cluster.client(0).delete(id, "2/3")).isEqualTo(202);
        cluster.faults(0).clear();
        assertThat(cluster.storedAt(0, id).isTombstone()).isTrue();
        assertThat(cluster.storedAt(2, id).isTombstone()).as("node 2 still holds the deleted value").isFalse();

        repairAll(2); // within the grace: the tombstones are younger than 15 s
        Record repaired = cluster.storedAt(2, id);
        assertThat(repaired).as("node 2 got the tombstone").isNotNull();
        assertThat(repaired.isTombstone()).isTrue();

        awaitTrue("every node purged the tombstone", () -> cluster.storedAt(0, id) == null
                && cluster.storedAt(1, id) == null && cluster.storedAt(2, id) == null);
        for (int node = 0; node < 3; node++) {
            repairAll(node);
        }

        for (int node = 0; node < 3; node++) {
            assertThat(cluster.storedAt(node, id)).as("node %d after the repairs", node).isNull();
            assertThat(cluster.client(node).get(id, "3/3").statusCode()).isEqualTo(404);
        }
        assertThat(new String(cluster.client(1).send("GET", "/v0/entities?start=deleted&end=deletee", new byte[0])
                .body(), StandardCharsets.UTF_8)).as("the range").isEmpty();
    }

    private void repairAll(int node) {
        List<RepairResult> results = cluster.bean(node, AntiEntropyRepair.class).repairAll().block(REPAIR_TIMEOUT);
        assertThat(results).hasSize(2).allSatisfy(result -> assertThat(result.error()).isNull());
    }

    private static void awaitTrue(String what, BooleanSupplier condition) {
        await(what).atMost(DEADLINE).pollInterval(Duration.ofMillis(100)).until(condition::getAsBoolean);
    }
}
