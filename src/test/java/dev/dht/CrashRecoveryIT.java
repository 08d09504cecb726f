package dev.dht;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dht.testing.ChunkedResponseReader;
import dev.dht.testing.DhtClient;
import dev.dht.testing.NodeProcess;
import dev.dht.testing.V0Uri;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A node run from {@code target/dht.jar} keeps every acknowledged write, and every delete, when it is killed
 * with SIGKILL and restarted on the same data dir and port; SIGTERM shuts it down gracefully with the data kept.
 */
class CrashRecoveryIT {
    private static final int KEYS = 200;
    private static final Duration START_TIMEOUT = Duration.ofSeconds(120);

    @TempDir
    Path tempDir;

    @AutoClose
    private NodeProcess node;

    @Test
    void acknowledgedWritesAndDeletesSurviveSigkill() throws Exception {
        int port = NodeProcess.freePort();
        node = startNode(port, "first");
        writeKeysAndDeleteEveryTenth(port);

        int exit = node.kill();

        assertThat(exit).as("exit code of SIGKILL").isEqualTo(137);
        node = startNode(port, "after-sigkill");
        assertAllKeysReadBack(port);
    }

    @Test
    void sigtermShutsDownGracefullyAndKeepsTheData() throws Exception {
        int port = NodeProcess.freePort();
        node = startNode(port, "first");
        writeKeysAndDeleteEveryTenth(port);

        int exit = node.terminate(Duration.ofSeconds(60));

        assertThat(exit).as("exit code after SIGTERM (128 + 15: shutdown hooks ran, no crash)").isEqualTo(143);
        assertThat(node.output()).contains("Graceful shutdown complete").doesNotContain("\tat ");
        node = startNode(port, "after-sigterm");
        assertAllKeysReadBack(port);
    }

    private NodeProcess startNode(int port, String run) throws Exception {
        return NodeProcess.startUp(port, tempDir.resolve("data"), tempDir.resolve(run + ".log"), List.of("-Xmx256m"),
                START_TIMEOUT);
    }

    private static DhtClient client(int port) {
        return new DhtClient(URI.create("http://localhost:" + port));
    }

    /** Writes every key, then deletes every tenth one, each acknowledged before the next is sent. */
    private void writeKeysAndDeleteEveryTenth(int port) {
        for (int i = 0; i < KEYS; i++) {
            assertThat(client(port).put(key(i), value(i), null)).as("PUT %s", key(i)).isEqualTo(201);
        }
        for (int i = 0; i < KEYS; i += 10) {
            assertThat(client(port).delete(key(i), null)).as("DELETE %s", key(i)).isEqualTo(202);
        }
    }

    private void assertAllKeysReadBack(int port) throws IOException {
        for (int i = 0; i < KEYS; i++) {
            HttpResponse<byte[]> response = client(port).get(key(i), null);
            if (i % 10 == 0) {
                assertThat(response.statusCode()).as("GET deleted %s", key(i)).isEqualTo(404);
            } else {
                assertThat(response.statusCode()).as("GET %s", key(i)).isEqualTo(200);
                assertThat(response.body()).as("value of %s", key(i)).isEqualTo(value(i));
            }
        }
        assertThat(ChunkedResponseReader.chunksOf(V0Uri.entities(port, "crash/", "crash0")))
                .hasSize(KEYS - KEYS / 10);
    }

    private static String key(int i) {
        return String.format("crash/%03d é+&/", i);
    }

    /** Deterministic per key, 0 to 4 KiB (key 1 has an empty value). */
    private static byte[] value(int i) {
        Random random = new Random(i);
        byte[] value = new byte[i == 1 ? 0 : random.nextInt(4096) + 1];
        random.nextBytes(value);
        return value;
    }
}
