package dev.dht.api;

import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferLimitException;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.web.reactive.function.BodyExtractors;
import org.springframework.web.reactive.function.server.ServerRequest;
import reactor.core.publisher.Mono;

/**
 * Reads a whole request body into a byte array with an explicit limit (not WebFlux's 256 KiB codec limit).
 * A declared Content-Length over the limit is refused before reading; a chunked body is refused as soon as it
 * passes the limit. Both become {@link PayloadTooLargeException} (413). A body with broken chunk framing fails
 * with {@link BadRequestException} (400; see {@link MalformedBody}), so nothing of it is used. Non-blocking.
 */
public final class RequestBodyReader {
    private static final byte[] EMPTY = new byte[0];

    private final int limitBytes;

    /** @param limitBytes largest body accepted, in bytes */
    public RequestBodyReader(int limitBytes) {
        this.limitBytes = limitBytes;
    }

    /** The body bytes (empty array for an empty body). */
    public Mono<byte[]> read(ServerRequest request) {
        if (request.headers().contentLength().orElse(0) > limitBytes) {
            return Mono.error(new PayloadTooLargeException(limitBytes));
        }
        return DataBufferUtils.join(request.body(BodyExtractors.toDataBuffers()), limitBytes)
                .map(RequestBodyReader::toBytes)
                .defaultIfEmpty(EMPTY)
                .doOnNext(body -> MalformedBody.check(request))
                .onErrorMap(DataBufferLimitException.class, e -> new PayloadTooLargeException(limitBytes));
    }

    /**
     * Reads and drops a body its handler does not use, so that a request whose body turns out malformed (bad
     * chunk framing: a {@link BadRequestException}, 400) fails before the handler acts. Completes at once for
     * a request without a body; the bytes are released as they arrive, whatever their size. Non-blocking.
     */
    public Mono<Void> discard(ServerRequest request) {
        return request.body(BodyExtractors.toDataBuffers()).doOnNext(DataBufferUtils::release)
                .then(Mono.fromRunnable(() -> MalformedBody.check(request)));
    }

    private static byte[] toBytes(DataBuffer buffer) {
        try {
            byte[] bytes = new byte[buffer.readableByteCount()];
            buffer.read(bytes);
            return bytes;
        } finally {
            DataBufferUtils.release(buffer);
        }
    }
}
