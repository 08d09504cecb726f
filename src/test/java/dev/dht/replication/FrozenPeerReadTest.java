package dev.dht.replication;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dht.testing.InProcessCluster;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A frozen peer (as under SIGSTOP: its connections accept requests, nothing answers): node 2 holds every replica
 * request it receives far beyond the 1-s replica timeout, while 8 clients read 2/3 through node 0 without pause.
 * Before node 0 has seen any call to node 2 fail, node 2 still counts as up; reads must nevertheless stop asking
 * it first as soon as its calls stall ({@link OutstandingCalls}), instead of waiting out the timeout whenever the
 * speculative retry budget ({@link RetryBudget}) is spent. So no read is answered 504.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class FrozenPeerReadTest {
    private static final int KEYS = 64;
    private static final int CLIENTS = 8;
    private static final Duration LOAD = Duration.ofSeconds(4);

    @RegisterExtension
    static final InProcessCluster cluster = InProcessCluster.of(3);

    @Test
    void readsThroughAFrozenPeersCoordinatorAreNeverAnswered504() throws Exception {
        for (int k = 0; k < KEYS; k++) {
            assertThat(cluster.client(0).put(key(k), "v" + k, "3/3")).as("write of " + key(k)).isEqualTo(201);
        }
        cluster.serverFaults(2).delayReplicaRequests(Duration.ofMinutes(10));

        ExecutorService clients = Executors.newFixedThreadPool(CLIENTS);
        try {
            long end = System.nanoTime() + LOAD.toNanos();
            List<Future<Map<Integer, Integer>>> results = new ArrayList<>();
            for (int c = 0; c < CLIENTS; c++) {
                results.add(clients.submit(() -> {
                    Map<Integer, Integer> statuses = new TreeMap<>();
                    while (System.nanoTime() < end) {
                        int status = cluster.client(0).get(key(ThreadLocalRandom.current().nextInt(KEYS)), "2/3")
                                .statusCode();
                        statuses.merge(status, 1, Integer::sum);
                    }
                    return statuses;
                }));
            }
            Map<Integer, Integer> statuses = new TreeMap<>();
            for (Future<Map<Integer, Integer>> result : results) {
                result.get(LOAD.toSeconds() + 60, TimeUnit.SECONDS).forEach((status, n) -> statuses.merge(status, n, Integer::sum));
            }
            assertThat(statuses).as("answers by status to 2/3 reads with node 2 frozen").containsOnlyKeys(200);
        } finally {
            clients.shutdownNow();
            cluster.serverFaults(2).clear();
        }
    }

    private static String key(int k) {
        return "frozen-" + k;
    }
}
