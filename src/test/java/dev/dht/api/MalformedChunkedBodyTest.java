package dev.dht.api;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.dht.peer.InternalProtocol;
import dev.dht.peer.RangeFrameCodec;
import dev.dht.storage.KeyedRecord;
import dev.dht.storage.LocalStore;
import dev.dht.storage.Record;
import dev.dht.testing.DhtClient;
import dev.dht.testing.InProcessCluster;
import dev.dht.testing.RawHttpConnection;
import dev.dht.testing.SingleNodeTest;
import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.net.SocketException;
import java.net.URI;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.web.server.LocalServerPort;

/**
 * A request whose chunked body breaks its framing (a chunk size that is not hex) fails and changes nothing, on
 * every endpoint that takes a body: the client PUT and DELETE, and the internal record and batch writes. Each
 * malformed body comes after well-formed chunks that would make a complete value or record, so a body that
 * ended normally at the framing error (as Reactor Netty ended it before) would be stored. The answer is 400
 * (or the connection is closed), and the node serves the next connection normally.
 */
@SingleNodeTest(properties = "dht.cluster-secret=" + InProcessCluster.SECRET)
class MalformedChunkedBodyTest {
    @LocalServerPort
    int port;

    @Autowired
    LocalStore store;

    @Test
    void aPutWhoseFirstChunkSizeIsNotHexStoresNothing() throws Exception {
        int status = send(put("/v0/entity?id=bad-size-first"), ascii("zz\r\nabc\r\n0\r\n\r\n"));

        assertThat(status).as("400 or closed, was %d", status).isIn(400, -1);
        assertStaysUnchanged("bad-size-first", null);
    }

    @Test
    void aPutWithAValidChunkThenABadSizeStoresNothing() throws Exception {
        int status = send(put("/v0/entity?id=bad-size-second"), ascii("3\r\nabc\r\nzz\r\ndef\r\n0\r\n\r\n"));

        assertThat(status).as("400 or closed, was %d", status).isIn(400, -1);
        assertStaysUnchanged("bad-size-second", null);
    }

    @Test
    void aPutOverAnExistingValueWithABadChunkLeavesTheOldValue() throws Exception {
        assertThat(client().put("kept", "old", null)).isEqualTo(201);

        int status = send(put("/v0/entity?id=kept"), ascii("3\r\nnew\r\nzz\r\n"));

        assertThat(status).isIn(400, -1);
        assertStaysUnchanged("kept", "old");
    }

    @Test
    void aDeleteWithABadChunkLeavesTheValue() throws Exception {
        assertThat(client().put("not-deleted", "still here", null)).isEqualTo(201);

        int status = send("DELETE /v0/entity?id=not-deleted HTTP/1.1\r\nHost: localhost\r\n"
                + "Transfer-Encoding: chunked\r\n\r\n", ascii("1\r\nx\r\nzz\r\n"));

        assertThat(status).isIn(400, -1);
        assertStaysUnchanged("not-deleted", "still here");
    }

    @Test
    void anInternalRecordWriteWithABadChunkStoresNothing() throws Exception {
        byte[] record = Record.value(store.clock().now(), ascii("forged")).encode();

        int status = send(internal("PUT", InternalProtocol.RECORD_PATH + "?id=internal-bad"), chunked(record));

        assertThat(status).isIn(400, -1);
        assertStaysUnchanged("internal-bad", null);
    }

    @Test
    void anInternalBatchWithABadChunkStoresNothing() throws Exception {
        byte[] batch = RangeFrameCodec.encodeBatch(List.of(
                new KeyedRecord(ascii("batch-bad"), Record.value(store.clock().now(), ascii("forged")))));

        int status = send(internal("POST", InternalProtocol.RECORDS_PATH), chunked(batch));

        assertThat(status).isIn(400, -1);
        assertStaysUnchanged("batch-bad", null);
    }

    @Test
    void aMalformedBodyPipelinedBehindAnotherRequestClosesTheConnectionAndStoresNothing() throws Exception {
        assertThat(client().put("pipelined-first", "one", null)).isEqualTo(201);
        try (RawHttpConnection connection = new RawHttpConnection(port)) {
            connection.send("GET /v0/entity?id=pipelined-first HTTP/1.1\r\nHost: localhost\r\n\r\n"
                    + put("/v0/entity?id=pipelined-second") + "3\r\nabc\r\nzz\r\n");

            int first = connection.statusOrClosed();
            assertThat(first).as("the first answer, or a closed connection").isIn(200, -1);
            if (first == 200) {
                assertThat(connection.statusOrClosed()).as("the second request's answer, or a closed connection")
                        .isIn(400, -1);
            }
        }
        assertStaysUnchanged("pipelined-second", null);
    }

    @Test
    void theNodeServesNormallyAfterMalformedBodies() throws Exception {
        for (int i = 0; i < 3; i++) {
            send(put("/v0/entity?id=before-" + i), ascii("zz\r\n"));
        }

        assertThat(client().put("after", "fine", null)).isEqualTo(201);
        assertThat(new String(client().get("after", null).body(), StandardCharsets.UTF_8)).isEqualTo("fine");
    }

    /**
     * What a GET of {@code id} answers (404, or 200 with {@code value}) stays so for a second. A request that went on
     * with a broken body would store it in the background after its answer, within milliseconds: that nothing
     * changes is an absence, which cannot be awaited, so the answer is watched throughout the second (during).
     */
    private void assertStaysUnchanged(String id, String value) {
        await().during(Duration.ofSeconds(1)).atMost(Duration.ofSeconds(2)).pollInterval(Duration.ofMillis(50))
                .untilAsserted(() -> {
                    HttpResponse<byte[]> answer = client().get(id, null);
                    if (value == null) {
                        assertThat(answer.statusCode()).as("GET %s", id).isEqualTo(404);
                    } else {
                        assertThat(new String(answer.body(), StandardCharsets.UTF_8)).as("GET %s", id).isEqualTo(value);
                    }
                });
    }

    /**
     * Sends the head and then the body in a second write, and returns the answer's status, or -1 if the connection
     * was closed without one. An answer must be a one-line 400 naming the malformed body, and the connection must
     * be closed after it (the rest of the bytes cannot be framed).
     */
    private int send(String head, byte[] body) throws Exception {
        try (RawHttpConnection connection = new RawHttpConnection(port)) {
            connection.send(head);
            connection.send(body);
            RawHttpConnection.Response answer;
            try {
                answer = connection.read();
            } catch (EOFException | SocketException e) {
                return -1;
            }
            assertThat(answer.status()).isEqualTo(400);
            assertThat(answer.body()).startsWith("malformed request body: ");
            assertThat(connection.closedByServer()).as("closed after the 400").isTrue();
            return answer.status();
        }
    }

    private static String put(String target) {
        return "PUT " + target + " HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\n";
    }

    private static String internal(String method, String target) {
        return method + " " + target + " HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n"
                + InternalProtocol.SECRET_HEADER + ": " + InProcessCluster.SECRET + "\r\n\r\n";
    }

    /** {@code bytes} as one well-formed chunk, followed by a chunk size that is not hex. */
    private static byte[] chunked(byte[] bytes) {
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        body.writeBytes(ascii(Integer.toHexString(bytes.length) + "\r\n"));
        body.writeBytes(bytes);
        body.writeBytes(ascii("\r\nzz\r\n"));
        return body.toByteArray();
    }

    private DhtClient client() {
        return new DhtClient(URI.create("http://localhost:" + port));
    }

    private static byte[] ascii(String text) {
        return text.getBytes(StandardCharsets.US_ASCII);
    }
}
