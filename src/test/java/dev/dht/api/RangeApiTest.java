package dev.dht.api;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dht.testing.ChunkedResponseReader;
import dev.dht.testing.SharedNodeTest;
import dev.dht.testing.SingleNodeSettings;
import dev.dht.testing.V0Uri;
import java.io.IOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.web.reactive.server.WebTestClient;

/**
 * {@code GET /v0/entities} of one node (default engine, jni), read chunk by chunk with a raw HTTP/1.1 client:
 * bounds, order, empty values, tombstones, and that every chunk is exactly {@code key\nvalue}.
 * {@link RangeApiJavaEngineTest} runs the same tests on the pure-Java engine.
 */
@SharedNodeTest
class RangeApiTest {
    /** U+10FFFF: its UTF-8 form (F4 8F BF BF) sorts after every other key written here, for ranges without an end. */
    private static final String LAST_PREFIX = "\uDBFF\uDFFF/";

    @LocalServerPort
    int port;

    private WebTestClient client;

    @BeforeEach
    void connect() {
        client = SingleNodeSettings.client(port);
    }

    @Test
    void emptyRangeIs200ChunkedWithNoChunks() throws IOException {
        put("empty-range-before", "x");
        put("empty-range0", "x");

        URI uri = V0Uri.entities(port, "empty-range/", "empty-range0");
        try (ChunkedResponseReader reader = ChunkedResponseReader.get(uri)) {
            assertThat(reader.status()).isEqualTo(200);
            assertThat(reader.header("Transfer-Encoding")).isEqualToIgnoringCase("chunked");
            assertThat(reader.readAllChunks()).isEmpty();
        }
    }

    @Test
    void rangeFromAKeyToItselfIsEmpty() throws IOException {
        put("self-bound/k", "v");

        assertThat(range("self-bound/k", "self-bound/k")).isEmpty();
    }

    @Test
    void singleKeyIsOneChunk() throws IOException {
        put("single/only", "the value");

        assertChunks(range("single/", "single0"), "single/only\nthe value");
    }

    @Test
    void threeKeysOneWithAnEmptyValueAreThreeChunks() throws IOException {
        put("three/c", "third");
        put("three/a", "first");
        put("three/b", "");

        assertChunks(range("three/", "three0"), "three/a\nfirst", "three/b\n", "three/c\nthird");
    }

    @Test
    void startIsInclusiveAndEndIsExclusive() throws IOException {
        for (String key : new String[] {"bounds/a", "bounds/b", "bounds/bb", "bounds/c", "bounds/d"}) {
            put(key, key.substring(7));
        }

        assertChunks(range("bounds/b", "bounds/d"), "bounds/b\nb", "bounds/bb\nbb", "bounds/c\nc");
        assertChunks(range("bounds/ba", "bounds/c"), "bounds/bb\nbb");
        assertChunks(range("bounds/bb", "bounds/bba"), "bounds/bb\nbb");
        assertChunks(range("bounds/0", "bounds/b"), "bounds/a\na");
        assertThat(range("bounds/d", "bounds/b")).isEmpty();
    }

    @Test
    void withoutEndTheRangeRunsToTheLastKey() throws IOException {
        put(LAST_PREFIX + "a", "1");
        put(LAST_PREFIX + "b", "2");
        put(LAST_PREFIX + "c", "3");

        assertChunks(range(LAST_PREFIX + "b", null), LAST_PREFIX + "b\n2", LAST_PREFIX + "c\n3");
        assertChunks(range(LAST_PREFIX, null), LAST_PREFIX + "a\n1", LAST_PREFIX + "b\n2", LAST_PREFIX + "c\n3");
    }

    @Test
    void tombstonesAreSkipped() throws IOException {
        put("tombstones/a", "1");
        put("tombstones/b", "2");
        put("tombstones/c", "3");
        delete("tombstones/b");
        delete("tombstones/never-written");

        assertChunks(range("tombstones/", "tombstones0"), "tombstones/a\n1", "tombstones/c\n3");

        delete("tombstones/a");
        delete("tombstones/c");
        assertThat(range("tombstones/", "tombstones0")).isEmpty();
    }

    @Test
    void overwrittenKeyAppearsOnceWithItsLatestValue() throws IOException {
        put("overwrite/k", "old");
        put("overwrite/k", "new");

        assertChunks(range("overwrite/", "overwrite0"), "overwrite/k\nnew");
    }

    @Test
    void twoThousandKeysComeInByteOrderEachAsOneChunk() throws IOException {
        List<String> keys = new ArrayList<>();
        for (int i = 0; i < 2000; i++) {
            keys.add("many/" + i);
        }
        List<String> writeOrder = new ArrayList<>(keys);
        Collections.shuffle(writeOrder, new Random(7));
        for (String key : writeOrder) {
            put(key, "value of " + key);
        }

        keys.sort((a, b) -> Arrays.compareUnsigned(utf8(a), utf8(b)));
        assertChunks(range("many/", "many0"), keys.stream().map(key -> key + "\nvalue of " + key).toArray(String[]::new));
    }

    @Test
    void keysComeInUnsignedByteOrderOfTheirUtf8() throws IOException {
        // UTF-8: 7E < C2 80 < C3 A9 < C3 BF < E2 82 AC < EF BF BD < F0 9F 98 80. Java's String order puts the
        // emoji (surrogates D83D DE00) before U+FFFD; a signed byte order would put every non-ASCII key before "A".
        String[] ordered = {"order/A", "order/a", "order/~", "order/\u0080", "order/é", "order/ÿ", "order/€",
            "order/\uFFFD", "order/😀"};
        for (int i = ordered.length - 1; i >= 0; i--) {
            put(ordered[i], String.valueOf(i));
        }

        List<byte[]> chunks = range("order/", "order0");

        String[] expected = new String[ordered.length];
        for (int i = 0; i < ordered.length; i++) {
            expected[i] = ordered[i] + "\n" + i;
        }
        assertChunks(chunks, expected);
        assertChunks(range("order/é", "order/😀"), "order/é\n4", "order/ÿ\n5", "order/€\n6", "order/\uFFFD\n7");
    }

    @Test
    void keysWithReservedCharactersComeBackByteExactly() throws IOException {
        String[] ids = {"special/a b", "special/a&b=c", "special/a+b", "special/a/b", "special/a?b#c", "special/ключ"};
        for (String id : ids) {
            put(id, id.substring(8));
        }

        List<byte[]> chunks = range("special/", "special0");

        List<String> expected = new ArrayList<>();
        for (String id : ids) {
            expected.add(id + "\n" + id.substring(8));
        }
        expected.sort((a, b) -> Arrays.compareUnsigned(utf8(a), utf8(b)));
        assertChunks(chunks, expected.toArray(String[]::new));
    }

    @Test
    void binaryValueIsCarriedByteExactlyAfterTheFirstNewline() throws IOException {
        byte[] value = new byte[256];
        for (int i = 0; i < value.length; i++) {
            value[i] = (byte) (255 - i);
        }
        client.put().uri(V0Uri.entity(port, "binary/k")).bodyValue(value).exchange().expectStatus().isCreated().returnResult(Void.class);

        List<byte[]> chunks = range("binary/", "binary0");

        byte[] expected = new byte["binary/k\n".length() + value.length];
        System.arraycopy(utf8("binary/k\n"), 0, expected, 0, 9);
        System.arraycopy(value, 0, expected, 9, value.length);
        assertThat(chunks).hasSize(1);
        assertThat(chunks.get(0)).isEqualTo(expected);
    }

    @ParameterizedTest
    @ValueSource(strings = {"/v0/entities", "/v0/entities?start=", "/v0/entities?end=z", "/v0/entities?start=a&end=",
        "/v0/entities?start=a&replicas=1/1"})
    void missingOrEmptyStartOrEndOrReplicasIs400(String pathAndQuery) {
        String body = client.get().uri(V0Uri.raw(port, pathAndQuery)).exchange()
                .expectStatus().isBadRequest()
                .expectBody(String.class).returnResult().getResponseBody();

        EntityApiTest.assertOneLineError(body);
    }

    private List<byte[]> range(String start, String end) throws IOException {
        return ChunkedResponseReader.chunksOf(V0Uri.entities(port, start, end));
    }

    private void put(String id, String value) {
        client.put().uri(V0Uri.entity(port, id)).bodyValue(utf8(value)).exchange().expectStatus().isCreated().returnResult(Void.class);
    }

    private void delete(String id) {
        client.delete().uri(V0Uri.entity(port, id)).exchange().expectStatus().isAccepted().returnResult(Void.class);
    }

    /** Chunk by chunk, byte-exact comparison with the UTF-8 form of {@code expected}. */
    private static void assertChunks(List<byte[]> chunks, String... expected) {
        assertThat(chunks)
                .as("chunks %s", chunks.stream().map(chunk -> new String(chunk, StandardCharsets.UTF_8)).toList())
                .usingElementComparator(Arrays::compare)
                .containsExactly(Arrays.stream(expected).map(RangeApiTest::utf8).toArray(byte[][]::new));
    }

    private static byte[] utf8(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }
}
