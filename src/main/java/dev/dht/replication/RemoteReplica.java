package dev.dht.replication;

import dev.dht.cluster.Node;
import dev.dht.cluster.PeerHealth;
import dev.dht.failure.OverloadReason;
import dev.dht.failure.OverloadedException;
import dev.dht.metrics.ReplicaCallMetrics;
import dev.dht.peer.PeerClient;
import dev.dht.peer.RangeFrameCodec;
import dev.dht.peer.ReadBatchCodec;
import dev.dht.storage.KeyedRecord;
import dev.dht.storage.Record;
import io.micrometer.core.instrument.DistributionSummary;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;
import org.springframework.web.reactive.function.client.WebClientResponseException;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * A peer node as a replica, called through the {@link PeerClient} (which sends the requests, applies their
 * timeouts and maps a peer's refusal to {@link OverloadedException}). What is left here is what a replica means:
 * reads and writes coalesced into batches while others are in flight ({@link ReplicaCallCoalescer}), a key left
 * unread by a batch read alone, the peer's place in read order ({@link #readRank}), and every outcome reported to
 * {@link PeerHealth}. Non-blocking.
 */
public final class RemoteReplica implements Replica {
    private final Node node;
    private final PeerClient client;
    private final PeerHealth health;
    private final ReplicaCallCoalescer<WriteCall, Boolean> writes;
    private final ReplicaCallCoalescer<ReadCall, Mono<Optional<Record>>> reads;
    private final DistributionSummary writeBatchSizes;
    private final DistributionSummary readBatchSizes;
    /** Point calls (reads, writes) awaiting the peer's answer, for {@link #readRank}. */
    private final OutstandingCalls outstanding;

    /**
     * @param metrics        where the records per batch are counted ({@link ReplicaCallMetrics#batchSize})
     * @param writesInFlight {@code dht.replica-writes-in-flight}: write requests to the peer in flight before
     *                       further writes wait and coalesce into batches ({@link ReplicaCallCoalescer})
     * @param readsInFlight  {@code dht.replica-reads-in-flight}: the same for reads
     * @param stallThreshold how long the peer may answer none of the point calls outstanding to it before reads
     *                       ask it last ({@link #readRank}); positive ({@code dht.speculative-retry-delay})
     */
    public RemoteReplica(Node node, PeerClient client, PeerHealth health, ReplicaCallMetrics metrics,
                         int writesInFlight, int readsInFlight, Duration stallThreshold) {
        this.node = node;
        this.client = client;
        this.health = health;
        this.writes = new ReplicaCallCoalescer<>(node.name(), writesInFlight,
                call -> RangeFrameCodec.frameBytes(call.entry()), this::sendWrites);
        this.reads = new ReplicaCallCoalescer<>(node.name(), readsInFlight,
                call -> ReadBatchCodec.frameBytes(call.key()), this::sendReads);
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
        return read(id, 0, 0);
    }

    /**
     * {@inheritDoc}
     *
     * <p>A batch carries the oldest epoch and the largest {@code from} of its calls, so the peer's fence judges each
     * key at least as strictly as alone.
     */
    @Override
    public Mono<Optional<Record>> read(String id, int from, long epoch) {
        return reads.call(new ReadCall(id.getBytes(StandardCharsets.UTF_8), from, epoch)).flatMap(Function.identity());
    }

    /**
     * One read request of the coalescer: a read alone for one key, a read batch for more (counted in
     * {@code dht.replica.read.batch.records}). Each key's result is a Mono: its answer, or for a key the peer left
     * unread (its record would have made the answer too large) a read of that key alone.
     */
    private Mono<List<Mono<Optional<Record>>>> sendReads(List<ReadCall> calls) {
        if (calls.size() == 1) {
            return readAlone(calls.get(0)).map(record -> List.of(Mono.just(record)));
        }
        readBatchSizes.record(calls.size());
        List<byte[]> keys = new ArrayList<>(calls.size());
        int from = 0;
        for (ReadCall call : calls) {
            keys.add(call.key());
            from = call.from() == 0 || from == Integer.MAX_VALUE ? Integer.MAX_VALUE : Math.max(from, call.from());
        }
        return tracked(client.readBatch(node, keys, from == Integer.MAX_VALUE ? 0 : from, oldestEpoch(calls)))
                .map(answers -> {
                    List<Mono<Optional<Record>>> results = new ArrayList<>(answers.size());
                    for (int i = 0; i < answers.size(); i++) {
                        Optional<Record> answer = answers.get(i);
                        results.add(answer != null ? Mono.just(answer) : readAlone(calls.get(i)));
                    }
                    return results;
                });
    }

    private Mono<Optional<Record>> readAlone(ReadCall call) {
        return tracked(client.read(node, new String(call.key(), StandardCharsets.UTF_8), call.from(), call.epoch()));
    }

    /**
     * {@inheritDoc}
     *
     * <p>Alone, or coalesced with other writes to this peer into one batch request when
     * {@code dht.replica-writes-in-flight} requests are in flight already ({@link ReplicaCallCoalescer}).
     */
    @Override
    public Mono<Boolean> write(String id, Record record) {
        return write(id, record, 0);
    }

    /**
     * {@inheritDoc}
     *
     * <p>A batch carries the oldest epoch of its calls; the peer refuses it whole if one of its keys is stale.
     */
    @Override
    public Mono<Boolean> write(String id, Record record, long epoch) {
        return writes.call(new WriteCall(new KeyedRecord(id.getBytes(StandardCharsets.UTF_8), record), epoch));
    }

    /**
     * One write request of the coalescer: a write alone for one record, a write batch for more (counted in
     * {@code dht.replica.write.batch.records}).
     */
    private Mono<List<Boolean>> sendWrites(List<WriteCall> calls) {
        Mono<Void> sent;
        if (calls.size() == 1) {
            sent = client.write(node, calls.get(0).entry(), calls.get(0).epoch());
        } else {
            writeBatchSizes.record(calls.size());
            List<KeyedRecord> records = new ArrayList<>(calls.size());
            for (WriteCall call : calls) {
                records.add(call.entry());
            }
            sent = client.writeBatch(node, records, oldestEpoch(calls));
        }
        return tracked(sent).then(Mono.fromSupplier(() -> Collections.nCopies(calls.size(), Boolean.TRUE)));
    }

    /** The oldest epoch the calls were placed under; 0 (this node's current one) if none names one. */
    private static long oldestEpoch(List<? extends Placed> calls) {
        long oldest = 0;
        for (Placed call : calls) {
            if (call.epoch() > 0 && (oldest == 0 || call.epoch() < oldest)) {
                oldest = call.epoch();
            }
        }
        return oldest;
    }

    /** A call placed under the view of an epoch (0: none named). */
    private interface Placed {
        long epoch();
    }

    /** A write waiting in, or carried by, a request. */
    private record WriteCall(KeyedRecord entry, long epoch) implements Placed {
    }

    /** A read waiting in, or carried by, a request: its key, the replica count it was placed with (0: unknown). */
    private record ReadCall(byte[] key, int from, long epoch) implements Placed {
    }

    /**
     * {@inheritDoc}
     *
     * <p>Within the timeouts of {@link PeerClient#range}: the first record within {@code dht.replica-timeout},
     * then never silent for {@code dht.range-idle-timeout} while the coordinator wants more, so a peer that stalls
     * mid-stream without closing its connection fails the range instead of holding it until TCP gives up; a
     * client that reads slowly never does.
     */
    @Override
    public Flux<KeyedRecord> range(String start, String end) {
        return client.range(node, start, end)
                .doOnComplete(() -> health.succeeded(node))
                .doOnError(error -> health.failed(node, error))
                .onErrorMap(error -> !(error instanceof RangeUnavailableException),
                        error -> new RangeUnavailableException(node.name(), error));
    }

    /**
     * A point call's outcome: {@link PeerHealth} learns whether the peer answered, and {@link OutstandingCalls}
     * counts the call while it waits and notes any answer (an error status too).
     */
    private <T> Mono<T> tracked(Mono<T> call) {
        return Mono.defer(() -> {
            long sentNanos = System.nanoTime();
            return call
                    .doOnSuccess(ignored -> {
                        outstanding.answered(System.nanoTime() - sentNanos);
                        health.succeeded(node);
                    })
                    .doOnError(this::recordFailure)
                    .doOnSubscribe(ignored -> outstanding.started())
                    .doFinally(ignored -> outstanding.ended());
        });
    }

    /**
     * A peer that refused (503) is up; a full local pool ({@link OverloadReason#CONNECTION_POOL_FULL}) says nothing
     * about the peer; anything else is down. An error status still is an answer ({@link OutstandingCalls#answered}).
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
     * alike let a read ask a partitioned peer first and wait out its timeout.
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
