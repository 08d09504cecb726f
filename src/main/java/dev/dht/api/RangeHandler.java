package dev.dht.api;

import dev.dht.cluster.Membership;
import dev.dht.failure.OverloadReason;
import dev.dht.failure.OverloadedException;
import dev.dht.http.BadRequestException;
import dev.dht.replication.RangeCoordinator;
import dev.dht.storage.KeyedRecord;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.core.io.buffer.DataBufferFactory;
import org.springframework.core.io.buffer.DefaultDataBufferFactory;
import org.springframework.http.MediaType;
import org.springframework.web.reactive.function.BodyInserters;
import org.springframework.web.reactive.function.server.ServerRequest;
import org.springframework.web.reactive.function.server.ServerResponse;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * {@code GET /v0/entities?start=S[&end=E]}: 200 with a chunked body, one chunk {@code key\nvalue} per live key
 * of the whole cluster in {@code [start, end)}, in unsigned byte order of the keys' UTF-8 form, newest value
 * each; tombstones are skipped ({@link RangeCoordinator}).
 *
 * <p>Streams with backpressure: records are read only as fast as the client consumes them, so memory stays
 * bounded whatever the size of the range. If a node cannot serve its part, or the range runs on too long after a
 * membership change replaced the view it started under, the answer is 504 before the first byte, or a body cut off
 * without its terminating chunk after it. Replication parameters are not supported on
 * ranges (400). A node that is no member of the cluster (joining, or left) answers 503.
 */
public final class RangeHandler {
    private static final DataBufferFactory BUFFERS = DefaultDataBufferFactory.sharedInstance;

    private final RangeCoordinator coordinator;
    private final Membership membership;

    /** @param membership whether this node may serve ranges: only as a member */
    public RangeHandler(RangeCoordinator coordinator, Membership membership) {
        this.coordinator = coordinator;
        this.membership = membership;
    }

    /**
     * Streams the range; 400 for a missing/empty start, an empty end, a start or end that is not a valid key
     * ({@link RequestParameters#optionalKey}), replication parameters or a ttl.
     */
    public Mono<ServerResponse> stream(ServerRequest request) {
        String start = RequestParameters.requiredKey(request, "start");
        String end = RequestParameters.optionalKey(request, "end").orElse(null);
        for (String unsupported : new String[] {"replicas", "ack", "from", "ttl"}) {
            if (request.queryParam(unsupported).isPresent()) {
                throw new BadRequestException("'" + unsupported + "' is not supported on /v0/entities");
            }
        }
        if (!membership.isMember()) {
            throw new OverloadedException(OverloadReason.NOT_A_MEMBER, "this node is no member of the cluster");
        }
        if (!membership.isViewConfirmed()) {
            throw new OverloadedException(OverloadReason.VIEW_CHECK, "this node checks its cluster view with the "
                    + "other members after a start or a pause before it serves");
        }
        Flux<DataBuffer> chunks = coordinator.range(start, end).map(RangeHandler::chunk);
        return ServerResponse.ok()
                .contentType(MediaType.APPLICATION_OCTET_STREAM)
                .body(BodyInserters.fromDataBuffers(chunks));
    }

    private static DataBuffer chunk(KeyedRecord entry) {
        byte[] key = entry.key();
        byte[] value = entry.record().value();
        DataBuffer buffer = BUFFERS.allocateBuffer(key.length + 1 + value.length);
        buffer.write(key);
        buffer.write((byte) '\n');
        buffer.write(value);
        return buffer;
    }
}
