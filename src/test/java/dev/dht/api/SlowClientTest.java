package dev.dht.api;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dht.testing.DhtClient;
import dev.dht.testing.RawHttpConnection;
import dev.dht.testing.SingleNodeTest;
import java.io.IOException;
import java.net.URI;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.test.web.server.LocalServerPort;

/**
 * Clients that stall or vanish in the middle of a request (slowloris, a dropped link) do not hold a connection for
 * ever and store nothing: with {@code server.netty.idle-timeout=2s}, a stalled head or body gets its connection closed
 * (or a 408) within a few seconds, a head trickled byte by byte is closed although bytes keep coming, a client that
 * shuts its side mid-body is not logged as a server error, and a body that pauses for less than the timeout is
 * still stored.
 */
@ExtendWith(OutputCaptureExtension.class)
@SingleNodeTest(properties = "server.netty.idle-timeout=2s")
class SlowClientTest {
    private static final Duration BOUND = Duration.ofSeconds(20);

    @LocalServerPort
    int port;

    @AfterEach
    void noErrorLogged(CapturedOutput output) {
        assertThat(output.getOut().lines().filter(line -> line.contains(" ERROR "))).isEmpty();
    }

    @Test
    void aHeadCutOffThenSilentIsClosed() throws IOException {
        try (RawHttpConnection connection = new RawHttpConnection(port, BOUND)) {
            connection.send("PUT /v0/entity?id=slow-head");

            assertThat(connection.statusOrClosed()).isEqualTo(-1);
        }
    }

    @Test
    void aHeadTrickledByteByByteIsClosedWhileBytesKeepComing() throws Exception {
        String head = "PUT /v0/entity?id=slow-trickle HTTP/1.1\r\nHost: x\r\nX-Slow: " + "s".repeat(100) + "\r\n";
        long started = System.nanoTime();
        try (RawHttpConnection connection = new RawHttpConnection(port, BOUND)) {
            try {
                for (char c : head.toCharArray()) {
                    connection.send(String.valueOf(c));
                    Thread.sleep(100);
                }
            } catch (IOException closed) {
                // the node closed the connection under the trickle
            }
            assertThat(connection.statusOrClosed()).isEqualTo(-1);
        }
        assertThat(Duration.ofNanos(System.nanoTime() - started)).as("closed before the %d-s trickle ended",
                head.length() / 10).isLessThan(Duration.ofSeconds(head.length() / 10));
    }

    @Test
    void aBodyThatStallsIsRefusedAndNothingStored() throws IOException {
        try (RawHttpConnection connection = new RawHttpConnection(port, BOUND)) {
            connection.send("PUT /v0/entity?id=slow-body HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nabc");

            assertThat(connection.statusOrClosed()).isIn(408, -1);
        }
        assertThat(client().get("slow-body", null).statusCode()).isEqualTo(404);
    }

    @Test
    void aClientThatShutsItsSideMidBodyStoresNothing() throws IOException {
        try (RawHttpConnection connection = new RawHttpConnection(port, BOUND)) {
            connection.send("PUT /v0/entity?id=cut-off HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nabc");
            connection.shutdownOutput();

            assertThat(connection.statusOrClosed()).isIn(400, -1);
        }
        assertThat(client().get("cut-off", null).statusCode()).isEqualTo(404);
    }

    @Test
    void aBodyPausingForLessThanTheTimeoutIsStored() throws Exception {
        try (RawHttpConnection connection = new RawHttpConnection(port, BOUND)) {
            connection.send("PUT /v0/entity?id=short-pause HTTP/1.1\r\nHost: x\r\nContent-Length: 6\r\n\r\nabc");
            Thread.sleep(1000);
            connection.send("def");

            assertThat(connection.statusOrClosed()).isEqualTo(201);
        }
        assertThat(client().get("short-pause", null).body()).asString().isEqualTo("abcdef");
    }

    private DhtClient client() {
        return new DhtClient(URI.create("http://localhost:" + port));
    }
}
