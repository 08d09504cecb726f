package dev.dht.peer;

import dev.dht.cluster.ClusterView;
import dev.dht.cluster.ClusterViewFile;
import dev.dht.cluster.Node;
import dev.dht.failure.OverloadReason;
import dev.dht.failure.OverloadedException;
import dev.dht.metrics.ReplicaCallMetrics;
import dev.dht.storage.KeyedRecord;
import dev.dht.storage.Record;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.BitSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.web.reactive.function.client.ClientResponse;
import org.springframework.web.reactive.function.client.WebClient;
import org.springframework.web.reactive.function.client.WebClientResponseException;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.http.client.HttpClientRequest;

/**
 * The calling side of the node-to-node protocol: every call to a peer goes through here, over the shared, pooled
 * {@link WebClient}, with the cluster secret and the timeouts of its {@link PeerEndpoint}. Failures are mapped
 * once: a peer's 503 becomes {@link OverloadedException} with the reason the peer named, a connection pool that
 * refuses to queue another call becomes one with {@link OverloadReason#CONNECTION_POOL_FULL}, another error status
 * a {@link WebClientResponseException}, any answer of a node of another cluster {@link ClusterMismatchException}.
 * Calls of endpoints with an {@link PeerEndpoint#operation()} are timed
 * ({@link ReplicaCallMetrics}). Stateless apart from its settings; every method is non-blocking.
 */
public final class PeerClient {
    /**
     * Longest wait for a peer's repair tree: the peer's scan is paced by its {@code dht.repair.scan-rate}, so this
     * bounds the store a tree can cover (72 million records at the default 20 000/s).
     */
    public static final Duration REPAIR_TREE_TIMEOUT = Duration.ofHours(1);
    /** Body buffers (each up to a few KiB) read ahead of the frame decoder. */
    private static final int BODY_PREFETCH = 4;

    private final WebClient client;
    private final String secret;
    private final ReplicaCallMetrics metrics;
    private final Duration replicaTimeout;
    private final Duration rangeIdleTimeout;
    private final EpochTracker epochs;

    /**
     * @param client           the shared client; its response timeout is {@code dht.replica-timeout}
     * @param secret           {@code dht.cluster-secret}, sent in {@link InternalProtocol#SECRET_HEADER}
     * @param metrics          times the calls of endpoints with an operation tag
     * @param replicaTimeout   {@code dht.replica-timeout}: how long a range stream may take to its first record
     * @param rangeIdleTimeout {@code dht.range-idle-timeout}: how long a range stream may send nothing while its
     *                         data is wanted
     * @param epochs           this node's epoch, sent on every request; a peer's higher one is reported to it
     */
    public PeerClient(WebClient client, String secret, ReplicaCallMetrics metrics, Duration replicaTimeout,
                      Duration rangeIdleTimeout, EpochTracker epochs) {
        this.client = client;
        this.secret = secret;
        this.metrics = metrics;
        this.replicaTimeout = replicaTimeout;
        this.rangeIdleTimeout = rangeIdleTimeout;
        this.epochs = epochs;
    }

    /** {@link PeerEndpoint#READ}: {@code peer}'s record for {@code id}, empty Optional on 404. */
    public Mono<Optional<Record>> read(Node peer, String id) {
        return read(peer, id, 0, 0);
    }

    /**
     * {@link PeerEndpoint#READ} of a key placed with {@code from} replicas under the view of {@code epoch} (0: this
     * node's current epoch, every member counted): {@code peer}'s record for {@code id}, empty Optional on 404; a
     * peer whose view moved the key's replicas since fails it with {@link OverloadedException} of
     * {@link OverloadReason#STALE_EPOCH} ({@link OverloadedException#heldEpoch()}: the peer's epoch).
     */
    public Mono<Optional<Record>> read(Node peer, String id, int from, long epoch) {
        URI uri = PeerEndpoint.READ.uri(peer, id, from == 0 ? null : Integer.toString(from));
        return call(PeerEndpoint.READ, peer, uri, null, epoch, response -> {
            if (response.statusCode().value() == HttpStatus.NOT_FOUND.value()) {
                return response.releaseBody().thenReturn(Optional.<Record>empty());
            }
            return ifOk(response, ok -> ok.bodyToMono(byte[].class)
                    .switchIfEmpty(Mono.error(() -> new IllegalStateException(peer + " sent an empty record")))
                    .map(bytes -> Optional.of(Record.decode(bytes))));
        });
    }

    /**
     * {@link PeerEndpoint#READ_BATCH}: {@code peer}'s answer for each of {@code keys}, in order: the record,
     * empty Optional if it has none, or null for a key it left unread (read that one alone).
     */
    public Mono<List<Optional<Record>>> readBatch(Node peer, List<byte[]> keys) {
        return readBatch(peer, keys, 0, 0);
    }

    /**
     * {@link #readBatch(Node, List)} of keys placed with at most {@code from} replicas under the view of
     * {@code epoch} (0: this node's current epoch, every member counted); fenced as {@link #read(Node, String, int, long)}.
     */
    public Mono<List<Optional<Record>>> readBatch(Node peer, List<byte[]> keys, int from, long epoch) {
        URI uri = PeerEndpoint.READ_BATCH.uri(peer, from == 0 ? null : Integer.toString(from));
        return call(PeerEndpoint.READ_BATCH, peer, uri, ReadBatchCodec.encodeKeys(keys), epoch,
                response -> ifOk(response, ok -> ReadBatchCodec.decodeAnswers(
                        ok.bodyToFlux(DataBuffer.class), keys.size(), peer.name())));
    }

    /** {@link PeerEndpoint#WRITE}: completes once {@code peer} has applied {@code entry} (or found it older). */
    public Mono<Void> write(Node peer, KeyedRecord entry) {
        return write(peer, entry, 0);
    }

    /**
     * {@link #write(Node, KeyedRecord)} placed under the view of {@code epoch} (0: this node's current epoch); a peer
     * whose view moved the key's replicas since refuses it, applying nothing, with {@link OverloadedException} of
     * {@link OverloadReason#STALE_EPOCH}.
     */
    public Mono<Void> write(Node peer, KeyedRecord entry, long epoch) {
        URI uri = PeerEndpoint.WRITE.uri(peer, new String(entry.key(), StandardCharsets.UTF_8));
        return call(PeerEndpoint.WRITE, peer, uri, entry.record().encode(), epoch, PeerClient::applied);
    }

    /** {@link PeerEndpoint#WRITE_BATCH}: completes once {@code peer} has applied every one of {@code entries}. */
    public Mono<Void> writeBatch(Node peer, List<KeyedRecord> entries) {
        return writeBatch(peer, entries, 0);
    }

    /**
     * {@link PeerEndpoint#WRITE_BATCH}: completes once {@code peer} has applied every one of {@code entries}, placed
     * under the view of {@code epoch} (0: this node's current epoch); refused whole as {@link #write(Node, KeyedRecord, long)}.
     */
    public Mono<Void> writeBatch(Node peer, List<KeyedRecord> entries, long epoch) {
        return call(PeerEndpoint.WRITE_BATCH, peer, PeerEndpoint.WRITE_BATCH.uri(peer),
                RangeFrameCodec.encodeBatch(entries), epoch, PeerClient::applied);
    }

    /**
     * {@link PeerEndpoint#RANGE}: {@code peer}'s local records in {@code [start, end)}, tombstones included.
     * Fails with {@link java.util.concurrent.TimeoutException} if the first record (or the end) takes longer than
     * {@code dht.replica-timeout}, or the peer sends nothing for {@code dht.range-idle-timeout} while records are
     * wanted (see {@link PeerEndpoint.Timeout#STREAM}); a consumer that pauses is never failed.
     *
     * @param end exclusive bound, or null for none
     */
    public Flux<KeyedRecord> range(Node peer, String start, String end) {
        return frames(PeerEndpoint.RANGE, peer, PeerEndpoint.RANGE.uri(peer, start, end));
    }

    /**
     * {@link PeerEndpoint#REPAIR_TREE}: the bytes of {@code peer}'s hash tree of the records it shares with
     * {@code self}; fails with {@link java.util.concurrent.TimeoutException} after {@link #REPAIR_TREE_TIMEOUT}.
     */
    public Mono<byte[]> repairTree(Node peer, Node self) {
        return call(PeerEndpoint.REPAIR_TREE, peer, PeerEndpoint.REPAIR_TREE.uri(peer, self.url().toString()), null,
                response -> ifOk(response, ok -> ok.bodyToMono(byte[].class)));
    }

    /**
     * {@link PeerEndpoint#REPAIR_RECORDS}: {@code peer}'s records shared with {@code self} in {@code segments}, in
     * key order, with no timeout (the repair paces the stream).
     */
    public Flux<KeyedRecord> repairRecords(Node peer, Node self, BitSet segments) {
        String encoded = Base64.getUrlEncoder().withoutPadding().encodeToString(segments.toByteArray());
        return frames(PeerEndpoint.REPAIR_RECORDS, peer,
                PeerEndpoint.REPAIR_RECORDS.uri(peer, self.url().toString(), encoded));
    }

    /** {@link PeerEndpoint#VIEW}: {@code peer}'s cluster view, and whether it still cleans up after a change. */
    public Mono<PeerView> view(Node peer) {
        return call(PeerEndpoint.VIEW, peer, PeerEndpoint.VIEW.uri(peer), null, response -> ifOk(response, ok -> {
            boolean cleanupPending = Boolean.parseBoolean(
                    ok.headers().asHttpHeaders().getFirst(InternalProtocol.CLEANUP_PENDING_HEADER));
            return ok.bodyToMono(String.class).map(text -> new PeerView(ClusterViewFile.decode(text), cleanupPending));
        }));
    }

    /**
     * {@link PeerEndpoint#PROPOSE_VIEW}: {@code peer} adopts {@code view} if newer, once it holds epoch
     * {@code expect} (null: whatever it holds), and answers the view it then holds. A 409 fails the call with
     * {@link WebClientResponseException} whose body says why.
     */
    public Mono<ClusterView> propose(Node peer, ClusterView view, Long expect) {
        URI uri = PeerEndpoint.PROPOSE_VIEW.uri(peer, expect == null ? null : expect.toString());
        return call(PeerEndpoint.PROPOSE_VIEW, peer, uri, ClusterViewFile.encode(view).getBytes(StandardCharsets.UTF_8),
                response -> ifOk(response, ok -> ok.bodyToMono(String.class).map(ClusterViewFile::decode)));
    }

    /**
     * {@link PeerEndpoint#STREAM}: the {@code part} of the records {@code self} gains from {@code peer} in the
     * change at {@code epoch}, after key {@code after} (null: from the first), in key order. No timeout: the caller
     * paces the stream.
     */
    public Flux<KeyedRecord> stream(Node peer, Node self, long epoch, byte[] after, StreamPart part) {
        String afterText = after == null ? null : new String(after, StandardCharsets.UTF_8);
        return frames(PeerEndpoint.STREAM, peer, PeerEndpoint.STREAM.uri(peer, self.url().toString(),
                Long.toString(epoch), afterText, part == StreamPart.ALL ? null : part.token()));
    }

    /**
     * {@link PeerEndpoint#PULL}: completes once {@code peer} has pulled what it gains in the change at {@code epoch},
     * from no member of {@code lost} (members lost in a recovery of the view log; empty: none).
     */
    public Mono<Void> pull(Node peer, long epoch, Set<URI> lost) {
        String lostText = lost.isEmpty() ? null
                : lost.stream().map(URI::toString).sorted().collect(Collectors.joining(","));
        return call(PeerEndpoint.PULL, peer, PeerEndpoint.PULL.uri(peer, Long.toString(epoch), lostText), null,
                PeerClient::applied);
    }

    /** {@link PeerEndpoint#CLEANUP}: {@code peer} starts its cleanup after the change that ended at {@code epoch}. */
    public Mono<Void> cleanup(Node peer, long epoch) {
        return call(PeerEndpoint.CLEANUP, peer, PeerEndpoint.CLEANUP.uri(peer, Long.toString(epoch)), null,
                PeerClient::applied);
    }

    /**
     * {@link PeerEndpoint#BACKUP}: {@code peer} writes its part of backup {@code id}; the part's JSON once done. No
     * timeout (the peer paces its scan); a refusal or failure fails the call with {@link WebClientResponseException}
     * whose body says why, an unreachable peer with the connection's error. {@code since}: the lowest timestamp of
     * the records an incremental part holds; 0 for a full part (a node of an older version writes a full part
     * whatever it is: the incremental then repeats records, it misses none).
     */
    public Mono<byte[]> backup(Node peer, String id, long since) {
        return call(PeerEndpoint.BACKUP, peer, PeerEndpoint.BACKUP.uri(peer, id, since > 0 ? Long.toString(since) : null),
                null,
                response -> ifOk(response, ok -> ok.bodyToMono(byte[].class)));
    }

    /**
     * {@link PeerEndpoint#STATS}: {@code peer}'s records, bytes on disk and hints held. No response timeout: the
     * caller bounds the call.
     */
    public Mono<NodeStats> stats(Node peer) {
        return call(PeerEndpoint.STATS, peer, PeerEndpoint.STATS.uri(peer), null,
                response -> ifOk(response, ok -> ok.bodyToMono(String.class).map(NodeStats::decode)));
    }

    /** Reports the epoch of {@code response}, if higher than this node's, to the {@link EpochTracker}. */
    /**
     * Whether {@code response} names another cluster id than this node's ({@link InternalProtocol#CLUSTER_ID_HEADER}):
     * a node that was formed anew at a member's URL, or one of another cluster reached by a wrong address. An answer
     * without the id (a node of the version before cluster ids, or one that has none yet) is taken, as the peers'
     * {@code ClusterIdFilter} takes such requests.
     */
    private boolean ofAnotherCluster(ClientResponse response) {
        UUID ours = epochs.cluster();
        if (ours == null) {
            return false;
        }
        String theirs = response.headers().asHttpHeaders().getFirst(InternalProtocol.CLUSTER_ID_HEADER);
        return theirs != null && !theirs.equals(ours.toString());
    }

    /**
     * Fails the call with {@link ClusterMismatchException}, whatever the peer answered (its body released): a write
     * it acknowledged is kept by no replica of this cluster, a record it sent is not this cluster's, and its epoch is
     * not looked at (no view is fetched from it).
     */
    private <T> Mono<T> otherCluster(Node peer, ClientResponse response) {
        String theirs = response.headers().asHttpHeaders().getFirst(InternalProtocol.CLUSTER_ID_HEADER);
        return response.releaseBody().then(Mono.error(new ClusterMismatchException(peer, theirs, epochs.cluster())));
    }

    private void observeEpoch(Node peer, ClientResponse response) {
        long epoch = epochOf(response);
        if (epoch > epochs.epoch()) {
            epochs.newerEpochSeen(peer, epoch);
        }
    }

    /** The epoch an answer names ({@link InternalProtocol#EPOCH_HEADER}); 0 if none (not a node of this version). */
    private static long epochOf(ClientResponse response) {
        String header = response.headers().asHttpHeaders().getFirst(InternalProtocol.EPOCH_HEADER);
        if (header != null) {
            try {
                return Long.parseLong(header);
            } catch (NumberFormatException ignored) {
                // nothing to learn
            }
        }
        return 0;
    }

    /** A call answered by one body: {@code answer} reads any status but 503; failures mapped, timed. */
    private <T> Mono<T> call(PeerEndpoint endpoint, Node peer, URI uri, byte[] body,
                             Function<ClientResponse, Mono<T>> answer) {
        return call(endpoint, peer, uri, body, 0, answer);
    }

    /** As above, the request placed under the view of {@code epoch} (0: this node's current one). */
    private <T> Mono<T> call(PeerEndpoint endpoint, Node peer, URI uri, byte[] body, long epoch,
                             Function<ClientResponse, Mono<T>> answer) {
        Mono<T> call = request(endpoint, uri, body, epoch).exchangeToMono(response -> {
            if (ofAnotherCluster(response)) {
                return otherCluster(peer, response);
            }
            observeEpoch(peer, response);
            return isRefusal(response) ? refused(peer, response) : answer.apply(response);
        });
        if (endpoint.timeout() == PeerEndpoint.Timeout.REPAIR_TREE) {
            call = call.timeout(REPAIR_TREE_TIMEOUT);
        }
        call = call.onErrorMap(PeerClient::noConnectionFree, error -> poolFull(peer, error));
        return endpoint.operation() == null ? call : metrics.timed(peer, endpoint.operation(), call);
    }

    /** A call answered by a stream of {@link RangeFrameCodec} frames; failures mapped, timed. */
    private Flux<KeyedRecord> frames(PeerEndpoint endpoint, Node peer, URI uri) {
        boolean watched = endpoint.timeout() == PeerEndpoint.Timeout.STREAM;
        Flux<KeyedRecord> stream = request(endpoint, uri, null, 0).exchangeToFlux(response -> {
            if (ofAnotherCluster(response)) {
                return this.<KeyedRecord>otherCluster(peer, response).flux();
            }
            observeEpoch(peer, response);
            if (isRefusal(response)) {
                return this.<KeyedRecord>refused(peer, response).flux();
            }
            if (!response.statusCode().is2xxSuccessful()) {
                return response.<KeyedRecord>createError().flux();
            }
            Flux<DataBuffer> body = response.bodyToFlux(DataBuffer.class);
            return RangeFrameCodec.decode(watched ? IdleStreamTimeout.watch(body, rangeIdleTimeout, peer.name()) : body,
                    peer.name(), BODY_PREFETCH);
        });
        if (watched) {
            stream = stream.timeout(Mono.delay(replicaTimeout), first -> Mono.never());
        }
        stream = stream.onErrorMap(PeerClient::noConnectionFree, error -> poolFull(peer, error));
        return endpoint.operation() == null ? stream : metrics.timed(peer, endpoint.operation(), stream);
    }

    /**
     * The request: method, URI, the cluster secret, the epoch it is placed under ({@code epoch}, or this node's when
     * 0), this node's URL and cluster id, and an octet-stream body if any. The client's response timeout
     * (a limit on the time between two reads) is switched off but for {@link PeerEndpoint.Timeout#RESPONSE}.
     */
    private WebClient.RequestHeadersSpec<?> request(PeerEndpoint endpoint, URI uri, byte[] body, long epoch) {
        WebClient.RequestBodySpec request = client.method(endpoint.method())
                .uri(uri)
                .header(InternalProtocol.SECRET_HEADER, secret)
                .header(InternalProtocol.EPOCH_HEADER, Long.toString(epoch > 0 ? epoch : epochs.epoch()));
        URI self = epochs.self();
        if (self != null) {
            request = request.header(InternalProtocol.SENDER_HEADER, self.toString());
        }
        UUID cluster = epochs.cluster();
        if (cluster != null) {
            request = request.header(InternalProtocol.CLUSTER_ID_HEADER, cluster.toString());
        }
        if (endpoint.timeout() != PeerEndpoint.Timeout.RESPONSE) {
            request = request.httpRequest(http -> http.<HttpClientRequest>getNativeRequest().responseTimeout(null));
        }
        return body == null ? request : request.contentType(MediaType.APPLICATION_OCTET_STREAM).bodyValue(body);
    }

    /** {@code read(response)} for a 2xx answer; the status as a {@link WebClientResponseException} otherwise. */
    private static <T> Mono<T> ifOk(ClientResponse response, Function<ClientResponse, Mono<T>> read) {
        return response.statusCode().is2xxSuccessful() ? read.apply(response) : response.createError();
    }

    /** Completes for a 2xx answer (its body, if any, released). */
    private static Mono<Void> applied(ClientResponse response) {
        return ifOk(response, ClientResponse::releaseBody);
    }

    private static boolean isRefusal(ClientResponse response) {
        return response.statusCode().value() == HttpStatus.SERVICE_UNAVAILABLE.value();
    }

    /**
     * The peer answered 503: fails with {@link OverloadedException} of the reason the peer named
     * ({@link InternalProtocol#OVERLOAD_REASON_HEADER}; {@link OverloadReason#PEER_OVERLOADED} if none).
     */
    private <T> Mono<T> refused(Node peer, ClientResponse response) {
        OverloadReason reason = OverloadReason.fromToken(
                response.headers().asHttpHeaders().getFirst(InternalProtocol.OVERLOAD_REASON_HEADER));
        String message = switch (reason) {
            case DISK_FULL -> "storage full on " + peer + ": writes resume when space is freed there";
            case NOT_A_MEMBER -> "this node is no member of the cluster any more (" + peer + " holds a newer view)";
            case STALE_EPOCH -> peer + " holds a newer view that moved the key's replicas";
            default -> peer + " refused: " + reason.token() + " (503)";
        };
        if (reason == OverloadReason.STALE_EPOCH) {
            long held = epochOf(response);
            return response.releaseBody().then(Mono.error(() -> OverloadedException.staleEpoch(held, message)));
        }
        return response.releaseBody().then(Mono.error(() -> new OverloadedException(reason, message)));
    }

    private static OverloadedException poolFull(Node peer, Throwable error) {
        return new OverloadedException(OverloadReason.CONNECTION_POOL_FULL,
                "no free connection to " + peer + " and too many calls waiting", error);
    }

    /**
     * Reactor Netty's pool refused to queue another acquire ({@code PoolAcquirePendingLimitException}, a class
     * of its shaded reactor-pool, so matched by name rather than imported from an internal package).
     */
    private static boolean noConnectionFree(Throwable error) {
        for (Throwable t = error; t != null; t = t.getCause()) {
            if (t.getClass().getSimpleName().equals("PoolAcquirePendingLimitException")) {
                return true;
            }
        }
        return false;
    }
}
