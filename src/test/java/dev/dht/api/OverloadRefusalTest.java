package dev.dht.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.dht.admission.AdmissionControl;
import dev.dht.storage.LocalStore;
import dev.dht.testing.RawHttpConnection.Response;
import dev.dht.testing.RawHttpConnection;
import dev.dht.testing.SingleNodeTest;
import dev.dht.testing.StorageThreadBlocker;
import dev.dht.testing.V0Uri;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.web.server.LocalServerPort;

/**
 * A real node refusing client requests over its in-flight limit (one), as a client on one keep-alive connection
 * sees it: 503 with Retry-After at once, a refused body sent in parts does not break the connection, a refusal
 * behind a pipelined request that is being served (an internal one, which is not limited) comes after that
 * request's answer, nothing refused is
 * stored, the connection serves normally once the node has room again, and the refusals are counted. A PUT
 * waiting for the one storage thread, which the test blocks, holds the in-flight slot (a 60-s replica timeout
 * keeps it from being answered 504 meanwhile).
 */
@SingleNodeTest(properties = {"dht.max-in-flight-requests=1", "dht.storage.threads=1", "dht.replica-timeout=60s"})
class OverloadRefusalTest {
    @LocalServerPort
    int port;

    @Autowired
    LocalStore store;

    @Autowired
    AdmissionControl admission;

    private StorageThreadBlocker storage;

    @BeforeEach
    void blocker() {
        storage = new StorageThreadBlocker(store);
    }

    @AfterEach
    void releaseStorage() {
        storage.release();
    }

    @Test
    void requestsOverTheLimitAre503AtOnceAndTheConnectionServesNormallyAfterwards() throws Exception {
        CompletableFuture<HttpResponse<String>> held = holdTheOnlySlot();
        try (RawHttpConnection connection = new RawHttpConnection(port)) {
            connection.send("PUT /v0/entity?id=refused HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\n"
                    + "5\r\nfirst\r\n");
            Response refusal = connection.read();
            assertThat(refusal.status()).isEqualTo(503);
            assertThat(refusal.header("Retry-After")).isEqualTo("1");
            assertThat(refusal.body()).isEqualTo("overloaded: more than 1 requests in flight, retry later\n");
            EntityApiTest.assertOneLineError(refusal.body());
            connection.send("8\r\n, second\r\n0\r\n\r\n");

            // an internal request is not limited; without the cluster secret it is answered 403, with no storage work
            connection.send("GET /internal/record?id=x HTTP/1.1\r\nHost: localhost\r\n\r\n"
                    + "GET /v0/entity?id=refused HTTP/1.1\r\nHost: localhost\r\n\r\n");
            assertThat(connection.read().status()).as("the request being served is answered first").isEqualTo(403);
            assertThat(connection.read().status()).as("then the one refused behind it").isEqualTo(503);

            storage.release();
            assertThat(held.get(30, TimeUnit.SECONDS).statusCode()).isEqualTo(201);
            awaitNoneInFlight();

            connection.send("GET /v0/entity?id=refused HTTP/1.1\r\nHost: localhost\r\n\r\n");
            assertThat(connection.read().status()).as("the refused PUT stored nothing").isEqualTo(404);
            connection.send("PUT /v0/entity?id=after HTTP/1.1\r\nHost: localhost\r\nContent-Length: 5\r\n\r\nvalue");
            assertThat(connection.read().status()).isEqualTo(201);
            connection.send("GET /v0/entity?id=after HTTP/1.1\r\nHost: localhost\r\n\r\n");
            Response read = connection.read();
            assertThat(read.status()).isEqualTo(200);
            assertThat(read.body()).isEqualTo("value");

            connection.send("GET /actuator/prometheus HTTP/1.1\r\nHost: localhost\r\n\r\n");
            assertThat(connection.read().body())
                    .containsPattern("(?m)dht_client_requests_seconds_count\\{[^}]*operation=\"put\"[^}]*status=\"503\"[^}]*} 1(\\.0)?$")
                    .containsPattern("(?m)dht_client_requests_seconds_count\\{[^}]*operation=\"get\"[^}]*status=\"503\"[^}]*} 1(\\.0)?$");
        }
    }

    @Test
    void aRefusalOfARequestThatAsksToCloseClosesTheConnection() throws Exception {
        CompletableFuture<HttpResponse<String>> held = holdTheOnlySlot();
        try (RawHttpConnection connection = new RawHttpConnection(port)) {
            connection.send("DELETE /v0/entity?id=held HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
            Response refusal = connection.read();
            assertThat(refusal.status()).isEqualTo(503);
            assertThat(refusal.header("Connection")).isEqualTo("close");
            assertThat(connection.closedByServer()).isTrue();
        }
        storage.release();
        assertThat(held.get(30, TimeUnit.SECONDS).statusCode()).isEqualTo(201);
    }

    @Test
    void theStatusCheckIsServedWhileClientRequestsAreRefused() throws Exception {
        CompletableFuture<HttpResponse<String>> held = holdTheOnlySlot();
        try (RawHttpConnection connection = new RawHttpConnection(port)) {
            connection.send("DELETE /v0/entity?id=held HTTP/1.1\r\nHost: localhost\r\n\r\n");
            assertThat(connection.read().status()).as("a client request is refused").isEqualTo(503);
            connection.send("GET /v0/status HTTP/1.1\r\nHost: localhost\r\n\r\n");
            Response status = connection.read();
            assertThat(status.status()).as("the status check reports health, not load").isEqualTo(200);
            assertThat(status.body()).isEqualTo("UP\n");
        }
        storage.release();
        assertThat(held.get(30, TimeUnit.SECONDS).statusCode()).isEqualTo(201);
    }

    /** Blocks the storage thread and sends a PUT, which then waits for it holding the one slot. */
    private CompletableFuture<HttpResponse<String>> holdTheOnlySlot() throws InterruptedException {
        storage.blockOneThread();
        CompletableFuture<HttpResponse<String>> held = HttpClient.newHttpClient().sendAsync(
                HttpRequest.newBuilder(V0Uri.entity(port, "held")).timeout(Duration.ofSeconds(60))
                        .PUT(HttpRequest.BodyPublishers.ofString("held")).build(),
                HttpResponse.BodyHandlers.ofString());
        await().atMost(Duration.ofSeconds(3)).pollInterval(Duration.ofMillis(10)).untilAsserted(() ->
                assertThat(admission.inFlight()).as("the PUT waiting for storage holds the slot").isEqualTo(1));
        return held;
    }

    private void awaitNoneInFlight() {
        await().atMost(Duration.ofSeconds(3)).pollInterval(Duration.ofMillis(10)).untilAsserted(() ->
                assertThat(admission.inFlight()).isZero());
    }
}
