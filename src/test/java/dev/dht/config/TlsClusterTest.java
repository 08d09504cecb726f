package dev.dht.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.dht.LocalCertificateAuthority;
import dev.dht.testing.ClusterTls;
import dev.dht.testing.DhtClient;
import dev.dht.testing.InProcessCluster;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.math.BigInteger;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import javax.net.ssl.SSLServerSocket;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.SSLContext;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.util.FileSystemUtils;
import org.springframework.web.reactive.function.client.WebClient;

/**
 * Two nodes with mutual TLS ({@code dht.tls.client-auth=need}) from a PEM bundle: replicas talk over HTTPS, a
 * cluster certificate stands in for the secret on {@code /internal/*}, a peer whose certificate is from another CA,
 * expired or for another host is refused by the replica client (and counted), and certificates rotate without a
 * restart on both sides.
 */
class TlsClusterTest {
    @TempDir
    static Path dir;

    static ClusterTls tls;
    static InProcessCluster cluster;

    @BeforeAll
    static void startCluster() {
        tls = ClusterTls.create(dir.resolve("tls"));
        // a 5-s replica timeout: a replica call's first mutual-TLS handshake on a cold JVM, beside another test JVM on
        // a busy 2-core machine, once took longer than the default 1 s (504); a refused peer still fails at once
        Map<String, String> settings = new HashMap<>(tls.nodeSettings("need"));
        settings.put("dht.replica-timeout", "5s");
        cluster = InProcessCluster.start(2, dir.resolve("data"), settings);
    }

    @AfterAll
    static void stopCluster() {
        if (cluster != null) {
            cluster.close();
        }
        FileSystemUtils.deleteRecursively(dir.resolve("data").toFile());
    }

    @AfterEach
    void restoreNodes() {
        cluster.restoreAll();
    }

    @Test
    void replicasTalkOverMutualTls() {
        assertThat(cluster.url(0).getScheme()).isEqualTo("https");

        assertThat(client(0).put("mtls-key", "v1", "2/2")).isEqualTo(201);
        assertThat(client(1).get("mtls-key", "2/2").statusCode()).isEqualTo(200);
        assertThat(new String(client(1).get("mtls-key", "2/2").body(), StandardCharsets.UTF_8)).isEqualTo("v1");
        assertThat(cluster.storedAt(1, "mtls-key")).isNotNull();
    }

    @Test
    void aClusterCertificateStandsInForTheSecretOnInternalEndpoints() {
        assertThat(client(0).put("internal-key", "v", "2/2")).isEqualTo(201);

        assertThat(client(1).send("GET", "/internal/record?id=internal-key", new byte[0]).statusCode())
                .as("no secret header, a verified client certificate").isEqualTo(200);
    }

    @Test
    void aPeerWithACertificateFromAnotherCaIsRefused() {
        LocalCertificateAuthority other = LocalCertificateAuthority.create("dht test CA", Duration.ofDays(1));
        assertPeerRefused(other.issue(ClusterTls.LOCAL_NAMES, Duration.ofDays(1)));
    }

    @Test
    void aPeerWithAnExpiredCertificateIsRefused() {
        Instant now = Instant.now();
        assertPeerRefused(tls.authority().issue(ClusterTls.LOCAL_NAMES, now.minus(Duration.ofDays(2)),
                now.minus(Duration.ofDays(1))));
    }

    @Test
    void aPeerWithACertificateForAnotherHostIsRefused() {
        assertPeerRefused(tls.authority().issue(List.of("node.other.example"), Duration.ofDays(1)));
    }

    /** Node 1 restarted with {@code certificate}: node 0's writes to it fail (504 at 2/2) and count a failure. */
    private static void assertPeerRefused(LocalCertificateAuthority.Issued certificate) {
        Path certificateFile = dir.resolve("tls/peer-" + certificate.certificate().getSerialNumber() + ".crt");
        Path keyFile = dir.resolve("tls/peer-" + certificate.certificate().getSerialNumber() + ".key");
        certificate.writeTo(certificateFile, keyFile);
        cluster.stop(1);
        cluster.start(1, tls.nodeSettings(certificateFile, keyFile, "need"));
        try {
            double before = clientFailures(0);

            assertThat(client(0).put("refused-peer-" + certificate.certificate().getSerialNumber(), "v", "2/2"))
                    .isEqualTo(504);
            assertThat(clientFailures(0)).isGreaterThan(before);
        } finally {
            cluster.stop(1);
            cluster.start(1);
        }
    }

    @Test
    void certificatesRotateWithoutARestart() throws Exception {
        BigInteger old = serverCertificateSerial(cluster.url(0));
        assertThat(old).isEqualTo(tls.node().certificate().getSerialNumber());
        try (RecordingServer server = new RecordingServer(tls)) {
            replicaClient(0).get().uri(server.url()).retrieve().toBodilessEntity().block(Duration.ofSeconds(10));
            assertThat(server.lastClientSerial()).isEqualTo(old);

            LocalCertificateAuthority.Issued renewed = tls.authority().issue(ClusterTls.LOCAL_NAMES, Duration.ofDays(2));
            renewed.writeTo(tls.certificateFile(), tls.keyFile());
            BigInteger serial = renewed.certificate().getSerialNumber();

            await("the server presents the new certificate").atMost(Duration.ofSeconds(60))
                    .pollInterval(Duration.ofMillis(200))
                    .until(() -> serial.equals(serverCertificateSerial(cluster.url(0))));
            await("the replica client presents the new certificate").atMost(Duration.ofSeconds(60))
                    .pollInterval(Duration.ofMillis(200))
                    .until(() -> {
                        replicaClient(0).get().uri(server.url()).retrieve().toBodilessEntity()
                                .block(Duration.ofSeconds(10));
                        return serial.equals(server.lastClientSerial());
                    });
        }
        assertThat(client(0).put("after-rotation", "v", "2/2")).isEqualTo(201);
    }

    private static DhtClient client(int node) {
        return new DhtClient(cluster.url(node), tls.clientContext());
    }

    private static WebClient replicaClient(int node) {
        return cluster.bean(node, WebClient.class);
    }

    private static double clientFailures(int node) {
        return cluster.bean(node, MeterRegistry.class).find("dht.tls.handshake.failures").tag("side", "client")
                .counters().stream().mapToDouble(Counter::count).sum();
    }

    /** The serial number of the certificate {@code url}'s server presents in a new handshake (with a client cert). */
    private static BigInteger serverCertificateSerial(URI url) throws IOException {
        try (SSLSocket socket = (SSLSocket) tls.clientContext().getSocketFactory().createSocket("localhost", url.getPort())) {
            socket.setSoTimeout(5000);
            socket.startHandshake();
            return ((java.security.cert.X509Certificate) socket.getSession().getPeerCertificates()[0]).getSerialNumber();
        }
    }

    /**
     * An HTTPS server on loopback that needs a client certificate from the cluster's CA, remembers the serial number
     * of the last one presented, and answers every request 200 with {@code Connection: close}, so each call is a new
     * handshake.
     */
    private static final class RecordingServer implements AutoCloseable {
        private final SSLServerSocket socket;
        private final AtomicReference<BigInteger> lastClientSerial = new AtomicReference<>();
        private final Thread thread;

        RecordingServer(ClusterTls tls) throws IOException {
            SSLContext context = ClusterTls.context(tls.authority().certificate(), tls.node());
            socket = (SSLServerSocket) context.getServerSocketFactory().createServerSocket(0);
            socket.setNeedClientAuth(true);
            thread = new Thread(this::serve, "recording-tls-server");
            thread.setDaemon(true);
            thread.start();
        }

        URI url() {
            return URI.create("https://localhost:" + socket.getLocalPort() + "/");
        }

        BigInteger lastClientSerial() {
            return lastClientSerial.get();
        }

        private void serve() {
            while (!socket.isClosed()) {
                try (SSLSocket connection = (SSLSocket) socket.accept()) {
                    connection.setSoTimeout(5000);
                    connection.startHandshake();
                    lastClientSerial.set(((java.security.cert.X509Certificate)
                            connection.getSession().getPeerCertificates()[0]).getSerialNumber());
                    InputStream in = connection.getInputStream();
                    byte[] buffer = new byte[8192];
                    int read = in.read(buffer);
                    if (read > 0) {
                        OutputStream out = connection.getOutputStream();
                        out.write("HTTP/1.1 200 OK\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                                .getBytes(StandardCharsets.US_ASCII));
                        out.flush();
                    }
                } catch (IOException e) {
                    // a failed handshake or a closed socket: the next accept, or the end
                }
            }
        }

        @Override
        public void close() throws IOException {
            socket.close();
        }
    }
}
