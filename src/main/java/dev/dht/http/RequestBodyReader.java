package dev.dht.http;

import dev.dht.admission.MalformedBody;
import dev.dht.admission.RefusedBody;
import dev.dht.failure.OverloadedException;
import org.springframework.core.ResolvableType;
import org.springframework.core.codec.ByteArrayDecoder;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferLimitException;
import org.springframework.core.io.buffer.DataBufferUtils;
import org.springframework.web.reactive.function.BodyExtractors;
import org.springframework.web.reactive.function.server.ServerRequest;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Reads a whole request body into a byte array with an explicit limit (not WebFlux's 256 KiB codec limit).
 * A declared Content-Length over the limit is refused before reading; a chunked body is refused as soon as it
 * passes the limit. Both become {@link PayloadTooLargeException} (413). A body with broken chunk framing fails
 * with {@link BadRequestException} (400; see {@link MalformedBody}), and a chunked body that admission control cut
 * short for want of memory with its {@link OverloadedException} (503; see {@link RefusedBody}), so nothing of
 * either is used. Non-blocking.
 */
public final class RequestBodyReader {
    private static final byte[] EMPTY = new byte[0];
    /** Body parts requested from Reactor Netty at a time (each is one network read, at most 8 KiB by default). */
    private static final int BODY_PREFETCH = 32;

    private static final ResolvableType BYTE_ARRAY = ResolvableType.forClass(byte[].class);

    private final int limitBytes;
    /** Joins the body's buffers into one array and releases them; past the limit, fails. */
    private final ByteArrayDecoder bodyBytes = new ByteArrayDecoder();

    /** @param limitBytes largest body accepted, in bytes */
    public RequestBodyReader(int limitBytes) {
        this.limitBytes = limitBytes;
        bodyBytes.setMaxInMemorySize(limitBytes);
    }

    /** The body bytes (empty array for an empty body). */
    public Mono<byte[]> read(ServerRequest request) {
        if (request.headers().contentLength().orElse(0) > limitBytes) {
            return Mono.error(new PayloadTooLargeException(limitBytes));
        }
        return bodyBytes.decodeToMono(body(request), BYTE_ARRAY, null, null)
                .defaultIfEmpty(EMPTY)
                .doOnNext(body -> checkWhole(request))
                .onErrorMap(DataBufferLimitException.class, e -> new PayloadTooLargeException(limitBytes));
    }

    /**
     * Reads and drops a body its handler does not use, so that a request whose body turns out malformed (bad
     * chunk framing: a {@link BadRequestException}, 400) or cut short ({@link OverloadedException}, 503) fails
     * before the handler acts. Completes at once for a request without a body; the bytes are released as they
     * arrive, whatever their size. Non-blocking.
     */
    public Mono<Void> discard(ServerRequest request) {
        return body(request).doOnNext(DataBufferUtils::release)
                .then(Mono.fromRunnable(() -> checkWhole(request)));
    }

    /**
     * The body's parts, requested in bounded rounds: Reactor Netty hands a reader that requests without bound an
     * inbound error (a read timeout, a closed connection) twice, and the second is logged as dropped.
     */
    private static Flux<DataBuffer> body(ServerRequest request) {
        return request.body(BodyExtractors.toDataBuffers()).limitRate(BODY_PREFETCH);
    }

    /**
     * Fails with {@link BadRequestException} (400) if the request's body broke its framing ({@link MalformedBody}),
     * with the {@link OverloadedException} (503) that cut it short if admission control did ({@link RefusedBody}).
     */
    private static void checkWhole(ServerRequest request) {
        String cause = MalformedBody.causeOf(request);
        if (cause != null) {
            throw new BadRequestException("malformed request body: " + cause);
        }
        OverloadedException refusal = RefusedBody.refusalOf(request);
        if (refusal != null) {
            throw refusal;
        }
    }
}
