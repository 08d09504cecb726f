package dev.dht.web;

import static dev.dht.web.ActuatorSecretTest.assertForbidden;
import static dev.dht.web.ActuatorSecretTest.repair;
import static org.assertj.core.api.Assertions.assertThat;

import dev.dht.peer.InternalProtocol;
import dev.dht.testing.ClientRequestCounts;
import dev.dht.testing.DhtClient;
import dev.dht.testing.SingleNodeTest;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.boot.test.web.server.LocalManagementPort;
import org.springframework.boot.test.web.server.LocalServerPort;

/**
 * With the actuator on a port of its own ({@code management.server.port}, as in the container image): Spring Boot
 * serves it from a child context with its own web server, and the secret check applies there too. The management
 * port serves nothing else (no v0 API, no {@code /internal/*}); the server port keeps the v0 API and serves no
 * actuator endpoint. A v0 request sent to the management port is counted in {@code dht_client_requests_seconds}
 * with its answer (400), an actuator request is not.
 */
@SingleNodeTest(properties = {"dht.cluster-secret=" + ActuatorSecretTest.SECRET, "management.server.port=0"})
class ActuatorSecretOnManagementPortTest {
    @LocalServerPort
    int serverPort;

    @LocalManagementPort
    int managementPort;

    @Test
    void repairOnTheManagementPortNeedsTheSecret() {
        assertThat(managementPort).isPositive().isNotEqualTo(serverPort);

        assertForbidden(management().send("POST", "/actuator/repair", new byte[0]), ActuatorSecretTest.WRONG_SECRET);
        assertForbidden(repair(management(), "wrong"), ActuatorSecretTest.WRONG_SECRET);
        assertThat(repair(management(), ActuatorSecretTest.SECRET).statusCode()).isEqualTo(200);
    }

    @ParameterizedTest
    @ValueSource(strings = {"health", "health/liveness", "health/readiness", "info", "prometheus", "cluster"})
    void readsOnTheManagementPortNeedNoSecret(String endpoint) {
        assertThat(management().send("GET", "/actuator/" + endpoint, new byte[0]).statusCode()).isEqualTo(200);
    }

    @ParameterizedTest
    @ValueSource(strings = {"health", "prometheus", "cluster", "repair"})
    void theServerPortServesNoActuatorEndpoint(String endpoint) {
        assertThat(server().send("GET", "/actuator/" + endpoint, new byte[0]).statusCode()).isIn(400, 404);
        assertThat(server().send("POST", "/actuator/" + endpoint, new byte[0], InternalProtocol.SECRET_HEADER,
                ActuatorSecretTest.SECRET).statusCode()).isIn(400, 404);
    }

    @ParameterizedTest
    @ValueSource(strings = {"/v0/status", "/v0/entity?id=k", "/v0/entities?start=a", "/internal/record?id=k", "/"})
    void theManagementPortServesNothingButTheActuator(String pathAndQuery) {
        assertThat(management().send("GET", pathAndQuery, new byte[0]).statusCode()).isEqualTo(400);
        assertThat(management().send("PUT", pathAndQuery, new byte[0]).statusCode()).isEqualTo(400);
    }

    @Test
    void aV0RequestOnTheManagementPortIsCountedWithItsAnswerAndAnActuatorRequestIsNot() {
        String before = scrape();
        assertThat(management().send("GET", "/v0/status", new byte[0]).statusCode()).isEqualTo(400);
        assertThat(management().send("DELETE", "/v0/entity?id=k", new byte[0]).statusCode()).isEqualTo(400);
        assertThat(management().send("GET", "/actuator/health", new byte[0]).statusCode()).isEqualTo(200);

        String after = scrape();
        assertThat(ClientRequestCounts.of(after, "status", 400)).isEqualTo(ClientRequestCounts.of(before, "status", 400) + 1);
        assertThat(ClientRequestCounts.of(after, "delete", 400)).isEqualTo(ClientRequestCounts.of(before, "delete", 400) + 1);
        assertThat(ClientRequestCounts.total(after)).isEqualTo(ClientRequestCounts.total(before) + 2);
    }

    @Test
    void theServerPortKeepsTheV0Api() {
        assertThat(server().send("GET", "/v0/status", new byte[0]).statusCode()).isEqualTo(200);
        assertThat(server().put("k", "v", null)).isEqualTo(201);
        assertThat(server().get("k", null).statusCode()).isEqualTo(200);
    }

    private String scrape() {
        return new String(management().send("GET", "/actuator/prometheus", new byte[0]).body(), StandardCharsets.UTF_8);
    }

    private DhtClient management() {
        return new DhtClient(URI.create("http://localhost:" + managementPort));
    }

    private DhtClient server() {
        return new DhtClient(URI.create("http://localhost:" + serverPort));
    }
}
