package dev.dht.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.dht.testing.SharedNodeTest;
import dev.dht.testing.SingleNodeSettings;
import dev.dht.testing.V0Uri;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Random;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpMethod;
import org.springframework.test.web.reactive.server.EntityExchangeResult;
import org.springframework.test.web.reactive.server.WebTestClient;

/**
 * The single-record v0 API of one node over HTTP: every status code, values, deletes, ids, the default size limit,
 * error bodies, the unit of a TTL.
 */
@SharedNodeTest
class EntityApiTest {
    private static final int DEFAULT_MAX_VALUE_SIZE = 8 * 1024 * 1024;

    @LocalServerPort
    int port;

    private WebTestClient client;

    @BeforeEach
    void connect() {
        client = SingleNodeSettings.client(port, 2 * DEFAULT_MAX_VALUE_SIZE);
    }

    @Test
    void statusIs200WhileTheNodeIsUp() {
        client.get().uri("/v0/status").exchange()
                .expectStatus().isOk()
                .expectBody(String.class).isEqualTo("UP\n");
    }

    @Test
    void putIs201AndGetReturnsTheExactBytes() {
        byte[] value = new byte[256];
        for (int i = 0; i < value.length; i++) {
            value[i] = (byte) i;
        }
        put("every-byte", value).expectStatus().isCreated().returnResult(Void.class);

        assertThat(get("every-byte")).isEqualTo(value);
    }

    @Test
    void emptyValueIsStoredAndReadBackEmptyNot404() {
        put("empty-value", new byte[0]).expectStatus().isCreated().returnResult(Void.class);
        client.put().uri(V0Uri.entity(port, "no-body")).exchange().expectStatus().isCreated().returnResult(Void.class);

        assertThat(get("empty-value")).isEmpty();
        assertThat(get("no-body")).isEmpty();
    }

    @Test
    void overwriteReturnsTheLatestValue() {
        put("overwritten", bytes("first")).expectStatus().isCreated().returnResult(Void.class);
        put("overwritten", bytes("second, longer")).expectStatus().isCreated().returnResult(Void.class);
        put("overwritten", bytes("3")).expectStatus().isCreated().returnResult(Void.class);

        assertThat(get("overwritten")).isEqualTo(bytes("3"));
    }

    @Test
    void deleteIs202ThenGetIs404AndAPutAfterwardsIsVisibleAgain() {
        put("deleted", bytes("soon gone")).expectStatus().isCreated().returnResult(Void.class);

        delete("deleted").expectStatus().isAccepted().returnResult(Void.class);
        getExchange("deleted").expectStatus().isNotFound().returnResult(Void.class);

        put("deleted", bytes("back")).expectStatus().isCreated().returnResult(Void.class);
        assertThat(get("deleted")).isEqualTo(bytes("back"));
    }

    @Test
    void deleteOfAnAbsentKeyIs202AndItStaysAbsent() {
        delete("never-written").expectStatus().isAccepted().returnResult(Void.class);
        delete("never-written").expectStatus().isAccepted().returnResult(Void.class);

        getExchange("never-written").expectStatus().isNotFound().returnResult(Void.class);
    }

    @Test
    void ttlIsInSecondsAValueReadsForItsSecondsAndIsAbsentAfterThem() {
        long started = System.nanoTime();
        client.put().uri(V0Uri.raw(port, "/v0/entity?id=ttl-1&ttl=1")).bodyValue(bytes("one second"))
                .exchange().expectStatus().isCreated().returnResult(Void.class);
        client.put().uri(V0Uri.raw(port, "/v0/entity?id=ttl-5&ttl=5")).bodyValue(bytes("five seconds"))
                .exchange().expectStatus().isCreated().returnResult(Void.class);

        await().atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(100))
                .until(() -> status("ttl-1") == 404);
        assertThat(Duration.ofNanos(System.nanoTime() - started)).as("ttl=1 expired no sooner than a second after")
                .isGreaterThanOrEqualTo(Duration.ofSeconds(1));
        // that a value stays is an absence of expiry, which cannot be awaited: it must read 200 throughout the
        // second after the 1-s value expired, up to at least 2 s after its PUT
        await().during(Duration.ofSeconds(1)).atMost(Duration.ofSeconds(2)).pollInterval(Duration.ofMillis(100))
                .until(() -> status("ttl-5") == 200);
        assertThat(get("ttl-5")).isEqualTo(bytes("five seconds"));
    }

    @Test
    void getOfANeverWrittenKeyIs404() {
        getExchange("nobody-wrote-this").expectStatus().isNotFound().returnResult(Void.class);
    }

    @Test
    void oneMebibyteValueRoundTripsUnderTheDefaultLimit() {
        byte[] value = randomBytes(1024 * 1024, 1);

        put("one-mebibyte", value).expectStatus().isCreated().returnResult(Void.class);

        assertThat(get("one-mebibyte")).isEqualTo(value);
    }

    @Test
    void valueOneByteOverTheDefaultLimitIs413AndNotStored() {
        EntityExchangeResult<String> result = put("too-large", randomBytes(DEFAULT_MAX_VALUE_SIZE + 1, 2))
                .expectStatus().isEqualTo(413)
                .expectBody(String.class).returnResult();

        assertOneLineError(result.getResponseBody());
        assertThat(result.getResponseBody()).contains("dht.max-value-size");
        getExchange("too-large").expectStatus().isNotFound().returnResult(Void.class);
    }

    @ParameterizedTest
    @ValueSource(strings = {
        "with space", "a/b/c", "/leading-slash", "a&b=c", "1+1", "a?b#c", "100%", "%41", "semi;colon", "\"quoted'",
        "ключ", "日本語のキー", "emoji 😀", "ü+é & ß/∑"})
    void percentEncodedIdRoundTripsExactly(String id) {
        byte[] value = bytes("value of " + id);

        put(id, value).expectStatus().isCreated().returnResult(Void.class);

        assertThat(get(id)).isEqualTo(value);
        delete(id).expectStatus().isAccepted().returnResult(Void.class);
        getExchange(id).expectStatus().isNotFound().returnResult(Void.class);
    }

    @Test
    void idsOfMoreThanAThousandCharactersRoundTrip() {
        String ascii = "k".repeat(1500);
        String twoByte = "é".repeat(1000);
        String mixed = "a b/c&d+e?ü€😀".repeat(100);

        for (String id : new String[] {ascii, twoByte, mixed}) {
            put(id, bytes("long id of " + id.length() + " chars")).expectStatus().isCreated().returnResult(Void.class);
        }

        assertThat(get(ascii)).isEqualTo(bytes("long id of 1500 chars"));
        assertThat(get(twoByte)).isEqualTo(bytes("long id of 1000 chars"));
        assertThat(get(mixed)).isEqualTo(bytes("long id of " + mixed.length() + " chars"));
        getExchange(ascii.substring(1)).expectStatus().isNotFound().returnResult(Void.class);
    }

    @Test
    void plusAndSpaceAndTheirEncodingsAreDistinctIds() {
        put("a+b", bytes("plus")).expectStatus().isCreated().returnResult(Void.class);
        put("a b", bytes("space")).expectStatus().isCreated().returnResult(Void.class);
        put("a%2Bb", bytes("literal percent")).expectStatus().isCreated().returnResult(Void.class);

        assertThat(get("a+b")).isEqualTo(bytes("plus"));
        assertThat(get("a b")).isEqualTo(bytes("space"));
        assertThat(get("a%2Bb")).isEqualTo(bytes("literal percent"));
    }

    @ParameterizedTest
    @ValueSource(strings = {"/v0/entity", "/v0/entity?id=", "/v0/entity?ids=x", "/v0/entity?id"})
    void missingOrEmptyIdIs400ForEveryMethod(String pathAndQuery) {
        for (HttpMethod method : new HttpMethod[] {HttpMethod.GET, HttpMethod.PUT, HttpMethod.DELETE}) {
            EntityExchangeResult<String> result = client.method(method).uri(V0Uri.raw(port, pathAndQuery)).exchange()
                    .expectStatus().isBadRequest()
                    .expectBody(String.class).returnResult();
            assertOneLineError(result.getResponseBody());
            assertThat(result.getResponseBody()).contains("id");
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {
        "", "x", "1", "1/", "/1", "0/1", "2/1", "1/2", "-1/1", "1/1/1", "a/b", "1.0/1", "99999999999/1"})
    void malformedReplicasIs400AndNothingIsStored(String replicas) {
        String id = "replicas-" + replicas;
        URI put = V0Uri.raw(port,
                "/v0/entity?id=" + V0Uri.percentEncode(id) + "&replicas=" + V0Uri.percentEncode(replicas));

        EntityExchangeResult<String> result = client.put().uri(put).bodyValue(bytes("v")).exchange()
                .expectStatus().isBadRequest()
                .expectBody(String.class).returnResult();
        assertOneLineError(result.getResponseBody());
        client.get().uri(put).exchange().expectStatus().isBadRequest().returnResult(Void.class);
        client.delete().uri(put).exchange().expectStatus().isBadRequest().returnResult(Void.class);

        getExchange(id).expectStatus().isNotFound().returnResult(Void.class);
    }

    @Test
    void wellFormedReplicasOfOneNodeAreAccepted() {
        URI uri = V0Uri.raw(port, "/v0/entity?id=replicas-ok&replicas=1/1");

        client.put().uri(uri).bodyValue(bytes("ok")).exchange().expectStatus().isCreated().returnResult(Void.class);
        client.get().uri(uri).exchange().expectStatus().isOk().expectBody(String.class).isEqualTo("ok");
        client.delete().uri(uri).exchange().expectStatus().isAccepted().returnResult(Void.class);
        client.get().uri(uri).exchange().expectStatus().isNotFound().returnResult(Void.class);
    }

    @ParameterizedTest
    @ValueSource(strings = {"/abracadabra", "/", "/v0", "/v0/entityy?id=a", "/v1/entity?id=a", "/v0/entity/a"})
    void unknownPathIs400WithAOneLineBody(String pathAndQuery) {
        for (HttpMethod method : new HttpMethod[] {HttpMethod.GET, HttpMethod.PUT}) {
            EntityExchangeResult<String> result = client.method(method).uri(V0Uri.raw(port, pathAndQuery)).exchange()
                    .expectStatus().isBadRequest()
                    .expectBody(String.class).returnResult();
            assertOneLineError(result.getResponseBody());
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"POST", "PATCH", "OPTIONS"})
    void otherMethodsOnEntityAre405WithAllow(String method) {
        put("method-check", bytes("unchanged")).expectStatus().isCreated().returnResult(Void.class);

        String body = client.method(HttpMethod.valueOf(method)).uri(V0Uri.entity(port, "method-check"))
                .bodyValue(bytes("changed"))
                .exchange()
                .expectStatus().isEqualTo(405)
                .expectHeader().value(HttpHeaders.ALLOW, allow -> assertThat(allow).contains("GET", "PUT", "DELETE"))
                .expectBody(String.class).returnResult().getResponseBody();

        assertOneLineError(body);

        assertThat(get("method-check")).isEqualTo(bytes("unchanged"));
    }

    private WebTestClient.ResponseSpec put(String id, byte[] value) {
        return client.put().uri(V0Uri.entity(port, id)).bodyValue(value).exchange();
    }

    private WebTestClient.ResponseSpec delete(String id) {
        return client.delete().uri(V0Uri.entity(port, id)).exchange();
    }

    private WebTestClient.ResponseSpec getExchange(String id) {
        return client.get().uri(V0Uri.entity(port, id)).exchange();
    }

    private int status(String id) {
        return getExchange(id).returnResult(Void.class).getStatus().value();
    }

    /** GET that must answer 200; returns the body bytes (empty array for an empty body). */
    private byte[] get(String id) {
        byte[] body = getExchange(id).expectStatus().isOk().expectBody(byte[].class).returnResult().getResponseBody();
        return body == null ? new byte[0] : body;
    }

    static void assertOneLineError(String body) {
        assertThat(body).isNotNull().endsWith("\n");
        String line = body.substring(0, body.length() - 1);
        assertThat(line).isNotBlank().doesNotContain("\n", "\r", "\tat ", "Exception").hasSizeLessThan(400);
    }

    private static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    private static byte[] randomBytes(int size, long seed) {
        byte[] bytes = new byte[size];
        new Random(seed).nextBytes(bytes);
        return bytes;
    }
}
