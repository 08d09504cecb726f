package dev.dht.replication.hints;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dht.storage.Record;
import dev.dht.testing.InProcessCluster;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link HintedHandoffTest}'s restarted replica at full size, timed (a benchmark, not part of the suite: surefire runs {@code *Test}
 * classes only). Run: {@code ./mvnw -B -o test -Dtest=HintConvergenceBenchmark}. A 3-node in-process cluster,
 * 200 keys written 3/3, node 2 stopped, 2000 PUTs and the 200 DELETEs at 2/3 through nodes 0 and 1, node 2
 * started again; prints the time from node 2 answering to its store holding every value and every tombstone.
 */
class HintConvergenceBenchmark {
    private static final int PUTS = 2000;
    private static final int DELETES = 200;

    @Test
    void restartedReplicaConverges(@TempDir Path root) throws InterruptedException {
        try (InProcessCluster cluster = InProcessCluster.start(3, root)) {
            for (int i = 0; i < DELETES; i++) {
                assertThat(cluster.client(i % 2).put("deleted-" + i, "old", "3/3")).isEqualTo(201);
            }
            cluster.stop(2);
            for (int i = 0; i < PUTS; i++) {
                assertThat(cluster.client(i % 2).put("key-" + i, "v" + i, "2/3")).isEqualTo(201);
            }
            for (int i = 0; i < DELETES; i++) {
                assertThat(cluster.client(i % 2).delete("deleted-" + i, "2/3")).isEqualTo(202);
            }
            long startCalled = System.nanoTime();
            cluster.start(2);
            long started = System.nanoTime();
            int missing = PUTS + DELETES;
            while (missing > 0) {
                assertThat(System.nanoTime() - started).as("converged within 120 s").isLessThan(120_000_000_000L);
                Thread.sleep(20);
                missing = 0;
                for (int i = 0; i < PUTS; i++) {
                    Record stored = cluster.storedAt(2, "key-" + i);
                    if (stored == null || !new String(stored.value(), StandardCharsets.UTF_8).equals("v" + i)) {
                        missing++;
                    }
                }
                for (int i = 0; i < DELETES; i++) {
                    if (!cluster.storedAt(2, "deleted-" + i).isTombstone()) {
                        missing++;
                    }
                }
            }
            long converged = System.nanoTime();
            System.out.printf("BENCHMARK hint convergence: node 2 start took %d ms; converged %d ms after it answered"
                            + " (%d ms after the start call)%n", (started - startCalled) / 1_000_000,
                    (converged - started) / 1_000_000, (converged - startCalled) / 1_000_000);
            cluster.stop(0);
            cluster.stop(1);
            for (int i = 0; i < PUTS; i++) {
                assertThat(cluster.client(2).get("key-" + i, "1/3").statusCode()).isEqualTo(200);
            }
            for (int i = 0; i < DELETES; i++) {
                assertThat(cluster.client(2).get("deleted-" + i, "1/3").statusCode()).isEqualTo(404);
            }
        }
    }
}
