package dev.dht.fault;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dht.testing.ConcurrentRequests;
import dev.dht.testing.NodeProcess;
import dev.dht.testing.RawHttpConnection;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Large and slow request bodies against one node process ({@code target/dht.jar}, -Xmx256m, default settings but
 * the idle timeout of the slow case).
 *
 * <p>40 PUTs of 8 MB ({@code dht.max-value-size}) at once, first with Content-Length, then chunked: 320 MB of bodies
 * for a 256 MB heap, whose default {@code dht.max-in-flight-bytes} is a quarter of it. Asserted: every answer 201 or
 * 503 (every 503 with {@code Retry-After}), every key answered 201 reads back byte for byte, every other key 404, no
 * {@code OutOfMemoryError} in the node's log, {@code /v0/status} 200 afterwards. Without the bound the node runs out of
 * heap: writes its own store fails with {@code OutOfMemoryError} are not stored, and connections close without an
 * answer.
 *
 * <p>100 uploads at once whose bodies stop after 3 of 1000 bytes, with {@code server.netty.idle-timeout=5s}. Asserted:
 * each is answered 408 or its connection closed within 30 s, none is stored, no error is logged, and afterwards
 * {@code /v0/status} answers 200 and a PUT and GET round-trip.
 *
 * <p>The figures are printed and written as rows of RELIABILITY.md's "Faults" table ({@link ReliabilityReport}).
 */
class LargeBodiesIT {
    private static final List<String> JVM = List.of("-Xmx256m");
    private static final int BODIES = 40;
    private static final int BODY_BYTES = 8 * 1024 * 1024;
    private static final int SLOW_UPLOADS = 100;
    private static final Duration STARTUP = Duration.ofSeconds(120);
    private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(10)).build();

    @TempDir
    Path dir;

    private NodeProcess node;

    @AfterEach
    void stop() {
        if (node != null) {
            node.close();
        }
    }

    @Test
    void fortyBodiesOf8MbAtOnceAreAnswered201Or503AndExactlyTheAcknowledgedOnesAreStored() throws Exception {
        node = NodeProcess.start(NodeProcess.freePort(), dir.resolve("data"), dir.resolve("node.log"), JVM);
        node.awaitUp(STARTUP);
        List<String> figures = new ArrayList<>();
        for (boolean chunked : new boolean[] {false, true}) {
            String kind = chunked ? "chunked" : "content-length";
            long started = System.nanoTime();
            List<HttpResponse<String>> answers = ConcurrentRequests.releasedTogether(BODIES,
                    i -> send(put(kind + "-" + i, body(i, chunked), chunked)));
            long millis = (System.nanoTime() - started) / 1_000_000;

            Map<Integer, Long> statuses = answers.stream()
                    .collect(Collectors.groupingBy(HttpResponse::statusCode, TreeMap::new, Collectors.counting()));
            figures.add(String.format(Locale.ROOT, "%s: %s in %d ms", kind, statuses, millis));
            System.out.println("[large-bodies] " + figures.get(figures.size() - 1));
            assertThat(statuses.keySet()).as("%s statuses", kind).isSubsetOf(201, 503);
            for (int i = 0; i < BODIES; i++) {
                HttpResponse<String> answer = answers.get(i);
                HttpResponse<byte[]> read = get(kind + "-" + i);
                if (answer.statusCode() == 201) {
                    assertThat(read.statusCode()).as("%s %d acknowledged", kind, i).isEqualTo(200);
                    assertThat(Arrays.equals(read.body(), body(i, chunked))).as("%s %d byte for byte", kind, i).isTrue();
                } else {
                    assertThat(answer.headers().firstValue("Retry-After")).as("%s %d", kind, i).contains("1");
                    assertThat(read.statusCode()).as("%s %d refused, so not stored", kind, i).isEqualTo(404);
                }
            }
        }

        assertThat(node.output()).doesNotContain("OutOfMemoryError");
        assertThat(status()).isEqualTo(200);
        ReliabilityReport.row("large-bodies", "40 PUTs of 8 MB at once, 256 MB heap", String.join("; ", figures),
                "only 201 and 503, every 201 stored, no 503 stored, no OutOfMemoryError");
    }

    @Test
    void aHundredSlowUploadsAtOnceGet408AndTheNodeStaysHealthy() throws Exception {
        node = NodeProcess.start(NodeProcess.freePort(), dir.resolve("data"), dir.resolve("node.log"), JVM,
                "--server.netty.idle-timeout=5s");
        node.awaitUp(STARTUP);
        List<RawHttpConnection> uploads = new ArrayList<>();
        long started = System.nanoTime();
        try {
            for (int i = 0; i < SLOW_UPLOADS; i++) {
                RawHttpConnection upload = new RawHttpConnection(node.port(), Duration.ofSeconds(30));
                uploads.add(upload);
                upload.send("PUT /v0/entity?id=slow-" + i + " HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\nabc");
            }
            List<Integer> answers = ConcurrentRequests.releasedTogether(SLOW_UPLOADS, i -> statusOrClosed(uploads.get(i)));
            long millis = (System.nanoTime() - started) / 1_000_000;

            Map<Integer, Long> statuses = answers.stream()
                    .collect(Collectors.groupingBy(status -> status, TreeMap::new, Collectors.counting()));
            System.out.println("[slow-uploads] " + statuses + " (-1: closed) in " + millis + " ms");
            assertThat(statuses.keySet()).isSubsetOf(408, -1);
            assertThat(status()).isEqualTo(200);
            assertThat(send(put("after-slow-uploads", new byte[] {42}, false)).statusCode()).isEqualTo(201);
            assertThat(get("after-slow-uploads").body()).containsExactly(42);
            for (int i = 0; i < SLOW_UPLOADS; i += 10) {
                assertThat(get("slow-" + i).statusCode()).as("slow-%d", i).isEqualTo(404);
            }
            assertThat(node.output()).doesNotContain(" ERROR ", "OutOfMemoryError");
            ReliabilityReport.row("slow-uploads", "100 bodies stalled at once, 5 s idle timeout",
                    statuses + " (-1: closed) in " + millis + " ms",
                    "408 or closed, none stored, node healthy");
        } finally {
            for (RawHttpConnection upload : uploads) {
                upload.close();
            }
        }
    }

    private static int statusOrClosed(RawHttpConnection upload) {
        try {
            return upload.statusOrClosed();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Body {@code i}: 8 MB of a byte pattern of its own, so a mixed-up value cannot read back as another's. */
    private static byte[] body(int i, boolean chunked) {
        byte[] body = new byte[BODY_BYTES];
        byte seed = (byte) (i * 2 + (chunked ? 1 : 0));
        for (int k = 0; k < body.length; k++) {
            body[k] = (byte) (seed + k % 251);
        }
        return body;
    }

    private HttpRequest put(String id, byte[] value, boolean chunked) {
        HttpRequest.BodyPublisher publisher = chunked
                ? HttpRequest.BodyPublishers.ofInputStream(() -> new ByteArrayInputStream(value))
                : HttpRequest.BodyPublishers.ofByteArray(value);
        return HttpRequest.newBuilder(node.baseUri().resolve("/v0/entity?id=" + id))
                .timeout(Duration.ofSeconds(60)).PUT(publisher).build();
    }

    private HttpResponse<byte[]> get(String id) {
        return send(HttpRequest.newBuilder(node.baseUri().resolve("/v0/entity?id=" + id))
                .timeout(Duration.ofSeconds(60)).build(), HttpResponse.BodyHandlers.ofByteArray());
    }

    private int status() {
        return send(HttpRequest.newBuilder(node.baseUri().resolve("/v0/status")).timeout(Duration.ofSeconds(10)).build())
                .statusCode();
    }

    private static HttpResponse<String> send(HttpRequest request) {
        return send(request, HttpResponse.BodyHandlers.ofString());
    }

    private static <T> HttpResponse<T> send(HttpRequest request, HttpResponse.BodyHandler<T> handler) {
        try {
            return HTTP.send(request, handler);
        } catch (IOException e) {
            throw new UncheckedIOException(request.method() + " " + request.uri() + " failed", e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
