package dev.dht.replication;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dht.testing.ChunkedResponseReader;
import dev.dht.testing.DhtClient;
import dev.dht.testing.InProcessCluster;
import java.io.EOFException;
import java.io.IOException;
import java.net.URI;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code /v0/entities} over a 3-node cluster: 3 000 keys written at various replication factors, some
 * overwritten or deleted through other coordinators. Every node must stream exactly the expected sorted map;
 * a node that is down makes the range fail visibly (504, or a body without its terminating chunk), and so does
 * a peer that stalls mid-stream, after {@link #RANGE_IDLE_TIMEOUT}, while a client that pauses longer than that
 * still gets everything.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class ClusterRangeTest {
    private static final String[] REPLICAS = {"1/1", "2/2", "1/3", "2/3", "3/3", null};
    private static final Duration RANGE_IDLE_TIMEOUT = Duration.ofSeconds(2);

    @RegisterExtension
    static final InProcessCluster cluster = InProcessCluster.of(3,
            Map.of("dht.range-idle-timeout", RANGE_IDLE_TIMEOUT.toMillis() + "ms")).restoredAfterEach();
    /** Expected live keys, in unsigned UTF-8 byte order, with their values. */
    final TreeMap<byte[], byte[]> expected = new TreeMap<>(Arrays::compareUnsigned);

    @BeforeAll
    void writeKeys() {
        Random random = new Random(2026);
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < 3000; i++) {
            String id = "r" + String.format("%05d", i) + (i % 10 == 0 ? "-ключ-é" : "");
            String value = i % 97 == 0 ? "" : "value-" + i + "-" + random.nextInt(1_000_000);
            DhtClient coordinator = cluster.client(i % 3);
            assertThat(coordinator.put(id, value, REPLICAS[i % REPLICAS.length])).isEqualTo(201);
            expected.put(bytes(id), bytes(value));
            ids.add(id);
        }
        for (int i = 0; i < 3000; i += 7) {
            String id = ids.get(i);
            String value = "overwritten-" + i;
            assertThat(cluster.client((i + 1) % 3).put(id, value, "2/3")).isEqualTo(201);
            expected.put(bytes(id), bytes(value));
        }
        for (int i = 0; i < 3000; i += 11) {
            String id = ids.get(i);
            assertThat(cluster.client((i + 2) % 3).delete(id, "3/3")).isEqualTo(202);
            expected.remove(bytes(id));
        }
    }

    @Test
    void everyNodeStreamsTheWholeClusterRange() throws IOException {
        for (int node = 0; node < 3; node++) {
            assertThat(range(node, "r", null)).as("range from node %d", node).containsExactlyEntriesOf(asStrings(expected));
        }
    }

    @Test
    void boundsAreStartInclusiveEndExclusive() throws IOException {
        String start = "r01000";
        String end = "r02000";
        Map<String, String> expectedPart = asStrings(expected.subMap(bytes(start), true, bytes(end), false));
        assertThat(expectedPart).hasSizeGreaterThan(800);
        assertThat(range(1, start, end)).containsExactlyEntriesOf(expectedPart);
        assertThat(range(2, "r02999", "r03000")).containsOnlyKeys("r02999");
        assertThat(range(0, "s", null)).isEmpty();
    }

    @Test
    void aNodeDownBeforeTheStreamGives504() throws IOException {
        cluster.stop(2);
        try (ChunkedResponseReader reader = ChunkedResponseReader.get(rangeUri(0, "r", null))) {
            assertThat(reader.status()).isEqualTo(504);
        }
    }

    @Test
    void aPeerWhoseFirstRecordIsLaterThanTheReplicaTimeoutGives504() throws IOException {
        cluster.faults(0).delayCallsTo(cluster.url(2), Duration.ofSeconds(4));
        long started = System.nanoTime();
        try (ChunkedResponseReader reader = ChunkedResponseReader.get(rangeUri(0, "r", null))) {
            assertThat(reader.status()).isEqualTo(504);
        }
        assertThat(Duration.ofNanos(System.nanoTime() - started)).as("answered at the 1 s replica timeout")
                .isLessThan(Duration.ofSeconds(3));
    }

    @Test
    void aNodeDownMidStreamCutsTheBodyOff() throws IOException {
        byte[] big = new byte[64 * 1024];
        new Random(5).nextBytes(big);
        for (int i = 0; i < 600; i++) {
            assertThat(cluster.client(0).put("z-big-" + String.format("%04d", i), big, "3/3")).isEqualTo(201);
        }
        try (ChunkedResponseReader reader = ChunkedResponseReader.get(rangeUri(0, "z-big-", null))) {
            assertThat(reader.status()).isEqualTo(200);
            assertThat(reader.nextChunk()).isNotNull();
            cluster.stop(1);
            assertThatThrownBy(() -> {
                while (reader.nextChunk() != null) {
                    // drain until the cut
                }
            }).isInstanceOf(EOFException.class);
        }
    }

    @Test
    void aPeerThatStallsMidStreamCutsTheBodyOffAfterTheIdleTimeout() throws IOException {
        byte[] big = new byte[64 * 1024];
        new Random(7).nextBytes(big);
        for (int i = 0; i < 300; i++) {
            assertThat(cluster.client(i % 3).put("x-stall-" + String.format("%04d", i), big, "3/3")).isEqualTo(201);
        }
        cluster.serverFaults(2).stallRangeStreams();
        long started = System.nanoTime();
        try (ChunkedResponseReader reader = ChunkedResponseReader.get(rangeUri(0, "x-stall-", "x-stall-~"))) {
            assertThat(reader.status()).as("the stalled peer sent its first buffer in time").isEqualTo(200);
            assertThatThrownBy(() -> {
                while (reader.nextChunk() != null) {
                    // drain until the cut
                }
            }).as("cut off, not ended cleanly with data missing").isInstanceOf(EOFException.class);
        }
        assertThat(Duration.ofNanos(System.nanoTime() - started)).as("failed at the idle timeout, not when TCP gives up")
                .isGreaterThanOrEqualTo(RANGE_IDLE_TIMEOUT).isLessThan(Duration.ofSeconds(30));
    }

    @Test
    void aClientThatPausesLongerThanTheReplicaTimeoutStillGetsTheWholeRange() throws Exception {
        byte[] big = new byte[64 * 1024];
        new Random(9).nextBytes(big);
        int keys = 200;
        for (int i = 0; i < keys; i++) {
            assertThat(cluster.client(i % 3).put("y-pause-" + String.format("%04d", i), big, "3/3")).isEqualTo(201);
        }
        try (ChunkedResponseReader reader = ChunkedResponseReader.get(rangeUri(0, "y-pause-", "y-pause-~"))) {
            assertThat(reader.status()).isEqualTo(200);
            assertThat(reader.nextChunk()).isNotNull();
            // the peers' streams are held back by backpressure meanwhile (replica timeout 1 s, range idle timeout 2 s)
            Thread.sleep(RANGE_IDLE_TIMEOUT.toMillis() + 1_500);
            assertThat(reader.readAllChunks()).as("chunks after the pause").hasSize(keys - 1);
        }
    }

    private Map<String, String> range(int node, String start, String end) throws IOException {
        Map<String, String> result = new java.util.LinkedHashMap<>();
        for (byte[] chunk : ChunkedResponseReader.chunksOf(rangeUri(node, start, end))) {
            String text = new String(chunk, StandardCharsets.UTF_8);
            int newline = text.indexOf('\n');
            assertThat(newline).as("chunk %s has key\\nvalue", text).isPositive();
            assertThat(result.put(text.substring(0, newline), text.substring(newline + 1))).as("duplicate key").isNull();
        }
        return result;
    }

    private URI rangeUri(int node, String start, String end) {
        return cluster.url(node).resolve("/v0/entities?start=" + URLEncoder.encode(start, StandardCharsets.UTF_8)
                + (end == null ? "" : "&end=" + URLEncoder.encode(end, StandardCharsets.UTF_8)));
    }

    private static Map<String, String> asStrings(Map<byte[], byte[]> map) {
        Map<String, String> result = new java.util.LinkedHashMap<>();
        map.forEach((k, v) -> result.put(new String(k, StandardCharsets.UTF_8), new String(v, StandardCharsets.UTF_8)));
        return result;
    }

    private static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }
}
