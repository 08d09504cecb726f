package dev.dht.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.dht.storage.LocalStore;
import dev.dht.testing.ChunkedResponseReader;
import dev.dht.testing.SingleNodeSettings;
import dev.dht.testing.SingleNodeTest;
import dev.dht.testing.StorageThreadBlocker;
import dev.dht.testing.V0Uri;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.http.HttpHeaders;
import org.springframework.test.web.reactive.server.WebTestClient;

/**
 * A full storage queue answers 503 with Retry-After and changes nothing, except that reads answered from the row
 * cache are still served; once the queue drains the node serves normally. The node has one storage thread and one queue slot; the test occupies the thread with a task that
 * waits for the test and fills the slot with a second task.
 */
@SingleNodeTest(properties = {"dht.storage.threads=1", "dht.storage.queue-capacity=1", "dht.storage.row-cache-size=1MB"})
class StorageOverloadTest {
    @LocalServerPort
    int port;

    @Autowired
    LocalStore store;

    private WebTestClient client;
    private StorageThreadBlocker storage;

    @BeforeEach
    void connect() {
        client = SingleNodeSettings.client(port);
        storage = new StorageThreadBlocker(store);
    }

    @AfterEach
    void releaseStorage() {
        storage.release();
    }

    @Test
    void fullStorageQueueIs503WithRetryAfterAndTheNodeServesNormallyAfterwards() throws Exception {
        put("before", "stored before the overload").expectStatus().isCreated().returnResult(Void.class);
        assertThat(get("before")).as("read once, so in the row cache").isEqualTo("stored before the overload");
        occupyTheStorageThreadAndFillTheQueue();

        String body = put("during", "refused").expectStatus().isEqualTo(503)
                .expectHeader().valueEquals(HttpHeaders.RETRY_AFTER, "1")
                .expectBody(String.class).returnResult().getResponseBody();
        EntityApiTest.assertOneLineError(body);
        client.get().uri(V0Uri.entity(port, "never-written")).exchange()
                .expectStatus().isEqualTo(503).expectHeader().exists(HttpHeaders.RETRY_AFTER);
        assertThat(get("before")).as("a row cache hit needs no storage thread").isEqualTo("stored before the overload");
        client.delete().uri(V0Uri.entity(port, "before")).exchange()
                .expectStatus().isEqualTo(503).expectHeader().exists(HttpHeaders.RETRY_AFTER);
        client.get().uri("/v0/status").exchange().expectStatus().isOk().returnResult(Void.class);

        storage.release();
        awaitEmptyQueue();

        put("after", "stored after the overload").expectStatus().isCreated().returnResult(Void.class);
        assertThat(get("after")).isEqualTo("stored after the overload");
        assertThat(get("before")).isEqualTo("stored before the overload");
        client.get().uri(V0Uri.entity(port, "during")).exchange().expectStatus().isNotFound().returnResult(Void.class);
        assertThat(ChunkedResponseReader.chunksOf(V0Uri.entities(port, "a", null)))
                .extracting(chunk -> new String(chunk, StandardCharsets.UTF_8))
                .containsExactly("after\nstored after the overload", "before\nstored before the overload");
        assertThat(store.scheduler().rejections()).isGreaterThanOrEqualTo(3);
    }

    @Test
    void rangeRequestDuringOverloadIs503() throws Exception {
        occupyTheStorageThreadAndFillTheQueue();

        client.get().uri(V0Uri.entities(port, "a", null)).exchange()
                .expectStatus().isEqualTo(503)
                .expectHeader().valueEquals(HttpHeaders.RETRY_AFTER, "1");

        storage.release();
        awaitEmptyQueue();
        client.get().uri(V0Uri.entities(port, "a", null)).exchange().expectStatus().isOk().returnResult(Void.class);
    }

    /** Blocks the single storage thread until released and puts one more task into the one queue slot. */
    private void occupyTheStorageThreadAndFillTheQueue() throws InterruptedException {
        storage.blockOneThread();
        storage.queueOneTask();
        assertThat(store.scheduler().queueDepth()).isEqualTo(1);
    }

    private void awaitEmptyQueue() {
        await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> assertThat(store.scheduler().queueDepth()).isZero());
    }

    private WebTestClient.ResponseSpec put(String id, String value) {
        return client.put().uri(V0Uri.entity(port, id)).bodyValue(value.getBytes(StandardCharsets.UTF_8)).exchange();
    }

    private String get(String id) {
        return client.get().uri(V0Uri.entity(port, id)).exchange()
                .expectStatus().isOk()
                .expectBody(String.class).returnResult().getResponseBody();
    }
}
