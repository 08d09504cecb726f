package dev.dht.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import dev.dht.LocalCertificateAuthority;
import dev.dht.testing.ClusterTls;
import dev.dht.testing.DhtClient;
import dev.dht.testing.InProcessCluster;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Random;
import javax.net.ssl.SSLContext;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Hostile and mistaken TLS clients against a node with mutual TLS ({@code dht.tls.client-auth=need}), the cases of
 * RELIABILITY.md's "Hostile input over TLS": each is refused in the handshake (the connection closes with no HTTP
 * answer, or the client's handshake fails), counted in {@code dht.tls.handshake.failures} under its reason on the
 * server side, and leaves the node serving a client with a certificate of the cluster. No key is stored by any.
 */
class TlsHostileInputTest {
    @TempDir
    static Path dir;
    private static ClusterTls tls;
    @AutoClose
    private static InProcessCluster cluster;

    @BeforeAll
    static void startNode() {
        tls = ClusterTls.create(dir.resolve("tls"));
        cluster = InProcessCluster.start(1, dir.resolve("data"), tls.nodeSettings("need"));
    }

    @AfterEach
    void nodeStillServesTheCluster() {
        DhtClient client = new DhtClient(cluster.url(0), tls.clientContext());
        assertThat(client.send("GET", "/v0/status", new byte[0]).statusCode()).isEqualTo(200);
        assertThat(client.put("hostile-tls-check", "v", null)).isEqualTo(201);
        assertThat(client.get("hostile-tls-check", null).statusCode()).isEqualTo(200);
    }

    @Test
    void plainHttpToTheTlsPortIsClosedUnanswered() throws IOException {
        double before = failures("not_tls");

        String answer = rawExchange(("PUT /v0/entity?id=hostile-plain HTTP/1.1\r\nHost: localhost\r\n"
                + "Content-Length: 1\r\n\r\nx").getBytes(StandardCharsets.US_ASCII));

        assertThat(answer).doesNotContain("HTTP/1.1");
        awaitFailures("not_tls", before);
        assertThat(cluster.storedAt(0, "hostile-plain")).isNull();
    }

    @Test
    void handshakeGarbageIsClosedUnanswered() throws IOException {
        byte[] garbage = new byte[512];
        new Random(33).nextBytes(garbage);
        // a TLS handshake record header with a plausible length, then random bytes where a ClientHello belongs
        garbage[0] = 0x16;
        garbage[1] = 0x03;
        garbage[2] = 0x01;
        garbage[3] = 0x01;
        garbage[4] = (byte) 0xfb;
        double before = totalFailures();

        String answer = rawExchange(garbage);

        assertThat(answer).doesNotContain("HTTP/1.1");
        await().atMost(Duration.ofSeconds(15)).until(() -> totalFailures() > before);
    }

    @Test
    void aClientWithoutCertificateIsRefused() {
        assertRefusedWithCertificateReason(tls.anonymousContext());
    }

    @Test
    void anExpiredClientCertificateIsRefused() {
        Instant now = Instant.now();
        assertRefusedWithCertificateReason(ClusterTls.context(tls.authority().certificate(), tls.authority().issue(
                ClusterTls.LOCAL_NAMES, now.minus(Duration.ofDays(2)), now.minus(Duration.ofDays(1)))));
    }

    @Test
    void aClientCertificateFromAnotherCaIsRefused() {
        LocalCertificateAuthority other = LocalCertificateAuthority.create("someone else's CA", Duration.ofDays(1));
        assertRefusedWithCertificateReason(ClusterTls.context(tls.authority().certificate(),
                other.issue(ClusterTls.LOCAL_NAMES, Duration.ofDays(1))));
    }

    @Test
    void aClientCertificateOfAnotherClusterIsRefused() {
        // another cluster made the same way: its CA has our CA's name, its node certificate our node's names
        LocalCertificateAuthority otherCluster = LocalCertificateAuthority.create("dht test CA", Duration.ofDays(1));
        assertThat(otherCluster.certificate().getSubjectX500Principal())
                .isEqualTo(tls.authority().certificate().getSubjectX500Principal());

        assertRefusedWithCertificateReason(ClusterTls.context(tls.authority().certificate(),
                otherCluster.issue(ClusterTls.LOCAL_NAMES, Duration.ofDays(1))));
    }

    /** A PUT over {@code context} fails in the handshake, nothing is stored, and the server counts it. */
    private static void assertRefusedWithCertificateReason(SSLContext context) {
        double before = failures("certificate");
        String key = "hostile-tls-" + System.nanoTime();

        assertThatThrownBy(() -> new DhtClient(cluster.url(0), context).put(key, "v", null))
                .isInstanceOf(UncheckedIOException.class);

        awaitFailures("certificate", before);
        assertThat(cluster.storedAt(0, key)).isNull();
    }

    /** Writes {@code request} on a plain socket and reads until the node closes it (at most 15 s). */
    private static String rawExchange(byte[] request) throws IOException {
        try (Socket socket = new Socket("localhost", cluster.url(0).getPort())) {
            socket.setSoTimeout(15_000);
            socket.getOutputStream().write(request);
            socket.getOutputStream().flush();
            ByteArrayOutputStream answer = new ByteArrayOutputStream();
            InputStream in = socket.getInputStream();
            byte[] buffer = new byte[4096];
            try {
                for (int read; (read = in.read(buffer)) >= 0; ) {
                    answer.write(buffer, 0, read);
                }
            } catch (SocketTimeoutException e) {
                throw new AssertionError("the node kept the connection open 15 s; it sent: " + answer, e);
            } catch (IOException e) {
                // reset by the node: closed as well
            }
            return answer.toString(StandardCharsets.ISO_8859_1);
        }
    }

    private static void awaitFailures(String reason, double before) {
        await("dht.tls.handshake.failures{side=server,reason=" + reason + "} counts it").atMost(Duration.ofSeconds(15))
                .until(() -> failures(reason) > before);
    }

    private static double failures(String reason) {
        Counter counter = registry().find("dht.tls.handshake.failures").tag("side", "server").tag("reason", reason)
                .counter();
        return counter == null ? 0 : counter.count();
    }

    private static double totalFailures() {
        return registry().find("dht.tls.handshake.failures").tag("side", "server").counters().stream()
                .mapToDouble(Counter::count).sum();
    }

    private static MeterRegistry registry() {
        return cluster.bean(0, MeterRegistry.class);
    }
}
