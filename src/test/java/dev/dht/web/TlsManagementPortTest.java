package dev.dht.web;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dht.peer.InternalProtocol;
import dev.dht.testing.ClusterTls;
import dev.dht.testing.DhtClient;
import dev.dht.testing.InProcessCluster;
import dev.dht.testing.NodeProcess;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import org.junit.jupiter.api.AutoClose;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * With mutual TLS on the server port ({@code dht.tls.client-auth=need}) and the actuator on a port of its own: the
 * management port serves HTTPS with the same bundle but only wants a client certificate, so probes and Prometheus
 * read without one; a write operation needs the cluster secret or a client certificate of the cluster.
 */
class TlsManagementPortTest {
    @TempDir
    static Path dir;
    private static ClusterTls tls;
    @AutoClose
    private static InProcessCluster cluster;
    private static int managementPort;

    @BeforeAll
    static void startNode() throws IOException {
        tls = ClusterTls.create(dir.resolve("tls"));
        managementPort = NodeProcess.freePorts(1).get(0);
        Map<String, String> settings = new LinkedHashMap<>(tls.nodeSettings("need"));
        settings.put("management.server.port", String.valueOf(managementPort));
        cluster = InProcessCluster.start(1, dir.resolve("data"), settings);
    }

    @Test
    void readsNeedNoClientCertificate() {
        DhtClient anonymous = management(false);

        assertThat(anonymous.send("GET", "/actuator/health/readiness", new byte[0]).statusCode()).isEqualTo(200);
        assertThat(anonymous.send("GET", "/actuator/prometheus", new byte[0]).statusCode()).isEqualTo(200);
    }

    @Test
    void writesNeedTheSecretOrAClusterCertificate() {
        assertThat(management(false).send("POST", "/actuator/repair", new byte[0]).statusCode()).isEqualTo(403);
        assertThat(management(false).send("POST", "/actuator/repair", new byte[0], InternalProtocol.SECRET_HEADER,
                InProcessCluster.SECRET).statusCode()).isEqualTo(200);
        assertThat(management(true).send("POST", "/actuator/repair", new byte[0]).statusCode()).isEqualTo(200);
    }

    @Test
    void theServerPortNeedsAClientCertificate() {
        assertThatThrownBy(() -> new DhtClient(cluster.url(0), tls.anonymousContext())
                .send("GET", "/v0/status", new byte[0])).isInstanceOf(UncheckedIOException.class);
        assertThat(new DhtClient(cluster.url(0), tls.clientContext()).send("GET", "/v0/status", new byte[0])
                .statusCode()).isEqualTo(200);
    }

    @Test
    void plainHttpOnTheManagementPortGetsNoAnswer() {
        assertThatThrownBy(() -> new DhtClient(URI.create("http://localhost:" + managementPort))
                .send("GET", "/actuator/health", new byte[0])).isInstanceOf(UncheckedIOException.class);
    }

    private static DhtClient management(boolean withCertificate) {
        return new DhtClient(URI.create("https://localhost:" + managementPort),
                withCertificate ? tls.clientContext() : tls.anonymousContext());
    }
}
