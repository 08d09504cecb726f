package dev.dht.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.dht.admission.AdmissionControl;
import dev.dht.admission.BodyMemory;
import dev.dht.storage.LocalStore;
import dev.dht.testing.ConcurrentRequests;
import dev.dht.testing.RawHttpConnection;
import dev.dht.testing.SingleNodeTest;
import dev.dht.testing.StorageThreadBlocker;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.test.web.server.LocalServerPort;

/**
 * {@code dht.max-in-flight-bytes} bounds the request bodies a node holds: with room for {@value #ROOM} bodies of
 * {@value #VALUE} bytes, a PUT whose Content-Length has no room gets 503 with {@code Retry-After: 1} before its body
 * is read, and a chunked PUT is cut off and refused 503 when a part of it has no room; nothing refused is stored,
 * every 201 is, and the bytes are given back once the requests are answered, or, for a value whose client hung up,
 * once its write is done. One node, one storage thread, which tests hold so that the admitted PUTs stay in flight.
 */
@ExtendWith(OutputCaptureExtension.class)
@SingleNodeTest(properties = {"dht.max-value-size=256KB", "dht.max-in-flight-bytes=1MB", "dht.storage.threads=1"})
class BodyMemoryLimitTest {
    private static final int VALUE = 256 * 1024;
    private static final int ROOM = 4;
    private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5)).build();

    @LocalServerPort
    int port;

    @Autowired
    BodyMemory memory;

    @Autowired
    LocalStore store;

    @Autowired
    AdmissionControl admission;

    private StorageThreadBlocker storage;

    @AfterEach
    void releaseStorage(CapturedOutput output) {
        if (storage != null) {
            storage.release();
        }
        assertThat(output.getOut()).doesNotContain(" ERROR ");
    }

    @Test
    void bodiesWithoutRoomAre503BeforeTheyAreReadAndNothingRefusedIsStored() throws Exception {
        storage = new StorageThreadBlocker(store);
        storage.blockOneThread();
        List<CompletableFuture<HttpResponse<String>>> admitted = new ArrayList<>();
        for (int i = 0; i < ROOM; i++) {
            admitted.add(HTTP.sendAsync(put("admitted-" + i, value(i), false), HttpResponse.BodyHandlers.ofString()));
        }
        await().atMost(Duration.ofSeconds(30)).until(() -> memory.inFlightBytes() == (long) ROOM * VALUE);

        HttpResponse<String> declared = send(put("declared", value(10), false));
        assertThat(declared.statusCode()).isEqualTo(503);
        assertThat(declared.headers().firstValue("Retry-After")).contains("1");
        EntityApiTest.assertOneLineError(declared.body());
        assertThat(declared.body()).startsWith("overloaded: ").contains("dht.max-in-flight-bytes");
        HttpResponse<String> chunked = send(put("chunked", value(11), true));
        assertThat(chunked.statusCode()).isEqualTo(503);
        assertThat(chunked.headers().firstValue("Retry-After")).contains("1");
        assertThat(chunked.body()).startsWith("overloaded: ").contains("dht.max-in-flight-bytes");
        assertThat(send(get("/v0/status")).statusCode()).isEqualTo(200);

        storage.release();
        for (CompletableFuture<HttpResponse<String>> answer : admitted) {
            assertThat(answer.get().statusCode()).isEqualTo(201);
        }
        for (int i = 0; i < ROOM; i++) {
            assertThat(read("admitted-" + i)).isEqualTo(value(i));
        }
        assertThat(status("declared")).isEqualTo(404);
        assertThat(status("chunked")).isEqualTo(404);
        await().atMost(Duration.ofSeconds(10)).until(() -> memory.inFlightBytes() == 0);
        assertThat(send(put("after", value(12), true)).statusCode()).as("room again").isEqualTo(201);
        assertThat(read("after")).isEqualTo(value(12));
    }

    @Test
    void aValueWhoseClientHungUpStaysCountedUntilItsWriteIsDone() throws Exception {
        storage = new StorageThreadBlocker(store);
        storage.blockOneThread();
        try (RawHttpConnection connection = new RawHttpConnection(port)) {
            connection.send(("PUT /v0/entity?id=hung-up HTTP/1.1\r\nHost: x\r\nContent-Length: " + VALUE
                    + "\r\n\r\n").getBytes(StandardCharsets.US_ASCII));
            connection.send(value(20));
            await().atMost(Duration.ofSeconds(30)).until(() -> store.scheduler().queueDepth() == 1);
        }
        await().atMost(Duration.ofSeconds(30)).until(() -> admission.inFlight() == 0);

        // the request gave its bytes back with its slot; the queued write holds the value and counts it again
        await().atMost(Duration.ofSeconds(10)).until(() -> memory.inFlightBytes() == VALUE);
        storage.release();
        await().atMost(Duration.ofSeconds(30)).until(() -> memory.inFlightBytes() == 0);
        assertThat(read("hung-up")).as("stored although its client went away").isEqualTo(value(20));
    }

    @Test
    void concurrentLargePutsAreAnswered201Or503AndStoredExactlyWhen201() {
        int count = 4 * ROOM;
        List<Integer> statuses = ConcurrentRequests.releasedTogether(count,
                i -> send(put("concurrent-" + i, value(100 + i), i % 2 == 0)).statusCode());

        assertThat(statuses).containsOnly(201, 503);
        for (int i = 0; i < count; i++) {
            if (statuses.get(i) == 201) {
                assertThat(read("concurrent-" + i)).as("key %d", i).isEqualTo(value(100 + i));
            } else {
                assertThat(status("concurrent-" + i)).as("key %d", i).isEqualTo(404);
            }
        }
        await().atMost(Duration.ofSeconds(10)).until(() -> memory.inFlightBytes() == 0);
    }

    private HttpRequest put(String id, byte[] value, boolean chunked) {
        HttpRequest.BodyPublisher body = chunked
                ? HttpRequest.BodyPublishers.ofInputStream(() -> new ByteArrayInputStream(value))
                : HttpRequest.BodyPublishers.ofByteArray(value);
        return HttpRequest.newBuilder(uri("/v0/entity?id=" + id)).timeout(Duration.ofSeconds(60)).PUT(body).build();
    }

    private HttpRequest get(String pathAndQuery) {
        return HttpRequest.newBuilder(uri(pathAndQuery)).timeout(Duration.ofSeconds(60)).build();
    }

    private byte[] read(String id) {
        try {
            HttpResponse<byte[]> answer = HTTP.send(get("/v0/entity?id=" + id), HttpResponse.BodyHandlers.ofByteArray());
            assertThat(answer.statusCode()).as("GET %s", id).isEqualTo(200);
            return answer.body();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private int status(String id) {
        return send(get("/v0/entity?id=" + id)).statusCode();
    }

    private URI uri(String pathAndQuery) {
        return URI.create("http://localhost:" + port + pathAndQuery);
    }

    private static HttpResponse<String> send(HttpRequest request) {
        try {
            return HTTP.send(request, HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private static byte[] value(int seed) {
        byte[] value = new byte[VALUE];
        Arrays.fill(value, (byte) seed);
        value[0] = (byte) (seed >> 8);
        return value;
    }
}
