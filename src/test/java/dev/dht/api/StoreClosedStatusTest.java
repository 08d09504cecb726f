package dev.dht.api;

import dev.dht.testing.SingleNodeSettings;
import dev.dht.storage.LocalStore;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.test.web.reactive.server.WebTestClient;

/** {@code GET /v0/status} is 200 while the LevelDB store is open and 503 once it is closed (a node of its own). */
@SpringBootTest(webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT)
@DirtiesContext
class StoreClosedStatusTest {
    @TempDir
    static Path dataDir;

    @LocalServerPort
    int port;

    @Autowired
    LocalStore store;

    @DynamicPropertySource
    static void settings(DynamicPropertyRegistry registry) {
        SingleNodeSettings.register(registry, dataDir);
    }

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
