package dev.dht.api;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dht.testing.DhtClient;
import dev.dht.testing.SharedNodeTest;
import java.net.URI;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.boot.test.web.server.LocalServerPort;

/**
 * The actuator endpoints a node exposes over HTTP: health (with its probes), info and prometheus answer 200; the
 * sensitive ones (environment, beans, settings, dumps, loggers, mappings, metrics by name, shutdown) are not exposed
 * and answer as any unknown path does (400). Other endpoints may be added; these must never be.
 */
@SharedNodeTest
class ActuatorExposureTest {
    @LocalServerPort
    int port;

    @ParameterizedTest
    @ValueSource(strings = {"health", "health/liveness", "health/readiness", "info", "prometheus"})
    void operationalEndpointsAreServed(String endpoint) {
        assertThat(client().send("GET", "/actuator/" + endpoint, new byte[0]).statusCode()).isEqualTo(200);
    }

    @ParameterizedTest
    @ValueSource(strings = {"env", "beans", "configprops", "heapdump", "threaddump", "loggers", "mappings", "metrics",
        "metrics/jvm.memory.max", "caches", "conditions", "scheduledtasks", "shutdown"})
    void sensitiveEndpointsAreNotExposed(String endpoint) {
        assertThat(client().send("GET", "/actuator/" + endpoint, new byte[0]).statusCode()).as(endpoint).isIn(400, 404);
        assertThat(client().send("POST", "/actuator/" + endpoint, new byte[0]).statusCode()).as(endpoint).isIn(400, 404);
    }

    private DhtClient client() {
        return new DhtClient(URI.create("http://localhost:" + port));
    }
}
