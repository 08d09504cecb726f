package dev.dht.membership;

import dev.dht.cluster.ClusterChange;
import dev.dht.cluster.Membership;
import dev.dht.cluster.Node;
import dev.dht.cluster.Placement;
import dev.dht.pacing.Pacer;
import dev.dht.peer.InternalProtocol;
import dev.dht.peer.PeerClient;
import dev.dht.peer.StreamPart;
import dev.dht.storage.KeyedRecord;
import dev.dht.storage.LocalStore;
import dev.dht.storage.Record;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import java.util.function.Supplier;
import net.openhft.hashing.LongHashFunction;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.util.retry.Retry;

/**
 * Moves the records a node gains in a membership change (Cassandra's bootstrap and decommission streaming, Riak's
 * handoff). A key's gainers are its new replicas that were not old ones ({@link Placement}); a gainer must end with
 * the newest version any live old replica holds (the union: CASSANDRA-2434 streamed from one replica only and lost
 * what only another held), without receiving each record once per old replica.
 *
 * <p>So each gainer pulls in two passes from every live old replica (not the node a removenode removes) at once:
 * <ol>
 *   <li>{@link StreamPart#PRIMARY}: each source sends in full the records whose primary source it is (the first old
 *       replica of the key), so every gained key arrives once;</li>
 *   <li>{@link StreamPart#DIGESTS}, after every first pass completed: each source sends a digest (key, timestamp,
 *       value hash) of the other gained records it holds; the gainer reads from that source only the ones where it
 *       misses that version ({@link #pullMissing}), newest record winning as in any write.</li>
 * </ol>
 * With three old replicas of 1 KiB records this moves about one record and two 40-byte digests per gained key
 * instead of three records (docs/membership.md, "Streaming").
 *
 * <p>A source scans its whole store in key order on its storage threads, with backpressure, and sends its part
 * ({@link #outgoing}); the gainer stores in batches and checkpoints the last key done per source and pass
 * ({@link StreamProgress}), so a gainer killed and restarted asks for the rest only. A source that fails is asked
 * again every {@link #RETRY_DELAY} until the stream completes (the change waits; an operator can abort it), or until
 * this node stops ({@link #close}).
 *
 * <p>Paced at {@code dht.stream-rate} records (or digests) per second per source, so streaming takes a bounded share
 * of the gainer's storage threads and disk while it serves clients: each batch waits for its turn before it is
 * stored ({@link Pacer#pause}, a timer: no thread waits). Meters: Counters {@code dht.stream.records} and
 * {@code dht.stream.bytes} (records stored here from sources, and their encoded bytes; digests are not counted).
 * Non-blocking; the checkpoint file is written on the bounded-elastic scheduler.
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
    private static final LongHashFunction VALUE_HASH = LongHashFunction.xx3();

    private final Membership membership;
    private final LocalStore store;
    private final Supplier<PeerClient> peers;
    private final Path dataDir;
    private final int recordsPerSecond;
    private final Counter records;
    private final Counter bytes;
    private final AtomicLong recordsOfChange = new AtomicLong();
    private final AtomicLong bytesOfChange = new AtomicLong();
    /** The pull in progress per epoch, shared by every caller. */
    private final Map<Long, Mono<Void>> pulls = new ConcurrentHashMap<>();
    private final Supplier<Set<URI>> lost;
    private volatile boolean closed;

    /**
     * @param dataDir          where the checkpoint is kept ({@code dht.data-dir})
     * @param recordsPerSecond {@code dht.stream-rate}: records stored per second from one source, at most
     * @param lost             the members lost in a recovery of this node's view log: never a source (they are dead
     *                         for good)
     */
    public RecordStreaming(Membership membership, LocalStore store, Supplier<PeerClient> peers, Path dataDir,
                           int recordsPerSecond, MeterRegistry registry, Supplier<Set<URI>> lost) {
        this.lost = lost;
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
     * The {@code part} of the records of this node's store that {@code gainer} gains in the change in progress and
     * this node held before it, after key {@code after} (null: from the first), in key order, tombstones included.
     * The scan runs on the storage threads with backpressure.
     *
     * @throws ChangeRefusedException if no change is in progress here, or its epoch is not {@code epoch} and this
     *                                node cannot tell the caller's placement (409)
     */
    public Flux<KeyedRecord> outgoing(Node gainer, long epoch, byte[] after, StreamPart part) {
        Placement placement = membership.placement();
        ClusterChange change = placement.view().change();
        if (change == null) {
            throw new ChangeRefusedException(membership.self() + " holds no membership change at epoch "
                    + placement.view().epoch() + " (asked for epoch " + epoch + ")");
        }
        URI self = membership.self();
        URI to = gainer.url();
        byte[] start = after == null ? FIRST_KEY : Arrays.copyOf(after, after.length + 1); // the next key after it
        return store.range(start, null).handle((entry, sink) -> {
            int from = placement.placedFrom(entry.record().from());
            List<Node> old = placement.oldReplicasAtMost(entry.key(), from);
            if (!Placement.contains(old, self) || Placement.contains(old, to)
                    || !Placement.contains(placement.newReplicasAtMost(entry.key(), from), to)) {
                return;
            }
            if (part == StreamPart.ALL) {
                sink.next(entry);
            } else if ((part == StreamPart.PRIMARY) == self.equals(primarySource(old, change))) {
                sink.next(part == StreamPart.PRIMARY ? entry : new KeyedRecord(entry.key(), digest(entry.record())));
            }
        });
    }

    /** The first of {@code old} that {@code change} does not remove: the one source that sends the key in full. */
    static URI primarySource(List<Node> old, ClusterChange change) {
        for (Node node : old) {
            if (!change.removes(node.url())) {
                return node.url();
            }
        }
        return null;
    }

    /**
     * {@code record} with its value replaced by the value's 8-byte xxHash3 (a tombstone as it is): equal for two
     * copies of one version, different (but for a hash collision at an equal timestamp) otherwise.
     */
    static Record digest(Record record) {
        if (record.isTombstone()) {
            return record;
        }
        byte[] hash = ByteBuffer.allocate(Long.BYTES).putLong(VALUE_HASH.hashBytes(record.value())).array();
        return Record.value(record.timestamp(), hash, record.from(), record.expiresAtMillis());
    }

    /**
     * Pulls every record this node gains in the change in progress (at {@code epoch}) from each live old replica,
     * resuming where a stored checkpoint of the same epoch left off. Completes once all are stored; a node that
     * gains nothing ({@link ClusterChange#gains}: any node but the joiner of a join, the leaver of a decommission or
     * removenode) completes at once. Asked again for the same epoch while it
     * runs (a new leader of the view log asks again), the caller joins the pull in progress.
     *
     * @throws ChangeRefusedException if no change is in progress here (409)
     */
    public Mono<Void> pullAll(long epoch) {
        return pullAll(epoch, Set.of());
    }

    /**
     * As {@link #pullAll(long)}, taking nothing from the members of {@code lost} either: the ones the coordinator's
     * recovery of the view log declared lost, which this node may not know of (only the recovered node holds the
     * marker).
     */
    public Mono<Void> pullAll(long epoch, Set<URI> lost) {
        return Mono.defer(() -> pulls.computeIfAbsent(epoch, running -> pullAllOnce(running, lost)
                .doFinally(signal -> pulls.remove(running)).share()));
    }

    /** {@link #pullAll} proper; a second caller of the same epoch joins the pull in progress instead. */
    private Mono<Void> pullAllOnce(long epoch, Set<URI> alsoLost) {
        Placement placement = membership.placement();
        ClusterChange change = placement.view().change();
        if (change == null) {
            return Mono.error(new ChangeRefusedException(membership.self() + " holds no membership change at epoch "
                    + placement.view().epoch()));
        }
        Node self = placement.self();
        if (self == null || !change.gains(self.url())) {
            return Mono.empty();
        }
        List<Node> sources = placement.members().stream()
                .filter(node -> !node.self())
                .filter(node -> !change.removes(node.url()))
                .filter(node -> !lost.get().contains(node.url()) && !alsoLost.contains(node.url()))
                .toList();
        long started = System.nanoTime();
        int parallel = Math.max(1, sources.size());
        return Mono.fromCallable(() -> StreamProgress.load(dataDir, epoch))
                .subscribeOn(Schedulers.boundedElastic())
                .flatMap(progress -> Flux.fromIterable(sources)
                        .flatMap(source -> pullRecords(source, self, epoch, progress), parallel)
                        .thenMany(Flux.fromIterable(sources)
                                .flatMap(source -> pullMissing(source, self, epoch, progress), parallel))
                        .then())
                .doOnSuccess(done -> log.info("streaming for the {} of {}: {} records, {} bytes stored here in {} ms",
                        change.kind().token(), change.node(), recordsOfChange.get(), bytesOfChange.get(),
                        Duration.ofNanos(System.nanoTime() - started).toMillis()));
    }

    /** First pass: the records whose primary source {@code source} is, stored as they come. */
    private Mono<Void> pullRecords(Node source, Node self, long epoch, StreamProgress progress) {
        return pull(source, self, epoch, progress, StreamPart.PRIMARY, store::writeAll);
    }

    /**
     * Second pass, after every first pass completed: the digests of the other records {@code source} holds; the
     * ones this node misses (absent here, or here in an older or other version) are read from {@code source} in
     * batches of {@link InternalProtocol#READ_BATCH_MAX_KEYS} and stored.
     */
    private Mono<Void> pullMissing(Node source, Node self, long epoch, StreamProgress progress) {
        return pull(source, self, epoch, progress, StreamPart.DIGESTS, digests -> {
            List<byte[]> keys = digests.stream().map(KeyedRecord::key).toList();
            return store.readAll(keys, Integer.MAX_VALUE).flatMap(held -> {
                List<byte[]> missing = new ArrayList<>();
                List<KeyedRecord> tombstones = new ArrayList<>();
                for (int i = 0; i < digests.size(); i++) {
                    Record theirs = digests.get(i).record();
                    Record ours = held.get(i).orElse(null);
                    if (ours != null && (digest(ours).equals(theirs) || theirs.timestamp() < ours.timestamp())) {
                        continue;
                    }
                    if (theirs.isTombstone()) {
                        tombstones.add(digests.get(i)); // a tombstone's digest is the tombstone
                    } else {
                        missing.add(keys.get(i));
                    }
                }
                Mono<Void> stored = tombstones.isEmpty() ? Mono.empty()
                        : store.writeAll(tombstones).then(Mono.fromRunnable(() -> counted(tombstones)));
                return stored.thenMany(Flux.fromIterable(missing))
                        .buffer(InternalProtocol.READ_BATCH_MAX_KEYS)
                        .concatMap(batch -> fetch(source, batch), 1)
                        .then();
            });
        });
    }

    /** {@code keys} read from {@code source} (one by one where its batch answer left them out), then stored. */
    private Mono<Void> fetch(Node source, List<byte[]> keys) {
        PeerClient client = peers.get();
        return client.readBatch(source, keys)
                .flatMapMany(answers -> Flux.range(0, keys.size()).concatMap(i -> {
                    Optional<Record> answer = answers.get(i);
                    Mono<Optional<Record>> read = answer != null ? Mono.just(answer)
                            : client.read(source, new String(keys.get(i), StandardCharsets.UTF_8));
                    return read.flatMap(record -> Mono.justOrEmpty(record.map(r -> new KeyedRecord(keys.get(i), r))));
                }, 1))
                .collectList()
                .flatMap(fetched -> fetched.isEmpty() ? Mono.<Void>empty()
                        : store.writeAll(fetched).then(Mono.fromRunnable(() -> counted(fetched))));
    }

    /**
     * One source's stream of {@code part}, handed to {@code handler} in batches of {@link #BATCH} with checkpoints,
     * retried from the last checkpoint on failure.
     */
    private Mono<Void> pull(Node source, Node self, long epoch, StreamProgress progress, StreamPart part,
                            Function<List<KeyedRecord>, Mono<Void>> handler) {
        String stream = StreamProgress.stream(source.url(), part == StreamPart.DIGESTS);
        if (progress.isDone(stream)) {
            return Mono.empty();
        }
        AtomicLong sinceCheckpoint = new AtomicLong();
        Pacer pacer = Pacer.perSecond(recordsPerSecond);
        return Flux.defer(() -> peers.get().stream(source, self, epoch, progress.after(stream), part))
                .buffer(BATCH)
                .concatMap(batch -> pacer.pause(batch.size()).then(handler.apply(batch)).then(Mono.defer(() -> {
                    if (part != StreamPart.DIGESTS) {
                        counted(batch);
                    }
                    byte[] last = batch.get(batch.size() - 1).key();
                    if (sinceCheckpoint.addAndGet(batch.size()) < CHECKPOINT_EVERY) {
                        return Mono.empty();
                    }
                    sinceCheckpoint.set(0);
                    return Mono.fromRunnable(() -> progress.stored(stream, last))
                            .subscribeOn(Schedulers.boundedElastic());
                })), 1)
                .then(Mono.fromRunnable(() -> progress.finished(stream)).subscribeOn(Schedulers.boundedElastic()))
                .doOnError(error -> {
                    if (!closed) {
                        log.warn("streaming {} from {} failed ({}); again in {} s from the last checkpoint",
                                part.token(), source, error.toString(), RETRY_DELAY.toSeconds());
                    }
                })
                .retryWhen(Retry.fixedDelay(Long.MAX_VALUE, RETRY_DELAY).filter(error -> !closed))
                .then();
    }

    /** Counts {@code batch}, stored here, in the meters and the change's progress. */
    private void counted(List<KeyedRecord> batch) {
        long size = 0;
        for (KeyedRecord entry : batch) {
            size += entry.key().length + entry.record().encodedSize();
        }
        records.increment(batch.size());
        bytes.increment(size);
        recordsOfChange.addAndGet(batch.size());
        bytesOfChange.addAndGet(size);
    }

    /**
     * Stops asking sources again: a pull whose source fails after this fails with that error instead of retrying
     * every {@link #RETRY_DELAY} (a stopped node's pulls kept retrying on its closed event loops). Its checkpoint
     * stays, so the node resumes the pull where it left off once it runs again. Called when the node stops; never
     * blocks.
     */
    public void close() {
        closed = true;
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
