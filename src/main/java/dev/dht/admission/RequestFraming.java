package dev.dht.admission;

import io.netty.handler.codec.DecoderResult;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpHeaderValues;
import io.netty.handler.codec.http.HttpRequest;
import java.util.List;

/**
 * Refuses request heads that Netty's codec accepts but this node does not serve: a version other than HTTP/1.x
 * (the codec lets {@code HTTP/3.0} through), and a {@code Transfer-Encoding} other than exactly one
 * {@code chunked} (the codec decodes {@code gzip, chunked} as chunked and ignores the gzip). Such a request is
 * marked as failed to decode, so Reactor Netty answers it 400 and closes the connection, and no handler sees it.
 * The codec already refuses the other smuggling shapes (Content-Length with Transfer-Encoding, differing or
 * malformed Content-Lengths, obs-fold, HTTP/1.0 with Transfer-Encoding). Runs on the connection's event loop;
 * never blocks.
 */
final class RequestFraming {

    private RequestFraming() {
    }

    /**
     * Marks {@code request} failed (400) if it is not HTTP/1.x or carries a Transfer-Encoding other than exactly one
     * "chunked".
     */
    static void check(HttpRequest request) {
        if (request.decoderResult().isFailure()) {
            return;
        }
        if (request.protocolVersion().majorVersion() != 1) {
            request.setDecoderResult(DecoderResult.failure(new IllegalArgumentException(
                    "unsupported version " + request.protocolVersion() + ": only HTTP/1.x is served")));
            return;
        }
        if (!request.headers().contains(HttpHeaderNames.TRANSFER_ENCODING)) {
            return;
        }
        List<String> codings = request.headers().getAll(HttpHeaderNames.TRANSFER_ENCODING);
        if (codings.size() != 1 || !HttpHeaderValues.CHUNKED.contentEqualsIgnoreCase(codings.get(0).strip())) {
            request.setDecoderResult(DecoderResult.failure(new IllegalArgumentException(
                    "unsupported Transfer-Encoding " + codings + ": only chunked is accepted")));
        }
    }
}
