package dev.dht.gatling;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpMethod;
import io.netty.handler.codec.http.QueryStringDecoder;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;
import reactor.netty.http.server.HttpServerRequest;
import reactor.netty.http.server.HttpServerResponse;

/**
 * The ceiling every load result is compared with: a bare Reactor Netty HTTP server that answers the v0 requests
 * the tapes send ({@code /v0/entity} GET/PUT/DELETE, {@code /v0/status}) with the statuses of the real node, but
 * does no storage work. It remembers only which keys it saw and the length of their last value (not the bytes),
 * so a GET of a written key gets 200 with a body of that length and any other key 404.
 *
 * <p>Usage: {@code java -cp ... dev.dht.gatling.BaselineServer [--port=8080] [--host=127.0.0.1]}. Runs until
 * it is stopped (SIGTERM or Ctrl-C).
 */
public final class BaselineServer {
    /** The largest value accepted, as {@code dht.max-value-size} by default; larger bodies get 413. */
    static final int MAX_VALUE_BYTES = 8 * 1024 * 1024;

    /** The body bytes of every 200 answer: a slice of this shared, never written array. */
    private static final byte[] ZEROS = new byte[MAX_VALUE_BYTES];

    private final Map<String, Integer> valueLengths = new ConcurrentHashMap<>();

    /** Starts the server and blocks until it is stopped; see the class comment for the arguments. */
    public static void main(String[] args) {
        int port = 8080;
        String host = "127.0.0.1";
        for (String arg : args) {
            if (arg.startsWith("--port=")) {
                port = Integer.parseInt(arg.substring("--port=".length()));
            } else if (arg.startsWith("--host=")) {
                host = arg.substring("--host=".length());
            } else {
                throw new IllegalArgumentException("unknown argument '" + arg + "'; expected --port=N or --host=H");
            }
        }
        DisposableServer server = new BaselineServer().start(host, port);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> server.disposeNow(Duration.ofSeconds(5)),
                "baseline-shutdown"));
        System.out.println("baseline server on http://" + host + ":" + server.port() + " (Ctrl-C stops it)");
        server.onDispose().block();
    }

    /** Binds the server on {@code host:port} (port 0: any free port) and returns at once. */
    DisposableServer start(String host, int port) {
        return HttpServer.create()
                .host(host)
                .port(port)
                // long percent-encoded ids must fit in the request line, as on the real node
                .httpRequestDecoder(spec -> spec.maxInitialLineLength(64 * 1024))
                .handle(this::handle)
                .bindNow();
    }

    private Publisher<Void> handle(HttpServerRequest request, HttpServerResponse response) {
        String path = "/" + request.path();
        if (path.equals("/v0/status")) {
            return request.method().equals(HttpMethod.GET)
                    ? text(response, 200, "UP")
                    : text(response.header(HttpHeaderNames.ALLOW, "GET"), 405, "method not allowed");
        }
        if (!path.equals("/v0/entity")) {
            return text(response, 400, "unknown path " + path);
        }
        List<String> ids = new QueryStringDecoder(request.uri()).parameters().get("id");
        String id = ids == null ? "" : ids.get(0);
        HttpMethod method = request.method();
        if (!method.equals(HttpMethod.GET) && !method.equals(HttpMethod.PUT) && !method.equals(HttpMethod.DELETE)) {
            return text(response.header(HttpHeaderNames.ALLOW, "GET, PUT, DELETE"), 405,
                    "method " + method + " not allowed on /v0/entity");
        }
        if (id.isEmpty()) {
            return text(response, 400, "missing or empty parameter 'id'");
        }
        if (method.equals(HttpMethod.GET)) {
            Integer length = valueLengths.get(id);
            if (length == null) {
                return response.status(404).header(HttpHeaderNames.CONTENT_LENGTH, "0").send();
            }
            ByteBuf body = Unpooled.wrappedBuffer(ZEROS, 0, length);
            return response.status(200)
                    .header(HttpHeaderNames.CONTENT_TYPE, "application/octet-stream")
                    .header(HttpHeaderNames.CONTENT_LENGTH, Integer.toString(length))
                    .send(Mono.just(body));
        }
        if (method.equals(HttpMethod.DELETE)) {
            valueLengths.remove(id);
            return response.status(202).header(HttpHeaderNames.CONTENT_LENGTH, "0").send();
        }
        // PUT: count the body's bytes as they arrive; Reactor Netty releases each buffer after this step
        return request.receive()
                .map(ByteBuf::readableBytes)
                .reduce(0, Integer::sum)
                .flatMap(length -> {
                    if (length > MAX_VALUE_BYTES) {
                        return Mono.from(text(response, 413, "value larger than " + MAX_VALUE_BYTES + " bytes"));
                    }
                    valueLengths.put(id, length);
                    return Mono.from(response.status(201).header(HttpHeaderNames.CONTENT_LENGTH, "0").send());
                });
    }

    private static Publisher<Void> text(HttpServerResponse response, int status, String message) {
        byte[] body = (message + "\n").getBytes(StandardCharsets.UTF_8);
        return response.status(status)
                .header(HttpHeaderNames.CONTENT_TYPE, "text/plain")
                .header(HttpHeaderNames.CONTENT_LENGTH, Integer.toString(body.length))
                .send(Mono.just(Unpooled.wrappedBuffer(body)));
    }
}
