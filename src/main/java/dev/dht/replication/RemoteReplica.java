package dev.dht.replication;

import dev.dht.cluster.Node;
import dev.dht.cluster.PeerHealth;
import dev.dht.failure.OverloadReason;
import dev.dht.failure.OverloadedException;
import dev.dht.metrics.ReplicaCallMetrics;
import dev.dht.peer.IdleStreamTimeout;
import dev.dht.peer.InternalProtocol;
import dev.dht.peer.RangeFrameCodec;
import dev.dht.peer.ReadBatchCodec;
import dev.dht.storage.KeyedRecord;
import dev.dht.storage.Record;
import io.micrometer.core.instrument.DistributionSummary;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;
import org.springframework.core.io.buffer.DataBuffer;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.web.reactive.function.client.ClientResponse;
import org.springframework.web.reactive.function.client.WebClient;
import org.springframework.web.reactive.function.client.WebClientResponseException;
import org.springframework.web.util.UriUtils;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.netty.http.client.HttpClientRequest;

/**
 * A peer node as a replica, over the internal protocol ({@link InternalProtocol}) with the shared, pooled
 * {@link WebClient}. Connect and response timeouts come from the client ({@code dht.replica-timeout}), except
 * on range streams (see {@link #range}). Every outcome is reported to {@link PeerHealth}. Non-blocking.
 */
public final class RemoteReplica implements Replica {
    /** Body buffers (each up to a few KiB) read ahead of the range decoder. */
    private static final int BODY_PREFETCH = 4;

    private final Node node;
    private final WebClient client;
    private final String secret;
    private final PeerHealth health;
    private final ReplicaCallMetrics metrics;
    private final Duration timeout;
    private final Duration rangeIdleTimeout;
    /** {@code http://peer/internal/record?id=}, to which the encoded id is appended. */
    private final String recordUri;
    private final URI batchUri;
    private final URI readsUri;
    private final ReplicaCallCoalescer<KeyedRecord, Boolean> writes;
    private final ReplicaCallCoalescer<byte[], Mono<Optional<Record>>> reads;
    private final DistributionSummary writeBatchSizes;
    private final DistributionSummary readBatchSizes;
    /** Point calls (reads, writes) awaiting the peer's answer, for {@link #readRank}. */
    private final OutstandingCalls outstanding;

    /**
     * @param timeout        {@code dht.replica-timeout}: how long a range stream may take to its first record
     * @param writesInFlight {@code dht.replica-writes-in-flight}: write requests to the peer in flight before
     *                       further writes wait and coalesce into batches ({@link ReplicaCallCoalescer})
     * @param readsInFlight  {@code dht.replica-reads-in-flight}: the same for reads
     * @param rangeIdleTimeout {@code dht.range-idle-timeout}: how long a range stream may send nothing while its
     *                       data is wanted
     * @param stallThreshold how long the peer may answer none of the point calls outstanding to it before reads
     *                       ask it last ({@link #readRank}); positive ({@code dht.speculative-retry-delay})
     */
    public RemoteReplica(Node node, WebClient client, String secret, PeerHealth health, ReplicaCallMetrics metrics,
                         Duration timeout, int writesInFlight, int readsInFlight, Duration rangeIdleTimeout,
                         Duration stallThreshold) {
        this.node = node;
        this.metrics = metrics;
        this.client = client;
        this.secret = secret;
        this.health = health;
        this.timeout = timeout;
        this.rangeIdleTimeout = rangeIdleTimeout;
        this.recordUri = node.url() + InternalProtocol.RECORD_PATH + "?id=";
        this.batchUri = URI.create(node.url() + InternalProtocol.RECORDS_PATH);
        this.readsUri = URI.create(node.url() + InternalProtocol.READS_PATH);
        this.writes = new ReplicaCallCoalescer<>(node.name(), writesInFlight, RangeFrameCodec::frameBytes, this::sendWrites);
        this.reads = new ReplicaCallCoalescer<>(node.name(), readsInFlight, ReadBatchCodec::frameBytes, this::sendReads);
        this.writeBatchSizes = metrics.batchSize(node, "write");
        this.readBatchSizes = metrics.batchSize(node, "read");
        this.outstanding = new OutstandingCalls(stallThreshold);
    }

    /**
     * {@inheritDoc}
     *
     * <p>Alone, or coalesced with other reads of this peer into one batch request when
     * {@code dht.replica-reads-in-flight} read requests are in flight already ({@link ReplicaCallCoalescer}).
     */
    @Override
    public Mono<Optional<Record>> read(String id) {
        return reads.call(id.getBytes(StandardCharsets.UTF_8)).flatMap(Function.identity());
    }

    /**
     * One read request of the coalescer: {@code GET /internal/record} for one key (Timer operation read),
     * {@code POST /internal/records/read} for more (operation read-batch, and {@code dht.replica.read.batch.records}).
     * Each key's result is a Mono: its answer, or for a key the peer left unread (its record would have made the
     * answer too large) a read of that key alone.
     */
    private Mono<List<Mono<Optional<Record>>>> sendReads(List<byte[]> keys) {
        if (keys.size() == 1) {
            return readAlone(keys.get(0)).map(record -> List.of(Mono.just(record)));
        }
        readBatchSizes.record(keys.size());
        return tracked(metrics.timed(node, "read-batch", client.post()
                .uri(readsUri)
                .header(InternalProtocol.SECRET_HEADER, secret)
                .contentType(MediaType.APPLICATION_OCTET_STREAM)
                .bodyValue(ReadBatchCodec.encodeKeys(keys))
                .exchangeToMono(response -> {
                    if (isOverloaded(response)) {
                        return overloaded(response);
                    }
                    if (!response.statusCode().is2xxSuccessful()) {
                        return response.createError();
                    }
                    return ReadBatchCodec.decodeAnswers(response.bodyToFlux(DataBuffer.class), keys.size(), node.name());
                })))
                .map(answers -> {
                    List<Mono<Optional<Record>>> results = new ArrayList<>(answers.size());
                    for (int i = 0; i < answers.size(); i++) {
                        Optional<Record> answer = answers.get(i);
                        results.add(answer != null ? Mono.just(answer) : readAlone(keys.get(i)));
                    }
                    return results;
                });
    }

    /** {@code GET /internal/record?id=}: the record, empty Optional on 404. */
    private Mono<Optional<Record>> readAlone(byte[] key) {
        return tracked(metrics.timed(node, "read", client.get()
                .uri(recordUri(new String(key, StandardCharsets.UTF_8)))
                .header(InternalProtocol.SECRET_HEADER, secret)
                .exchangeToMono(response -> {
                    if (isOverloaded(response)) {
                        return overloaded(response);
                    }
                    if (response.statusCode().value() == HttpStatus.NOT_FOUND.value()) {
                        return response.releaseBody().thenReturn(Optional.<Record>empty());
                    }
                    if (response.statusCode().is2xxSuccessful()) {
                        return response.bodyToMono(byte[].class)
                                .switchIfEmpty(Mono.error(() -> new IllegalStateException(node + " sent an empty record")))
                                .map(bytes -> Optional.of(Record.decode(bytes)));
                    }
                    return response.createError();
                })));
    }

    /**
     * {@inheritDoc}
     *
     * <p>Alone, or coalesced with other writes to this peer into one batch request when
     * {@code dht.replica-writes-in-flight} requests are in flight already ({@link ReplicaCallCoalescer}).
     */
    @Override
    public Mono<Boolean> write(String id, Record record) {
        return writes.call(new KeyedRecord(id.getBytes(StandardCharsets.UTF_8), record));
    }

    /**
     * One write request of the coalescer: {@code PUT /internal/record} for one record (Timer operation write),
     * {@code POST /internal/records} for more (operation write-batch, and {@code dht.replica.write.batch.records}).
     */
    private Mono<List<Boolean>> sendWrites(List<KeyedRecord> records) {
        return send(records).map(applied -> Collections.nCopies(records.size(), Boolean.TRUE));
    }

    private Mono<Boolean> send(List<KeyedRecord> records) {
        if (records.size() == 1) {
            KeyedRecord only = records.get(0);
            return tracked(metrics.timed(node, "write", client.put()
                    .uri(recordUri(new String(only.key(), StandardCharsets.UTF_8)))
                    .header(InternalProtocol.SECRET_HEADER, secret)
                    .contentType(MediaType.APPLICATION_OCTET_STREAM)
                    .bodyValue(only.record().encode())
                    .exchangeToMono(this::writeOutcome)));
        }
        writeBatchSizes.record(records.size());
        return tracked(metrics.timed(node, "write-batch", client.post()
                .uri(batchUri)
                .header(InternalProtocol.SECRET_HEADER, secret)
                .contentType(MediaType.APPLICATION_OCTET_STREAM)
                .bodyValue(RangeFrameCodec.encodeBatch(records))
                .exchangeToMono(this::writeOutcome)));
    }

    /** True for a 2xx answer; {@link OverloadedException} for 503; the status as an error otherwise. */
    private Mono<Boolean> writeOutcome(ClientResponse response) {
        if (response.statusCode().is2xxSuccessful()) {
            return response.releaseBody().thenReturn(Boolean.TRUE);
        }
        if (isOverloaded(response)) {
            return overloaded(response);
        }
        return response.createError();
    }

    /**
     * {@inheritDoc}
     *
     * <p>The first record (or the end of an empty stream) must arrive within {@code dht.replica-timeout}. The
     * client's response timeout, a limit on the time between two reads, is switched off for the stream:
     * backpressure from a client that reads slowly stops the reads for as long as it pauses, and that must not
     * fail a healthy peer's stream. Instead, the body may send nothing for at most {@code dht.range-idle-timeout}
     * while the coordinator wants more of it ({@link IdleStreamTimeout}: time in which nothing is requested does
     * not count), so a peer that stalls mid-stream without closing its connection fails the range with
     * {@link RangeUnavailableException} instead of holding it until TCP gives up.
     */
    @Override
    public Flux<KeyedRecord> range(String start, String end) {
        String uri = node.url() + InternalProtocol.RANGE_PATH + (end == null ? "?start={start}" : "?start={start}&end={end}");
        Object[] variables = end == null ? new Object[] {start} : new Object[] {start, end};
        return metrics.timed(node, "range", client.get()
                        .uri(uri, variables)
                        .header(InternalProtocol.SECRET_HEADER, secret)
                        .httpRequest(request -> request.<HttpClientRequest>getNativeRequest().responseTimeout(null))
                        .exchangeToFlux(response -> response.statusCode().is2xxSuccessful()
                                ? RangeFrameCodec.decode(IdleStreamTimeout.watch(response.bodyToFlux(DataBuffer.class),
                                        rangeIdleTimeout, node.name()), node.name(), BODY_PREFETCH)
                                : response.<KeyedRecord>createError().flux())
                        .timeout(Mono.delay(timeout), first -> Mono.never()))
                .doOnComplete(() -> health.succeeded(node))
                .doOnError(error -> health.failed(node, error))
                .onErrorMap(error -> !(error instanceof RangeUnavailableException),
                        error -> new RangeUnavailableException(node.name(), error));
    }

    /**
     * A point call's outcome: a full pool becomes a refusal ({@link OverloadedException} with
     * {@link OverloadReason#CONNECTION_POOL_FULL}, as a peer's 503 is one with the peer's reason),
     * {@link PeerHealth} learns whether the peer answered, and {@link OutstandingCalls} counts the call while it
     * waits and notes any answer (an error status too).
     */
    private <T> Mono<T> tracked(Mono<T> call) {
        return Mono.defer(() -> {
            long sentNanos = System.nanoTime();
            return call
                    .onErrorMap(RemoteReplica::noConnectionFree, error -> new OverloadedException(
                            OverloadReason.CONNECTION_POOL_FULL,
                            "no free connection to " + node + " and too many calls waiting", error))
                    .doOnSuccess(ignored -> {
                        outstanding.answered(System.nanoTime() - sentNanos);
                        health.succeeded(node);
                    })
                    .doOnError(this::recordFailure)
                    .doOnSubscribe(ignored -> outstanding.started())
                    .doFinally(ignored -> outstanding.ended());
        });
    }

    private static boolean isOverloaded(ClientResponse response) {
        return response.statusCode().value() == HttpStatus.SERVICE_UNAVAILABLE.value();
    }

    /**
     * The peer answered 503: fails with {@link OverloadedException} of the reason the peer named
     * ({@link InternalProtocol#OVERLOAD_REASON_HEADER}; {@link OverloadReason#PEER_OVERLOADED} if none).
     */
    private <T> Mono<T> overloaded(ClientResponse response) {
        OverloadReason reason = OverloadReason.fromToken(
                response.headers().asHttpHeaders().getFirst(InternalProtocol.OVERLOAD_REASON_HEADER));
        String message = reason == OverloadReason.DISK_FULL
                ? "storage full on " + node + ": writes resume when space is freed there"
                : node + " refused: " + reason.token() + " (503)";
        return response.releaseBody().then(Mono.error(() -> new OverloadedException(reason, message)));
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

    /**
     * A peer that answered 503 is up; a full local pool says nothing about the peer; anything else is down. An
     * error status still is an answer ({@link OutstandingCalls#answered}).
     */
    private void recordFailure(Throwable error) {
        boolean poolFull = error instanceof OverloadedException refusal
                && refusal.reason() == OverloadReason.CONNECTION_POOL_FULL;
        if (poolFull) {
            return;
        }
        boolean answered = error instanceof OverloadedException || error instanceof WebClientResponseException;
        if (answered) {
            outstanding.answered();
        }
        if (error instanceof OverloadedException) {
            health.succeeded(node);
        } else {
            health.failed(node, error);
        }
    }

    /**
     * The record URI of {@code id}, every character outside RFC 3986's unreserved set percent-encoded (as the
     * URI template expansion would, without parsing a template per call).
     */
    private URI recordUri(String id) {
        return URI.create(recordUri + UriUtils.encode(id, StandardCharsets.UTF_8));
    }

    /**
     * {@inheritDoc}
     *
     * <p>{@link #PEER_DOWN} while {@link PeerHealth} has it down (its last call failed); else
     * {@link #PEER_SLOW} while it is stalled ({@link OutstandingCalls#stalled}: calls to it are outstanding
     * and it has answered none for longer than {@code dht.speculative-retry-delay}) or slow
     * ({@link OutstandingCalls#slow}: its smoothed answer time is above that delay, as behind a slow link, whose
     * peer answers every call late but keeps answering, so it is seldom stalled; asking it first made a read
     * wait for it whenever the speculative retry budget was spent). A frozen peer (SIGSTOP, a long
     * pause) fails no call before {@code dht.replica-timeout}, so until then {@link PeerHealth} still sees it up;
     * without the stall rank, reads would keep asking it first and, once the speculative retry budget
     * ({@link RetryBudget}) is spent, wait out the timeout (504). Its next answer ranks it up again. A stalled
     * peer ranks above a failed one: on a machine short of CPU a healthy peer's calls stall too, and ranking both
     * alike let a read ask a partitioned peer first and wait out its timeout (NetworkFaultsIT, RELIABILITY.md).
     */
    @Override
    public int readRank() {
        if (!health.isUp(node)) {
            return PEER_DOWN;
        }
        return outstanding.stalled() || outstanding.slow() ? PEER_SLOW : PEER_UP;
    }

    /** The peer this replica talks to. */
    public Node node() {
        return node;
    }
}
