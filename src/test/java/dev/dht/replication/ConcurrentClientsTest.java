package dev.dht.replication;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dht.testing.DhtClient;
import dev.dht.testing.InProcessCluster;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** 8 client threads x 500 PUT-then-GET of distinct keys against 3 nodes at the default replicas. */
class ConcurrentClientsTest {
    private static final int THREADS = 8;
    private static final int KEYS_PER_THREAD = 500;

    @Test
    void everyValueReadsBackExactly(@TempDir Path root) throws Exception {
        try (InProcessCluster cluster = InProcessCluster.start(3, root)) {
            ExecutorService pool = Executors.newFixedThreadPool(THREADS);
            try {
                List<Future<List<String>>> results = new ArrayList<>();
                for (int t = 0; t < THREADS; t++) {
                    int thread = t;
                    results.add(pool.submit(() -> putThenGet(cluster.client(thread % 3), thread)));
                }
                List<String> mismatches = new ArrayList<>();
                for (Future<List<String>> result : results) {
                    mismatches.addAll(result.get());
                }
                assertThat(mismatches).isEmpty();
            } finally {
                pool.shutdownNow();
            }
        }
    }

    private static List<String> putThenGet(DhtClient client, int thread) {
        List<String> mismatches = new ArrayList<>();
        for (int i = 0; i < KEYS_PER_THREAD; i++) {
            String id = "t" + thread + "-k" + i;
            String value = "value of " + id + " " + "x".repeat(i % 50);
            int put = client.put(id, value, null);
            HttpResponse<byte[]> get = client.get(id, null);
            String read = new String(get.body(), StandardCharsets.UTF_8);
            if (put != 201 || get.statusCode() != 200 || !read.equals(value)) {
                mismatches.add(id + ": PUT " + put + ", GET " + get.statusCode() + " '" + read + "'");
            }
        }
        return mismatches;
    }
}
