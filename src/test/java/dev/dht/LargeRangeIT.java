package dev.dht;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dht.testing.ChunkedResponseReader;
import dev.dht.testing.NodeProcess;
import dev.dht.testing.V0Uri;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A range of about 200 MB streams completely and byte-exactly from a node with a 128 MB heap, so the node
 * streams with backpressure instead of buffering the answer. The test keeps only a digest per key and hashes
 * one chunk at a time, so it does not hold the answer either.
 */
class LargeRangeIT {
    private static final int KEYS = 800;
    private static final int VALUE_SIZE = 256 * 1024;

    private final HttpClient http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();

    @TempDir
    Path tempDir;

    @AutoClose
    private NodeProcess node;

    @Test
    void twoHundredMegabyteRangeStreamsByteExactlyFromA128MegabyteHeap() throws Exception {
        int port = NodeProcess.freePort();
        node = NodeProcess.startUp(port, tempDir.resolve("data"), tempDir.resolve("node.log"), List.of("-Xmx128m"),
                Duration.ofSeconds(120));
        Map<String, byte[]> digests = writeValues(port);

        int chunks = 0;
        String previousKey = null;
        MessageDigest sha256 = MessageDigest.getInstance("SHA-256");
        try (ChunkedResponseReader reader = ChunkedResponseReader.get(V0Uri.entities(port, "large/", "large0"))) {
            assertThat(reader.status()).isEqualTo(200);
            for (byte[] chunk = reader.nextChunk(); chunk != null; chunk = reader.nextChunk()) {
                if (chunks == 0) {
                    // A slow reader at first: a node that ignored backpressure would now fill its 128 MB heap.
                    Thread.sleep(3_000);
                }
                int newline = indexOf(chunk, (byte) '\n');
                assertThat(newline).as("chunk %d has a key\\nvalue separator", chunks).isPositive();
                String key = new String(chunk, 0, newline, StandardCharsets.UTF_8);
                assertThat(chunk.length - newline - 1).as("value size of %s", key).isEqualTo(VALUE_SIZE);
                sha256.update(chunk, newline + 1, chunk.length - newline - 1);
                assertThat(sha256.digest()).as("digest of the value of %s", key).isEqualTo(digests.get(key));
                if (previousKey != null) {
                    assertThat(key).isGreaterThan(previousKey);
                }
                previousKey = key;
                chunks++;
            }
        }

        assertThat(chunks).isEqualTo(KEYS);
        assertThat(node.isAlive()).isTrue();
        assertThat(node.output()).doesNotContain("OutOfMemoryError");
    }

    /** PUTs {@link #KEYS} random values from four threads; returns the SHA-256 of each key's value. */
    private Map<String, byte[]> writeValues(int port) throws Exception {
        ExecutorService writers = Executors.newFixedThreadPool(4);
        try {
            List<Future<byte[]>> results = new ArrayList<>();
            for (int i = 0; i < KEYS; i++) {
                int index = i;
                results.add(writers.submit(() -> {
                    byte[] value = new byte[VALUE_SIZE];
                    new SplittableRandom(index).nextBytes(value);
                    HttpRequest put = HttpRequest.newBuilder(V0Uri.entity(port, key(index)))
                            .PUT(HttpRequest.BodyPublishers.ofByteArray(value)).build();
                    HttpResponse<Void> response = http.send(put, HttpResponse.BodyHandlers.discarding());
                    assertThat(response.statusCode()).as("PUT %s", key(index)).isEqualTo(201);
                    return MessageDigest.getInstance("SHA-256").digest(value);
                }));
            }
            Map<String, byte[]> digests = new HashMap<>();
            for (int i = 0; i < KEYS; i++) {
                digests.put(key(i), results.get(i).get());
            }
            return digests;
        } finally {
            writers.shutdownNow();
        }
    }

    private static String key(int i) {
        return String.format("large/%04d", i);
    }

    private static int indexOf(byte[] bytes, byte b) {
        for (int i = 0; i < bytes.length; i++) {
            if (bytes[i] == b) {
                return i;
            }
        }
        return -1;
    }
}
