package dev.dht.web;

import static dev.dht.web.ActuatorSecretTest.assertForbidden;
import static dev.dht.web.ActuatorSecretTest.repair;
import static org.assertj.core.api.Assertions.assertThat;

import dev.dht.testing.DhtClient;
import dev.dht.testing.SharedNodeTest;
import java.net.URI;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.web.server.LocalServerPort;

/**
 * A single node without {@code dht.cluster-secret} (allowed: the secret is required only with more than one node)
 * refuses every actuator write operation, whatever header comes with it, and names the missing setting; reads stay
 * open.
 */
@SharedNodeTest
class ActuatorWithoutSecretTest {
    private static final String NO_SECRET = "actuator write operation: refused, no dht.cluster-secret is set\n";

    @LocalServerPort
    int port;

    @Test
    void repairIsRefusedWithOrWithoutAHeader() {
        assertForbidden(node().send("POST", "/actuator/repair", new byte[0]), NO_SECRET);
        assertForbidden(repair(node(), ""), NO_SECRET);
        assertForbidden(repair(node(), "any"), NO_SECRET);
    }

    @Test
    void readsStayOpen() {
        assertThat(node().send("GET", "/actuator/health", new byte[0]).statusCode()).isEqualTo(200);
        assertThat(node().send("GET", "/actuator/cluster", new byte[0]).statusCode()).isEqualTo(200);
    }

    private DhtClient node() {
        return new DhtClient(URI.create("http://localhost:" + port));
    }
}
