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
 * passes the limit. Both become {@link PayloadTooLargeException} (413). Non-blocking.
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
                .onErrorMap(DataBufferLimitException.class, e -> new PayloadTooLargeException(limitBytes));
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
