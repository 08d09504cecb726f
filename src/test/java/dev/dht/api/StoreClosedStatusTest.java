package dev.dht.api;

import dev.dht.storage.LocalStore;
import dev.dht.testing.SingleNodeSettings;
import dev.dht.testing.SingleNodeTest;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.web.reactive.server.WebTestClient;

/** {@code GET /v0/status} is 200 while the LevelDB store is open and 503 once it is closed (a node of its own). */
@SingleNodeTest
class StoreClosedStatusTest {
    @LocalServerPort
    int port;

    @Autowired
    LocalStore store;

    @Test
    void statusIs200WhileTheStoreIsOpenAnd503AfterItClosed() throws Exception {
        WebTestClient client = SingleNodeSettings.client(port);
        client.get().uri("/v0/status").exchange().expectStatus().isOk().expectBody(String.class).isEqualTo("UP\n");

        store.repository().close();

        client.get().uri("/v0/status").exchange()
                .expectStatus().isEqualTo(503)
                .expectBody(String.class).isEqualTo("DOWN\n");
        client.get().uri("/actuator/health/readiness").exchange().expectStatus().isEqualTo(503).returnResult(Void.class);
    }
}
