package dev.dht.admission;

import io.netty.channel.Channel;
import io.netty.util.AttributeKey;
import org.springframework.http.server.reactive.ServerHttpRequestDecorator;
import org.springframework.web.reactive.function.server.ServerRequest;
import reactor.netty.Connection;

/**
 * The mark of a connection whose request body broke its framing (a chunk size that is not hex, a missing CRLF),
 * set by {@link AdmissionHandler} and checked by the body reader ({@code dev.dht.http.RequestBodyReader}) once the
 * body has ended.
 *
 * <p>Why a mark: Netty's HTTP codec hands such a body's end on as a part whose decoder result is a failure.
 * Reactor Netty answers that with a 400 of its own but then ends the request's body normally, so the handler
 * would go on with the bytes that had arrived and store them (and fail to answer: "Status and headers already
 * sent"). Failing the body as an error instead goes through Reactor Netty's inbound error path, which delivers
 * the error twice to an unbounded reader and logs the second as dropped. So the handler ends the body normally,
 * marks the connection, and the reader turns the mark into a 400 before anything is used. The connection serves
 * no further request (the codec decodes nothing more on it), so the mark never applies to another request.
 * Runs on the connection's event loop; never blocks.
 */
public final class MalformedBody {
    private static final AttributeKey<String> CAUSE = AttributeKey.valueOf("dht.malformedBody");

    private MalformedBody() {
    }

    /** Marks {@code channel}: the body being read on it is malformed, for the reason {@code cause}. */
    public static void mark(Channel channel, String cause) {
        channel.attr(CAUSE).set(cause);
    }

    /**
     * The mark of the connection of a request whose body has ended: why its body was malformed, or null if it was
     * not (the caller answers 400 then).
     */
    public static String causeOf(ServerRequest request) {
        Object nativeRequest = ServerHttpRequestDecorator.getNativeRequest(request.exchange().getRequest());
        if (nativeRequest instanceof Connection connection) {
            return connection.channel().attr(CAUSE).get();
        }
        return null;
    }
}
