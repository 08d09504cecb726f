package dev.dht.admission;

import dev.dht.failure.OverloadedException;
import io.netty.channel.Channel;
import io.netty.handler.codec.http.HttpHeaders;
import io.netty.util.AttributeKey;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.Map;
import org.springframework.http.server.reactive.ServerHttpRequestDecorator;
import org.springframework.web.reactive.function.server.ServerRequest;
import reactor.netty.Connection;
import reactor.netty.http.server.HttpServerRequest;

/**
 * The mark of a request whose chunked body {@link AdmissionHandler} refused part-way because {@link BodyMemory}
 * had no room for its next part: the handler ends the body there (the rest is read and dropped) and marks the
 * request, and the body reader ({@code dev.dht.http.RequestBodyReader}) turns the mark into the refusal (503 with
 * {@code Retry-After}) once the body has ended, before anything of it is used. The same way as
 * {@link MalformedBody}, except that the connection stays open, so the mark belongs to the request, not the
 * connection: it is keyed by the identity of the request's Netty headers, which Reactor Netty hands on as the
 * request's own ({@link HttpServerRequest#requestHeaders()}), and cleared when the request ends.
 *
 * <p>Marked and cleared on the connection's event loop; read from the reader's thread. Never blocks.
 */
public final class RefusedBody {
    private static final AttributeKey<Map<HttpHeaders, OverloadedException>> REFUSED =
            AttributeKey.valueOf("dht.refusedBody");

    private RefusedBody() {
    }

    /** Marks the request with {@code headers} on {@code channel}: its body was cut short by {@code refusal}. */
    static void mark(Channel channel, HttpHeaders headers, OverloadedException refusal) {
        Map<HttpHeaders, OverloadedException> marks = channel.attr(REFUSED).get();
        if (marks == null) {
            marks = Collections.synchronizedMap(new IdentityHashMap<>());
            channel.attr(REFUSED).set(marks);
        }
        marks.put(headers, refusal);
    }

    /** Clears the mark of the request with {@code headers}, if any: the request has ended. */
    static void clear(Channel channel, HttpHeaders headers) {
        Map<HttpHeaders, OverloadedException> marks = channel.attr(REFUSED).get();
        if (marks != null) {
            marks.remove(headers);
        }
    }

    /**
     * The refusal that cut the body of {@code request} short, or null if its body was not refused (the caller
     * answers it, 503 with {@code Retry-After}).
     */
    public static OverloadedException refusalOf(ServerRequest request) {
        Object nativeRequest = ServerHttpRequestDecorator.getNativeRequest(request.exchange().getRequest());
        if (nativeRequest instanceof HttpServerRequest server && nativeRequest instanceof Connection connection) {
            return refusalOf(connection.channel(), server.requestHeaders());
        }
        return null;
    }

    /** The refusal that cut the body of the request with {@code headers} on {@code channel} short, or null. */
    static OverloadedException refusalOf(Channel channel, HttpHeaders headers) {
        Map<HttpHeaders, OverloadedException> marks = channel.attr(REFUSED).get();
        return marks == null ? null : marks.get(headers);
    }
}
