package dev.dht.api;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dht.testing.SingleNodeSettings;
import dev.dht.testing.SingleNodeTest;
import dev.dht.testing.V0Uri;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DefaultDataBufferFactory;
import org.springframework.test.web.reactive.server.WebTestClient;
import reactor.core.publisher.Flux;

/**
 * {@code dht.max-value-size} decides 413, not WebFlux's 256 KiB in-memory limit: with a 300 KiB limit a value of
 * exactly 300 KiB is stored, one byte more is refused, whether sent with Content-Length or chunked.
 */
@SingleNodeTest(properties = "dht.max-value-size=300KB")
class ValueSizeLimitTest {
    private static final int LIMIT = 300 * 1024;

    @LocalServerPort
    int port;

    private WebTestClient client;

    @BeforeEach
    void connect() {
        client = SingleNodeSettings.client(port, 2 * LIMIT);
    }

    @Test
    void valueOfExactlyTheLimitAboveWebFluxsDefaultBufferIsStored() {
        byte[] value = randomBytes(LIMIT, 1);

        client.put().uri(V0Uri.entity(port, "at-limit")).bodyValue(value).exchange().expectStatus().isCreated().returnResult(Void.class);

        byte[] read = client.get().uri(V0Uri.entity(port, "at-limit")).exchange()
                .expectStatus().isOk()
                .expectBody(byte[].class).returnResult().getResponseBody();
        assertThat(read).isEqualTo(value);
    }

    @Test
    void valueOneByteOverTheLimitWithContentLengthIs413AndNotStored() {
        String body = client.put().uri(V0Uri.entity(port, "over-limit")).bodyValue(randomBytes(LIMIT + 1, 2)).exchange()
                .expectStatus().isEqualTo(413)
                .expectBody(String.class).returnResult().getResponseBody();

        EntityApiTest.assertOneLineError(body);
        assertThat(body).contains(String.valueOf(LIMIT), "dht.max-value-size");
        client.get().uri(V0Uri.entity(port, "over-limit")).exchange().expectStatus().isNotFound().returnResult(Void.class);
    }

    @Test
    void chunkedValueOneByteOverTheLimitIs413AndNotStored() {
        Flux<DataBuffer> chunks = Flux.fromIterable(slices(randomBytes(LIMIT + 1, 3), 64 * 1024))
                .map(DefaultDataBufferFactory.sharedInstance::wrap);

        String body = client.put().uri(V0Uri.entity(port, "chunked-over-limit")).body(chunks, DataBuffer.class).exchange()
                .expectStatus().isEqualTo(413)
                .expectBody(String.class).returnResult().getResponseBody();

        EntityApiTest.assertOneLineError(body);
        client.get().uri(V0Uri.entity(port, "chunked-over-limit")).exchange().expectStatus().isNotFound().returnResult(Void.class);
    }

    @Test
    void chunkedValueOfExactlyTheLimitIsStored() {
        byte[] value = randomBytes(LIMIT, 4);
        Flux<DataBuffer> chunks = Flux.fromIterable(slices(value, 50_000))
                .map(DefaultDataBufferFactory.sharedInstance::wrap);

        client.put().uri(V0Uri.entity(port, "chunked-at-limit")).body(chunks, DataBuffer.class).exchange()
                .expectStatus().isCreated().returnResult(Void.class);

        byte[] read = client.get().uri(V0Uri.entity(port, "chunked-at-limit")).exchange()
                .expectStatus().isOk()
                .expectBody(byte[].class).returnResult().getResponseBody();
        assertThat(read).isEqualTo(value);
    }

    private static List<byte[]> slices(byte[] bytes, int size) {
        List<byte[]> slices = new ArrayList<>();
        for (int from = 0; from < bytes.length; from += size) {
            slices.add(Arrays.copyOfRange(bytes, from, Math.min(bytes.length, from + size)));
        }
        return slices;
    }

    private static byte[] randomBytes(int size, long seed) {
        byte[] bytes = new byte[size];
        new Random(seed).nextBytes(bytes);
        return bytes;
    }
}
