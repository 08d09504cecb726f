package dev.dht.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.dht.DhtApplication;
import dev.dht.testing.DhtClient;
import io.netty.channel.EventLoopGroup;
import io.netty.util.concurrent.EventExecutor;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.Socket;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.StreamSupport;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.web.server.context.WebServerApplicationContext;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.http.client.ReactorResourceFactory;

/**
 * {@code dht.io-threads} sets how many Netty event loops a node runs (web server and replica client alike); by
 * default one per available processor. New connections are accepted by a thread of their own, apart from them.
 */
class EventLoopThreadsTest {
    private static final String SELF = "http://localhost:7001";
    private static final List<Path> LINUX_TCP_TABLES = List.of(Path.of("/proc/net/tcp"), Path.of("/proc/net/tcp6"));

    @TempDir
    Path tempDir;

    @Test
    void aSetNumberOfEventLoopsServes() {
        try (ConfigurableApplicationContext node = startServingNode("--dht.io-threads=3")) {
            assertThat(eventLoops(node)).hasSize(3);
        }
    }

    @Test
    void byDefaultOneEventLoopPerProcessor() {
        try (ConfigurableApplicationContext node = startServingNode()) {
            assertThat(eventLoops(node)).hasSize(Runtime.getRuntime().availableProcessors());
        }
    }

    /**
     * While every event loop is busy, connections are still taken off the kernel's accept queue (at most 4096 long
     * by default on Linux; beyond it the kernel drops connection attempts, and clients retry only after 1 s, 3 s,
     * ...), and each is served once the loops are free. Reads the accept queue of the listening socket from
     * {@code /proc/net/tcp*} (its {@code rx_queue}), so it runs on Linux only.
     */
    @Test
    void connectionsAreAcceptedWhileEveryEventLoopIsBusy() throws Exception {
        assumeTrue(LINUX_TCP_TABLES.stream().anyMatch(Files::isReadable),
                "skipped: the accept queue is read from Linux' /proc/net/tcp and /proc/net/tcp6, not readable here");
        try (ConfigurableApplicationContext node = startServingNode("--dht.io-threads=1")) {
            int port = portOf(node);
            CountDownLatch release = new CountDownLatch(1);
            List<EventExecutor> loops = eventLoops(node);
            CountDownLatch busy = new CountDownLatch(loops.size());
            loops.forEach(loop -> loop.execute(() -> {
                busy.countDown();
                awaitQuietly(release);
            }));
            List<Socket> connections = new ArrayList<>();
            try {
                assertThat(busy.await(5, TimeUnit.SECONDS)).as("every event loop busy").isTrue();
                for (int i = 0; i < 20; i++) {
                    Socket socket = new Socket("127.0.0.1", port);
                    socket.setSoTimeout(5000);
                    connections.add(socket);
                }
                await().atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(20)).untilAsserted(() ->
                        assertThat(acceptQueueLength(port))
                                .as("connections waiting in the kernel's accept queue while the loops are busy").isZero());
            } finally {
                release.countDown();
            }
            for (Socket socket : connections) {
                try (socket) {
                    assertThat(statusLineOfStatusRequest(socket)).startsWith("HTTP/1.1 200");
                }
            }
        }
    }

    /** Starts a single node with {@code settings} and checks that it serves. */
    private ConfigurableApplicationContext startServingNode(String... settings) {
        List<String> args = new ArrayList<>(List.of("--server.port=0", "--dht.self=" + SELF, "--dht.nodes=" + SELF,
                "--dht.data-dir=" + tempDir.resolve("data")));
        args.addAll(List.of(settings));
        ConfigurableApplicationContext context = new SpringApplication(DhtApplication.class).run(args.toArray(String[]::new));
        DhtClient client = new DhtClient(URI.create("http://localhost:" + portOf(context)));
        assertThat(client.send("GET", "/v0/status", new byte[0]).statusCode()).isEqualTo(200);
        return context;
    }

    private static int portOf(ConfigurableApplicationContext context) {
        return ((WebServerApplicationContext) context).getWebServer().getPort();
    }

    /** The node's event loops (those of the web server, which the replica client shares). */
    private static List<EventExecutor> eventLoops(ConfigurableApplicationContext context) {
        EventLoopGroup group = context.getBean(ReactorResourceFactory.class).getLoopResources().onServer(true);
        return StreamSupport.stream(group.spliterator(), false).toList();
    }

    private static void awaitQuietly(CountDownLatch latch) {
        try {
            latch.await(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static String statusLineOfStatusRequest(Socket socket) throws IOException {
        OutputStream out = socket.getOutputStream();
        out.write("GET /v0/status HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
        out.flush();
        return new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.US_ASCII)).readLine();
    }

    /**
     * Connections accepted by the kernel but not yet by the server on the listening socket of {@code port}: the
     * {@code rx_queue} of its LISTEN ({@code 0A}) rows in {@code /proc/net/tcp} and {@code /proc/net/tcp6}.
     */
    private static int acceptQueueLength(int port) throws IOException {
        String localPort = String.format(":%04X", port);
        int queued = 0;
        for (Path table : LINUX_TCP_TABLES) {
            if (!Files.isReadable(table)) {
                continue;
            }
            for (String line : Files.readAllLines(table)) {
                String[] fields = line.trim().split("\\s+");
                if (fields.length > 4 && fields[1].endsWith(localPort) && "0A".equals(fields[3])) {
                    queued += Integer.parseInt(fields[4].substring(fields[4].indexOf(':') + 1), 16);
                }
            }
        }
        return queued;
    }
}
