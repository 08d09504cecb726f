package dev.dht.api;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dht.testing.DhtClient;
import dev.dht.testing.RawHttpConnection;
import dev.dht.testing.SharedNodeTest;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.boot.test.web.server.LocalServerPort;

/**
 * Which ids (and range bounds) a node accepts: distinct percent-encoded byte strings are never one key. Bytes that
 * are not UTF-8 are refused (400) instead of being read as U+FFFD, raw bytes outside ASCII in the request line are
 * refused, a valid encoding of U+FFFD stays a key of its own, control characters are refused, and a malformed
 * percent-encoding is a 400, not a 500.
 */
@SharedNodeTest
class KeyEncodingTest {
    @LocalServerPort
    int port;

    @Test
    void anIdThatIsNotUtf8IsRefusedAndNotReadableThroughAnotherId() {
        HttpResponse<byte[]> put = send("PUT", "/v0/entity?id=%ff", "value of ff");

        assertThat(put.statusCode()).isEqualTo(400);
        assertThat(text(put)).isEqualTo("'id' is not UTF-8: its percent-encoded bytes must be valid UTF-8 and every"
                + " other byte ASCII\n");
        assertThat(send("GET", "/v0/entity?id=%fe", "").statusCode()).isEqualTo(400);
        assertThat(send("GET", "/v0/entity?id=%EF%BF%BD", "").statusCode()).as("nothing stored under U+FFFD")
                .isEqualTo(404);
    }

    @Test
    void aValidlyEncodedReplacementCharacterIsAKeyOfItsOwn() {
        assertThat(send("PUT", "/v0/entity?id=%EF%BF%BD", "replacement").statusCode()).isEqualTo(201);

        assertThat(text(send("GET", "/v0/entity?id=%EF%BF%BD", ""))).isEqualTo("replacement");
        assertThat(send("GET", "/v0/entity?id=%ff", "").statusCode()).isEqualTo(400);
        assertThat(send("GET", "/v0/entity?id=a%EF%BF%BDb", "").statusCode()).isEqualTo(404);
    }

    @ParameterizedTest
    @ValueSource(strings = {"%ff", "a%fe", "%C0%AF", "%ED%A0%80", "%F4%90%80%80", "%E2%82", "%EF%BF%BD%ff"})
    void idsWhoseBytesAreNotUtf8Are400OnEveryMethod(String id) {
        for (String method : new String[] {"PUT", "GET", "DELETE"}) {
            assertThat(send(method, "/v0/entity?id=" + id, "x").statusCode()).as("%s id=%s", method, id).isEqualTo(400);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"%00", "a%0Ab", "%0D", "%09", "%1F", "%7F"})
    void idsWithControlCharactersAre400(String id) {
        HttpResponse<byte[]> put = send("PUT", "/v0/entity?id=" + id, "x");

        assertThat(put.statusCode()).as("id=%s", id).isEqualTo(400);
        assertThat(text(put)).contains("control character");
    }

    @ParameterizedTest
    @ValueSource(strings = {"start=%ff", "start=a&end=%fe", "start=%0A", "start=a&end=b%00"})
    void rangeBoundsFollowTheSameRule(String query) {
        assertThat(send("GET", "/v0/entities?" + query, "").statusCode()).as(query).isEqualTo(400);
    }

    @ParameterizedTest
    @ValueSource(strings = {"%zz", "%", "a%f", "%%41", "%g0"})
    void aMalformedPercentEncodingIs400(String id) {
        int status = sendRaw(("PUT /v0/entity?id=" + id + " HTTP/1.1\r\nHost: localhost\r\nContent-Length: 1\r\n\r\nx")
                .getBytes(StandardCharsets.US_ASCII));

        assertThat(status).as("id=%s", id).isEqualTo(400);
    }

    @Test
    void rawBytesOutsideAsciiInTheRequestLineAreRefused() {
        byte[] head = "PUT /v0/entity?id=caf\u00e9 HTTP/1.1\r\nHost: localhost\r\nContent-Length: 1\r\n\r\nx"
                .getBytes(StandardCharsets.ISO_8859_1);

        int status = sendRaw(head);

        assertThat(status).as("400 or closed").isIn(400, -1);
        assertThat(send("GET", "/v0/entity?id=caf%C3%A9", "").statusCode()).as("not stored as U+00E9").isEqualTo(404);
    }

    @Test
    void validUtf8IdsOutsideAsciiStillWork() {
        assertThat(send("PUT", "/v0/entity?id=caf%C3%A9%20%E2%9C%93%F0%9F%98%80", "accents").statusCode())
                .isEqualTo(201);

        assertThat(text(send("GET", "/v0/entity?id=caf%C3%A9%20%E2%9C%93%F0%9F%98%80", ""))).isEqualTo("accents");
        assertThat(text(send("GET", "/v0/entity?id=caf%c3%a9+%e2%9c%93%f0%9f%98%80", "")))
                .as("lower-case escapes and '+' for a space spell the same key").isEqualTo("accents");
    }

    @Test
    void anEncodedParameterNameIsCheckedToo() {
        assertThat(send("PUT", "/v0/entity?i%64=%ff", "x").statusCode()).isEqualTo(400);
        assertThat(send("PUT", "/v0/entity?i%64=%EF%BF%BD%EF%BF%BD", "x").statusCode()).isEqualTo(201);
    }

    private HttpResponse<byte[]> send(String method, String pathAndQuery, String body) {
        return new DhtClient(URI.create("http://localhost:" + port))
                .send(method, pathAndQuery, body.getBytes(StandardCharsets.UTF_8));
    }

    /** Sends {@code request} as it is on a new connection; the answer's status, or -1 if the connection closed. */
    private int sendRaw(byte[] request) {
        try (RawHttpConnection connection = new RawHttpConnection(port)) {
            connection.send(request);
            return connection.statusOrClosed();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static String text(HttpResponse<byte[]> response) {
        return new String(response.body(), StandardCharsets.UTF_8);
    }
}
