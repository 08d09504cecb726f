package dev.dht.peer.server;

import dev.dht.api.RequestParameters;
import dev.dht.node.RebuildGate;
import dev.dht.peer.InternalProtocol;
import dev.dht.peer.RangeFrameCodec;
import dev.dht.peer.ReadBatchCodec;
import dev.dht.storage.KeyedRecord;
import dev.dht.storage.LocalStore;
import dev.dht.storage.Record;
import dev.dht.web.BadRequestException;
import dev.dht.web.RequestBodyReader;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.springframework.core.io.buffer.DefaultDataBufferFactory;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.web.reactive.function.BodyInserters;
import org.springframework.web.reactive.function.server.ServerRequest;
import org.springframework.web.reactive.function.server.ServerResponse;
import reactor.core.publisher.Mono;

/**
 * The replica side of {@code /internal/record}, {@code /internal/records}, {@code /internal/records/read} and
 * {@code /internal/range} (see {@link dev.dht.peer.InternalProtocol}): reads and
 * last-write-wins writes of this node's store, records carried with their timestamps and tombstone flags.
 * Guarded by {@link ClusterSecretFilter}. Storage work runs on the storage scheduler.
 */
public final class InternalRecordHandler {
    private final LocalStore store;
    private final RebuildGate rebuild;
    private final RequestBodyReader bodyReader;
    private final RequestBodyReader batchReader = new RequestBodyReader(InternalProtocol.BATCH_MAX_BYTES);

    /**
     * @param rebuild    reads answer 503 while it is closed (this node is rebuilding its store)
     * @param bodyReader reader limited to {@code dht.max-value-size} plus the record header
     */
    public InternalRecordHandler(LocalStore store, RebuildGate rebuild, RequestBodyReader bodyReader) {
        this.store = store;
        this.rebuild = rebuild;
        this.bodyReader = bodyReader;
    }

    /** 200 with the record bytes, 404 if this replica has no record for the id, 503 while it rebuilds. */
    public Mono<ServerResponse> read(ServerRequest request) {
        rebuild.checkReadable();
        byte[] key = RequestParameters.required(request, "id").getBytes(StandardCharsets.UTF_8);
        return store.read(key).flatMap(record -> record.isPresent()
                ? ServerResponse.ok().contentType(MediaType.APPLICATION_OCTET_STREAM).bodyValue(record.get().encode())
                : ServerResponse.notFound().build());
    }

    /** 201 once the record is applied (or found older than the stored one); 400 for a malformed record. */
    public Mono<ServerResponse> write(ServerRequest request) {
        byte[] key = RequestParameters.required(request, "id").getBytes(StandardCharsets.UTF_8);
        return bodyReader.read(request)
                .map(InternalRecordHandler::decode)
                .flatMap(record -> store.write(key, record))
                // flatMap, not then(): then() hands the Boolean to the discard hook, a walk up the whole context
                .flatMap(applied -> ServerResponse.status(HttpStatus.CREATED).build());
    }

    /**
     * {@code POST /internal/records}: 201 once every record of the batch is applied (or found older), in one
     * storage task; 400 for a malformed body, 413 over {@link InternalProtocol#BATCH_MAX_BYTES}, 503 if the
     * storage queue is full.
     */
    public Mono<ServerResponse> writeBatch(ServerRequest request) {
        return batchReader.read(request)
                .map(InternalRecordHandler::decodeBatch)
                .flatMap(store::writeAll)
                .then(ServerResponse.status(HttpStatus.CREATED).build());
    }

    /**
     * {@code POST /internal/records/read}, the keys in {@link ReadBatchCodec} frames: 200 with each key's answer
     * in order (its record, none, or "read alone" for the keys beyond {@link InternalProtocol#BATCH_MAX_BYTES} of
     * records), read in one storage task; 400 for a malformed body, no key or more than
     * {@link InternalProtocol#READ_BATCH_MAX_KEYS}; 413 over {@link InternalProtocol#BATCH_MAX_BYTES}; 503 while
     * this node rebuilds or if the storage queue is full.
     */
    public Mono<ServerResponse> readBatch(ServerRequest request) {
        rebuild.checkReadable();
        return batchReader.read(request)
                .map(InternalRecordHandler::decodeKeys)
                .flatMap(keys -> store.readAll(keys, InternalProtocol.BATCH_MAX_BYTES)
                        .map(read -> ReadBatchCodec.encodeAnswers(read, keys.size())))
                .flatMap(body -> ServerResponse.ok().contentType(MediaType.APPLICATION_OCTET_STREAM).bodyValue(body));
    }

    /**
     * {@code GET /internal/range?start=S[&end=E]}: this node's local records in the range, tombstones included,
     * as {@link RangeFrameCodec} frames, streamed with backpressure from a LevelDB snapshot.
     */
    public Mono<ServerResponse> range(ServerRequest request) {
        byte[] start = RequestParameters.required(request, "start").getBytes(StandardCharsets.UTF_8);
        byte[] end = RequestParameters.optional(request, "end").map(e -> e.getBytes(StandardCharsets.UTF_8)).orElse(null);
        return ServerResponse.ok()
                .contentType(MediaType.APPLICATION_OCTET_STREAM)
                .body(BodyInserters.fromDataBuffers(
                        RangeFrameCodec.encode(store.range(start, end), DefaultDataBufferFactory.sharedInstance)));
    }

    private static List<KeyedRecord> decodeBatch(byte[] body) {
        try {
            return RangeFrameCodec.decodeAll(body, "a batch");
        } catch (IllegalStateException | IllegalArgumentException e) {
            throw new BadRequestException("malformed batch: " + e.getMessage());
        }
    }

    private static List<byte[]> decodeKeys(byte[] body) {
        try {
            return ReadBatchCodec.decodeKeys(body, InternalProtocol.READ_BATCH_MAX_KEYS);
        } catch (IllegalArgumentException e) {
            throw new BadRequestException("malformed batch read: " + e.getMessage());
        }
    }

    private static Record decode(byte[] body) {
        try {
            return Record.decode(body);
        } catch (IllegalArgumentException e) {
            throw new BadRequestException("malformed record: " + e.getMessage());
        }
    }
}
