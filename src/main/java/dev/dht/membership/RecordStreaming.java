package dev.dht.membership;

import dev.dht.cluster.ChangeKind;
import dev.dht.cluster.ClusterChange;
import dev.dht.cluster.Membership;
import dev.dht.cluster.Node;
import dev.dht.cluster.Placement;
import dev.dht.peer.PeerClient;
import dev.dht.storage.KeyedRecord;
import dev.dht.storage.LocalStore;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.net.URI;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.util.retry.Retry;

/**
 * Moves the records a node gains in a membership change (Cassandra's bootstrap and decommission streaming, Riak's
 * handoff). A key's gainers are its new replicas that were not old ones ({@link Placement}); each gainer pulls the
 * key from every old replica that is alive (not the node a removenode removes), the union, newest record winning
 * as in any write, so a record that only one old replica held still arrives (CASSANDRA-2434 streamed from one
 * replica only).
 *
 * <p>A source scans its whole store in key order on its storage threads, with backpressure, and sends the records
 * the caller gains ({@link #outgoing}); the gainer stores them in batches and checkpoints the last key stored per
 * source ({@link StreamProgress}), so a gainer killed and restarted asks for the rest only. A source that fails is
 * asked again every {@link #RETRY_DELAY} until the stream completes (the change waits; an operator can abort it).
 *
 * <p>Paced at {@code dht.stream-rate} records per second per source, so streaming takes a bounded share of the
 * gainer's storage threads and disk while it serves clients. Meters: Counters {@code dht.stream.records} and {@code dht.stream.bytes} (records stored here from sources,
 * and their encoded bytes). Non-blocking; the checkpoint file is written on the bounded-elastic scheduler.
 */
public final class RecordStreaming {
    /** Records stored per local write batch. */
    static final int BATCH = 256;
    /** Records between two checkpoints of one source. */
    static final int CHECKPOINT_EVERY = 8 * BATCH;
    /** Pause before a failed source is asked again. */
    static final Duration RETRY_DELAY = Duration.ofSeconds(2);
    private static final Logger log = LoggerFactory.getLogger(RecordStreaming.class);
    private static final byte[] FIRST_KEY = new byte[0];

    private final Membership membership;
    private final LocalStore store;
    private final Supplier<PeerClient> peers;
    private final Path dataDir;
    private final int recordsPerSecond;
    private final Counter records;
    private final Counter bytes;
    private final AtomicLong recordsOfChange = new AtomicLong();
    private final AtomicLong bytesOfChange = new AtomicLong();

    /**
     * @param dataDir          where the checkpoint is kept ({@code dht.data-dir})
     * @param recordsPerSecond {@code dht.stream-rate}: records stored per second from one source, at most
     */
    public RecordStreaming(Membership membership, LocalStore store, Supplier<PeerClient> peers, Path dataDir,
                           int recordsPerSecond, MeterRegistry registry) {
        this.membership = membership;
        this.store = store;
        this.peers = peers;
        this.dataDir = dataDir;
        this.recordsPerSecond = recordsPerSecond;
        this.records = Counter.builder("dht.stream.records")
                .description("records this node stored from other nodes while it gained keys in a membership change")
                .register(registry);
        this.bytes = Counter.builder("dht.stream.bytes").baseUnit("bytes")
                .description("encoded bytes of the records counted in dht.stream.records").register(registry);
    }

    /**
     * The records of this node's store that {@code gainer} gains in the change in progress and this node held
     * before it, after key {@code after} (null: from the first), in key order, tombstones included. The scan runs on
     * the storage threads with backpressure.
     *
     * @throws ChangeRefusedException if no change is in progress here, or its epoch is not {@code epoch} and this
     *                                node cannot tell the caller's placement (409)
     */
    public Flux<KeyedRecord> outgoing(Node gainer, long epoch, byte[] after) {
        Placement placement = membership.placement();
        ClusterChange change = placement.view().change();
        if (change == null) {
            throw new ChangeRefusedException(membership.self() + " holds no membership change at epoch "
                    + placement.view().epoch() + " (asked for epoch " + epoch + ")");
        }
        URI self = membership.self();
        URI to = gainer.url();
        byte[] start = after == null ? FIRST_KEY : Arrays.copyOf(after, after.length + 1); // the next key after it
        return store.range(start, null).filter(entry -> {
            int from = placement.placedFrom(entry.record().from());
            List<Node> old = placement.oldReplicasAtMost(entry.key(), from);
            return Placement.contains(old, self) && !Placement.contains(old, to)
                    && Placement.contains(placement.newReplicasAtMost(entry.key(), from), to);
        });
    }

    /**
     * Pulls every record this node gains in the change in progress (at {@code epoch}) from each live old replica,
     * resuming where a stored checkpoint of the same epoch left off. Completes once all are stored; a node that
     * gains nothing (any node but the joiner of a join) completes at once.
     *
     * @throws ChangeRefusedException if no change is in progress here (409)
     */
    public Mono<Void> pullAll(long epoch) {
        Placement placement = membership.placement();
        ClusterChange change = placement.view().change();
        if (change == null) {
            return Mono.error(new ChangeRefusedException(membership.self() + " holds no membership change at epoch "
                    + placement.view().epoch()));
        }
        Node self = placement.self();
        if (self == null || change.kind() == ChangeKind.JOIN && !change.node().equals(self.url())) {
            return Mono.empty();
        }
        List<Node> sources = placement.members().stream()
                .filter(node -> !node.self())
                .filter(node -> !(change.kind() == ChangeKind.REMOVENODE && node.url().equals(change.node())))
                .toList();
        long started = System.nanoTime();
        return Mono.fromCallable(() -> StreamProgress.load(dataDir, epoch))
                .subscribeOn(Schedulers.boundedElastic())
                .flatMap(progress -> Flux.fromIterable(sources)
                        .flatMap(source -> pullFrom(source, self, epoch, progress), Math.max(1, sources.size()))
                        .then())
                .doOnSuccess(done -> log.info("streaming for the {} of {}: {} records, {} bytes stored here in {} ms",
                        change.kind().token(), change.node(), recordsOfChange.get(), bytesOfChange.get(),
                        Duration.ofNanos(System.nanoTime() - started).toMillis()));
    }

    /** One source's stream, stored in batches with checkpoints, retried from the last checkpoint on failure. */
    private Mono<Void> pullFrom(Node source, Node self, long epoch, StreamProgress progress) {
        URI url = source.url();
        if (progress.isDone(url)) {
            return Mono.empty();
        }
        AtomicLong sinceCheckpoint = new AtomicLong();
        long nanosPerBatch = 1_000_000_000L * BATCH / recordsPerSecond;
        AtomicLong nextBatchAt = new AtomicLong(System.nanoTime());
        return Flux.defer(() -> peers.get().stream(source, self, epoch, progress.after(url)))
                .buffer(BATCH)
                .concatMap(batch -> pace(nextBatchAt, nanosPerBatch).then(store.writeAll(batch)).then(Mono.defer(() -> {
                    long size = 0;
                    for (KeyedRecord entry : batch) {
                        size += entry.key().length + entry.record().encodedSize();
                    }
                    records.increment(batch.size());
                    bytes.increment(size);
                    recordsOfChange.addAndGet(batch.size());
                    bytesOfChange.addAndGet(size);
                    byte[] last = batch.get(batch.size() - 1).key();
                    if (sinceCheckpoint.addAndGet(batch.size()) < CHECKPOINT_EVERY) {
                        return Mono.empty();
                    }
                    sinceCheckpoint.set(0);
                    return Mono.fromRunnable(() -> progress.stored(url, last)).subscribeOn(Schedulers.boundedElastic());
                })), 1)
                .then(Mono.fromRunnable(() -> progress.finished(url)).subscribeOn(Schedulers.boundedElastic()))
                .doOnError(error -> log.warn("streaming from {} failed ({}); again in {} s from the last checkpoint",
                        source, error.toString(), RETRY_DELAY.toSeconds()))
                .retryWhen(Retry.fixedDelay(Long.MAX_VALUE, RETRY_DELAY))
                .then();
    }

    /**
     * Waits until the next batch is due at {@code dht.stream-rate} (a timer on Reactor's parallel scheduler; no thread
     * waits), then books the one after it.
     */
    private static Mono<Void> pace(AtomicLong nextBatchAt, long nanosPerBatch) {
        long now = System.nanoTime();
        long due = nextBatchAt.getAndUpdate(next -> Math.max(next, now) + nanosPerBatch);
        long wait = due - now;
        return wait <= 0 ? Mono.empty() : Mono.delay(Duration.ofNanos(wait)).then();
    }

    /** Records stored here by streaming since this node started (for the change's progress). */
    public long records() {
        return recordsOfChange.get();
    }

    /** Encoded bytes of {@link #records()}. */
    public long bytes() {
        return bytesOfChange.get();
    }
}
