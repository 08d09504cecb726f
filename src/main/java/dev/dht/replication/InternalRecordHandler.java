package dev.dht.replication;

import dev.dht.cluster.EpochFence;
import dev.dht.failure.OverloadReason;
import dev.dht.http.BadRequestException;
import dev.dht.http.QueryParameters;
import dev.dht.http.RequestBodyReader;
import dev.dht.node.RebuildGate;
import dev.dht.peer.InternalProtocol;
import dev.dht.peer.PeerEndpoint;
import dev.dht.peer.RangeFrameCodec;
import dev.dht.peer.ReadBatchCodec;
import dev.dht.peer.server.PeerEndpointHandler;
import dev.dht.storage.KeyedRecord;
import dev.dht.storage.LocalStore;
import dev.dht.storage.Record;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.springframework.core.io.buffer.DefaultDataBufferFactory;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.web.reactive.function.BodyInserters;
import org.springframework.web.reactive.function.server.HandlerFunction;
import org.springframework.web.reactive.function.server.ServerRequest;
import org.springframework.web.reactive.function.server.ServerResponse;
import reactor.core.publisher.Mono;

/**
 * The replica side of {@code /internal/record}, {@code /internal/records}, {@code /internal/records/read} and
 * {@code /internal/range} (see {@link dev.dht.peer.InternalProtocol}): reads and
 * last-write-wins writes of this node's store, records carried with their timestamps and tombstone flags.
 * Routed by {@link dev.dht.peer.server.PeerRoutes} behind the guards of every internal route. Storage work runs on
 * the storage scheduler; the handlers never block the event loop.
 *
 * <p>Reads and writes are fenced by epoch ({@link EpochFence}): a call placed under an older view than this node's
 * ({@link InternalProtocol#EPOCH_HEADER}) whose key's replica sets a later step moved is answered 503 with
 * {@link InternalProtocol#OVERLOAD_REASON_HEADER} {@code stale-epoch} and this node's epoch, before anything is
 * read or applied (a batch is refused whole if one of its keys is); a range only if a member that may hold a write
 * alone is missing from its view ({@link EpochFence#admitsRange}).
 */
public final class InternalRecordHandler implements PeerEndpointHandler {
    private final LocalStore store;
    private final RebuildGate rebuild;
    private final EpochFence fence;
    private final RequestBodyReader bodyReader;
    private final RequestBodyReader batchReader = new RequestBodyReader(InternalProtocol.BATCH_MAX_BYTES);

    /**
     * @param rebuild    reads answer 503 while it is closed (this node is rebuilding its store)
     * @param fence      refuses calls placed under a view whose replica sets for their key this node left behind
     * @param bodyReader reader limited to {@code dht.max-value-size} plus the record header
     */
    public InternalRecordHandler(LocalStore store, RebuildGate rebuild, EpochFence fence, RequestBodyReader bodyReader) {
        this.store = store;
        this.rebuild = rebuild;
        this.fence = fence;
        this.bodyReader = bodyReader;
    }

    /** {@link PeerEndpoint#READ}, {@link PeerEndpoint#WRITE}, {@link PeerEndpoint#WRITE_BATCH}, {@link PeerEndpoint#READ_BATCH}, {@link PeerEndpoint#RANGE}. */
    @Override
    public Map<PeerEndpoint, HandlerFunction<ServerResponse>> handlers() {
        return Map.of(PeerEndpoint.READ, this::read,
                PeerEndpoint.WRITE, this::write,
                PeerEndpoint.WRITE_BATCH, this::writeBatch,
                PeerEndpoint.READ_BATCH, this::readBatch,
                PeerEndpoint.RANGE, this::range);
    }

    /**
     * {@code GET /internal/record?id=ID[&from=F]}: 200 with the record bytes, 404 if this replica has no record for
     * the id, 503 while it rebuilds or if the call is stale for the key (read with {@code F} replicas; without it,
     * every member counts).
     */
    public Mono<ServerResponse> read(ServerRequest request) {
        rebuild.checkReadable();
        byte[] key = QueryParameters.required(request, "id").getBytes(StandardCharsets.UTF_8);
        long epoch = epochOf(request);
        if (!fence.admits(epoch, key, fromOf(request))) {
            return stale(epoch);
        }
        return store.read(key).flatMap(record -> record.isPresent()
                ? ServerResponse.ok().contentType(MediaType.APPLICATION_OCTET_STREAM).bodyValue(record.get().encode())
                : ServerResponse.notFound().build());
    }

    /**
     * 201 once the record is applied (or found older than the stored one); 400 for a malformed record; 503 if the
     * call is stale for the key (placed with the record's {@code from}).
     */
    public Mono<ServerResponse> write(ServerRequest request) {
        byte[] key = QueryParameters.required(request, "id").getBytes(StandardCharsets.UTF_8);
        long epoch = epochOf(request);
        return bodyReader.read(request)
                .map(InternalRecordHandler::decode)
                .flatMap(record -> fence.admits(epoch, key, record.from())
                        ? store.write(key, record) : Mono.error(staleEpoch(epoch)))
                // flatMap, not then(): then() hands the Boolean to the discard hook, a walk up the whole context
                .flatMap(applied -> ServerResponse.status(HttpStatus.CREATED).build())
                .onErrorResume(StaleCall.class, stale -> stale(epoch));
    }

    /**
     * {@code POST /internal/records}: 201 once every record of the batch is applied (or found older), in one
     * storage task; 400 for a malformed body, 413 over {@link InternalProtocol#BATCH_MAX_BYTES}, 503 if the
     * storage queue is full.
     */
    public Mono<ServerResponse> writeBatch(ServerRequest request) {
        long epoch = epochOf(request);
        return batchReader.read(request)
                .map(InternalRecordHandler::decodeBatch)
                .flatMap(records -> {
                    for (KeyedRecord record : records) {
                        if (!fence.admits(epoch, record.key(), record.record().from())) {
                            return Mono.error(staleEpoch(epoch));
                        }
                    }
                    return store.writeAll(records);
                })
                .then(ServerResponse.status(HttpStatus.CREATED).build())
                .onErrorResume(StaleCall.class, stale -> stale(epoch));
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
        long epoch = epochOf(request);
        int from = fromOf(request);
        return batchReader.read(request)
                .map(InternalRecordHandler::decodeKeys)
                .flatMap(keys -> {
                    for (byte[] key : keys) {
                        if (!fence.admits(epoch, key, from)) {
                            return Mono.error(staleEpoch(epoch));
                        }
                    }
                    return store.readAll(keys, InternalProtocol.BATCH_MAX_BYTES)
                            .map(read -> ReadBatchCodec.encodeAnswers(read, keys.size()));
                })
                .flatMap(body -> ServerResponse.ok().contentType(MediaType.APPLICATION_OCTET_STREAM).bodyValue(body))
                .onErrorResume(StaleCall.class, stale -> stale(epoch));
    }

    /**
     * {@code GET /internal/range?start=S[&end=E]}: this node's local records in the range, tombstones included,
     * as {@link RangeFrameCodec} frames, streamed with backpressure from a LevelDB snapshot.
     */
    public Mono<ServerResponse> range(ServerRequest request) {
        long epoch = epochOf(request);
        if (!fence.admitsRange(epoch)) {
            return stale(epoch);
        }
        byte[] start = QueryParameters.required(request, "start").getBytes(StandardCharsets.UTF_8);
        byte[] end = QueryParameters.optional(request, "end").map(e -> e.getBytes(StandardCharsets.UTF_8)).orElse(null);
        return ServerResponse.ok()
                .contentType(MediaType.APPLICATION_OCTET_STREAM)
                .body(BodyInserters.fromDataBuffers(
                        RangeFrameCodec.encode(store.range(start, end), DefaultDataBufferFactory.sharedInstance)));
    }

    /** The epoch the call was placed under ({@link InternalProtocol#EPOCH_HEADER}); 0 if it names none. */
    private static long epochOf(ServerRequest request) {
        String header = request.headers().firstHeader(InternalProtocol.EPOCH_HEADER);
        try {
            return header == null ? 0 : Long.parseLong(header);
        } catch (NumberFormatException e) {
            return 0;
        }
    }

    /** The {@code from} a read was placed with; 0 if the caller names none. */
    private static int fromOf(ServerRequest request) {
        try {
            return QueryParameters.optional(request, "from").map(Integer::parseInt).orElse(0);
        } catch (NumberFormatException e) {
            throw new BadRequestException("from must be a number");
        }
    }

    private StaleCall staleEpoch(long epoch) {
        return new StaleCall(epoch);
    }

    /**
     * The fence's refusal: 503, {@code stale-epoch}, this node's epoch in {@link InternalProtocol#EPOCH_HEADER}
     * (the caller fetches that view and places the call again), {@code Retry-After: 1}.
     */
    private Mono<ServerResponse> stale(long epoch) {
        long ours = fence.epoch();
        return ServerResponse.status(HttpStatus.SERVICE_UNAVAILABLE).contentType(MediaType.TEXT_PLAIN)
                .header(InternalProtocol.EPOCH_HEADER, Long.toString(ours))
                .header(InternalProtocol.OVERLOAD_REASON_HEADER, OverloadReason.STALE_EPOCH.token())
                .header(HttpHeaders.RETRY_AFTER, "1")
                .bodyValue("placed under epoch " + epoch + ", but this replica holds epoch " + ours
                        + ", whose replica sets for the key differ\n");
    }

    /** A batch or write found stale after its body was read: turned into {@link #stale} at the handler's end. */
    private static final class StaleCall extends RuntimeException {
        StaleCall(long epoch) {
            super("stale epoch " + epoch, null, false, false);
        }
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
