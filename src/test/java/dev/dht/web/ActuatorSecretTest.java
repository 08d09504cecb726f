package dev.dht.web;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dht.peer.InternalProtocol;
import dev.dht.testing.DhtClient;
import dev.dht.testing.SingleNodeTest;
import java.net.URI;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.boot.test.web.server.LocalServerPort;

/**
 * With the actuator on the server port (no {@code management.server.port}, as {@code java -jar} and
 * {@code local-cluster} run): {@code POST /actuator/repair} and the backup writes need the cluster secret (403 with
 * a one-line body without it or with a wrong one), the read endpoints need none, and an unknown actuator path or method answers as
 * before (not 403).
 */
@SingleNodeTest(properties = "dht.cluster-secret=" + ActuatorSecretTest.SECRET)
class ActuatorSecretTest {
    static final String SECRET = "actuator-test-secret";
    static final String WRONG_SECRET = "actuator write operation: missing or wrong cluster secret\n";

    @LocalServerPort
    int port;

    @Test
    void repairWithoutTheSecretIsForbidden() {
        assertForbidden(node().send("POST", "/actuator/repair", new byte[0]), WRONG_SECRET);
    }

    @ParameterizedTest
    @ValueSource(strings = {"", "wrong", "actuator-test-secreT", "actuator-test-secret-", "actuator-test"})
    void repairWithAWrongSecretIsForbidden(String secret) {
        assertForbidden(repair(node(), secret), WRONG_SECRET);
    }

    @Test
    void repairWithTheSecretRuns() {
        HttpResponse<byte[]> answer = repair(node(), SECRET);

        assertThat(answer.statusCode()).isEqualTo(200);
        assertThat(new String(answer.body(), StandardCharsets.UTF_8)).as("no peer to repair with").isEqualTo("[]");
    }

    @Test
    void backupWritesNeedTheSecret() {
        assertForbidden(node().send("POST", "/actuator/backup", new byte[0]), WRONG_SECRET);
        assertForbidden(node().send("DELETE", "/actuator/backups/20261127T000000Z-0000", new byte[0]), WRONG_SECRET);
        HttpResponse<byte[]> refused = node().send("POST", "/actuator/backup", new byte[0],
                InternalProtocol.SECRET_HEADER, SECRET);
        assertThat(refused.statusCode()).as("passes the check, refused for want of a location").isEqualTo(409);
        assertThat(new String(refused.body(), StandardCharsets.UTF_8)).contains("no dht.backup.location is set");
    }

    @ParameterizedTest
    @ValueSource(strings = {"health", "health/liveness", "health/readiness", "info", "prometheus", "cluster", "backups"})
    void readsNeedNoSecret(String endpoint) {
        assertThat(node().send("GET", "/actuator/" + endpoint, new byte[0]).statusCode()).isEqualTo(200);
    }

    @Test
    void anUnknownActuatorPathOrMethodAnswersAsBefore() {
        assertThat(node().send("POST", "/actuator/shutdown", new byte[0]).statusCode()).isEqualTo(400);
        assertThat(node().send("POST", "/actuator/cluster", new byte[0]).statusCode()).as("read-only").isEqualTo(405);
    }

    /** {@code POST /actuator/repair} with {@code secret} in the secret header. */
    static HttpResponse<byte[]> repair(DhtClient node, String secret) {
        return node.send("POST", "/actuator/repair", new byte[0], InternalProtocol.SECRET_HEADER, secret);
    }

    static void assertForbidden(HttpResponse<byte[]> answer, String body) {
        assertThat(answer.statusCode()).isEqualTo(403);
        assertThat(answer.headers().firstValue("Content-Type"))
                .hasValueSatisfying(type -> assertThat(type).startsWith("text/plain"));
        assertThat(new String(answer.body(), StandardCharsets.UTF_8)).isEqualTo(body);
    }

    private DhtClient node() {
        return new DhtClient(URI.create("http://localhost:" + port));
    }
}
