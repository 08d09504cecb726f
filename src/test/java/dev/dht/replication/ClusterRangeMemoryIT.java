package dev.dht.replication;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dht.testing.ChunkedResponseReader;
import dev.dht.testing.DhtClient;
import dev.dht.testing.ProcessCluster;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A range over about 300 MB of values through a 3-node cluster whose nodes run with {@code -Xmx128m} each:
 * it completes and every chunk is byte-exact, so neither the coordinator nor the peers hold the range in
 * memory. Values are derived from their keys, so the test does not hold them either.
 */
class ClusterRangeMemoryIT {
    private static final int VALUE_BYTES = 256 * 1024;
    private static final int KEYS = 1200;

    @Test
    void threeHundredMegabyteRangeStreamsThroughSmallHeaps(@TempDir Path root) throws Exception {
        try (ProcessCluster cluster = ProcessCluster.start(3, root, List.of("-Xmx128m"))) {
            for (int i = 0; i < KEYS; i++) {
                DhtClient coordinator = new DhtClient(cluster.url(i % 3));
                String replicas = i % 12 == 0 ? "3/3" : "1/1";
                assertThat(coordinator.put(key(i), valueOf(i), replicas)).as("PUT %s", key(i)).isEqualTo(201);
            }

            URI range = cluster.url(1).resolve("/v0/entities?start=big-");
            long bytes = 0;
            int index = 0;
            try (ChunkedResponseReader reader = ChunkedResponseReader.get(range)) {
                assertThat(reader.status()).isEqualTo(200);
                for (byte[] chunk = reader.nextChunk(); chunk != null; chunk = reader.nextChunk()) {
                    byte[] expectedKey = (key(index) + "\n").getBytes(StandardCharsets.UTF_8);
                    assertThat(Arrays.copyOfRange(chunk, 0, expectedKey.length)).as("key of chunk %d", index).isEqualTo(expectedKey);
                    assertThat(Arrays.equals(chunk, expectedKey.length, chunk.length, valueOf(index), 0, VALUE_BYTES))
                            .as("value of %s", key(index)).isTrue();
                    bytes += chunk.length;
                    index++;
                }
            }
            assertThat(index).isEqualTo(KEYS);
            assertThat(bytes).isGreaterThan(300L * 1000 * 1000);
            for (int i = 0; i < 3; i++) {
                assertThat(cluster.node(i).isAlive()).isTrue();
                assertThat(cluster.node(i).output()).doesNotContain("OutOfMemoryError");
            }
        }
    }

    private static String key(int i) {
        return String.format("big-%05d", i);
    }

    private static byte[] valueOf(int i) {
        byte[] value = new byte[VALUE_BYTES];
        new Random(i).nextBytes(value);
        return value;
    }
}
