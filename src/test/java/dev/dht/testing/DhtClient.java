package dev.dht.testing;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import javax.net.ssl.SSLContext;

/**
 * A blocking v0 client for tests, as course clients use the API: one call per request over HTTP/1.1 (what a node
 * serves; no h2c upgrade offered), the status code and body returned as they came. Ids are percent-encoded as UTF-8.
 */
public final class DhtClient {
    /** How long a request may wait for its answer unless it says otherwise. */
    private static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(10);
    private static final HttpClient HTTP = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5)).build();

    private final URI base;
    private final HttpClient http;

    public DhtClient(URI base) {
        this.base = base;
        this.http = HTTP;
    }

    /** A client of an https {@code base} that makes its TLS connections with {@code tls}. */
    public DhtClient(URI base, SSLContext tls) {
        this.base = base;
        this.http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).connectTimeout(Duration.ofSeconds(5))
                .sslContext(tls).build();
    }

    /** PUT with an optional {@code replicas} ("ack/from", null for the default); returns the status. */
    public int put(String id, byte[] value, String replicas) {
        return send(HttpRequest.newBuilder(entity(id, replicas)).PUT(HttpRequest.BodyPublishers.ofByteArray(value))).statusCode();
    }

    /** PUT of a UTF-8 string value. */
    public int put(String id, String value, String replicas) {
        return put(id, value.getBytes(StandardCharsets.UTF_8), replicas);
    }

    /** GET; the response carries status and body bytes. */
    public HttpResponse<byte[]> get(String id, String replicas) {
        return send(HttpRequest.newBuilder(entity(id, replicas)).GET());
    }

    /** DELETE; returns the status. */
    public int delete(String id, String replicas) {
        return send(HttpRequest.newBuilder(entity(id, replicas)).DELETE()).statusCode();
    }

    /** Any request on a path and query of this node (already encoded). */
    public HttpResponse<byte[]> send(String method, String pathAndQuery, byte[] body) {
        return send(HttpRequest.newBuilder(base.resolve(pathAndQuery))
                .method(method, HttpRequest.BodyPublishers.ofByteArray(body)));
    }

    /** Like {@link #send(String, String, byte[])}, waiting up to {@code timeout} for the answer. */
    public HttpResponse<byte[]> send(String method, String pathAndQuery, byte[] body, Duration timeout) {
        return send(HttpRequest.newBuilder(base.resolve(pathAndQuery)).timeout(timeout)
                .method(method, HttpRequest.BodyPublishers.ofByteArray(body)));
    }

    /** Like {@link #send(String, String, byte[])}, with one extra request header. */
    public HttpResponse<byte[]> send(String method, String pathAndQuery, byte[] body, String header, String value) {
        return send(HttpRequest.newBuilder(base.resolve(pathAndQuery)).header(header, value)
                .method(method, HttpRequest.BodyPublishers.ofByteArray(body)));
    }

    /**
     * A POST to an actuator write operation: {@code json} as the body (none if null), with the cluster secret
     * {@code secret} in {@code X-Dht-Cluster-Secret}.
     */
    public HttpResponse<byte[]> admin(String path, String json, String secret) {
        return admin(path, json, secret, DEFAULT_TIMEOUT);
    }

    /** Like {@link #admin(String, String, String)}, waiting up to {@code timeout} for the answer (a repair may take long). */
    public HttpResponse<byte[]> admin(String path, String json, String secret, Duration timeout) {
        HttpRequest.Builder request = HttpRequest.newBuilder(base.resolve(path))
                .header("X-Dht-Cluster-Secret", secret).timeout(timeout);
        if (json != null) {
            request.header("Content-Type", "application/json");
        }
        return send(request.POST(json == null ? HttpRequest.BodyPublishers.noBody()
                : HttpRequest.BodyPublishers.ofString(json)));
    }

    /**
     * An actuator write of any method ({@code POST}, {@code DELETE}): {@code json} as the body (none if null), with
     * the cluster secret {@code secret} in {@code X-Dht-Cluster-Secret}.
     */
    public HttpResponse<byte[]> admin(String method, String path, String json, String secret) {
        return admin(method, path, json, secret, DEFAULT_TIMEOUT);
    }

    /** Like {@link #admin(String, String, String, String)}, waiting up to {@code timeout} for the answer. */
    public HttpResponse<byte[]> admin(String method, String path, String json, String secret, Duration timeout) {
        HttpRequest.Builder request = HttpRequest.newBuilder(base.resolve(path))
                .header("X-Dht-Cluster-Secret", secret).timeout(timeout);
        if (json != null) {
            request.header("Content-Type", "application/json");
        }
        return send(request.method(method, json == null ? HttpRequest.BodyPublishers.noBody()
                : HttpRequest.BodyPublishers.ofString(json)));
    }

    /** Base URL of the node this client talks to. */
    public URI base() {
        return base;
    }

    private URI entity(String id, String replicas) {
        String query = "id=" + URLEncoder.encode(id, StandardCharsets.UTF_8).replace("+", "%20")
                + (replicas == null ? "" : "&replicas=" + replicas);
        return base.resolve("/v0/entity?" + query);
    }

    /** Sends {@code request}, with {@link #DEFAULT_TIMEOUT} unless it has a timeout of its own. */
    private HttpResponse<byte[]> send(HttpRequest.Builder request) {
        HttpRequest built = request.build();
        if (built.timeout().isEmpty()) {
            built = request.timeout(DEFAULT_TIMEOUT).build();
        }
        try {
            return http.send(built, HttpResponse.BodyHandlers.ofByteArray());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }
}
