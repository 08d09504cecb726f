package dev.dht.membership;

import dev.dht.cluster.ClusterChange;
import dev.dht.cluster.ClusterView;
import dev.dht.cluster.Membership;
import dev.dht.cluster.Node;
import dev.dht.cluster.Placement;
import dev.dht.node.DurableFile;
import dev.dht.pacing.Pacer;
import dev.dht.peer.PeerClient;
import dev.dht.storage.KeyedRecord;
import dev.dht.storage.LocalStore;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.util.retry.Retry;

/**
 * Cleanup after a membership change (Cassandra's {@code nodetool cleanup}, ScyllaDB's automatic cleanup): every
 * record this node holds but no longer replicates under the view the change ended in is deleted without a
 * tombstone ({@link LocalStore#purgeAll}), so a former owner never brings back a key its owners deleted once their
 * tombstone is collected (scylla#12220). Pending from the moment a change ends ({@value #FILE_NAME} in the data
 * dir, so a restart resumes it) until the pass completes; a pending cleanup on any member refuses the next change.
 *
 * <p>The pass starts when the log leader's {@link TopologyCoordinator} says every member took the ending view
 * ({@link #startAfter}): until then another member may still complete a write it placed under the change, on this
 * node as an old replica, and a pass that had passed that key would leave it. A leader that dies before saying it
 * leaves the word to the next one; there is no fallback by time. A node that restarts with its cleanup pending waits
 * the same way ({@link #resume}): the marker alone never starts a pass.
 *
 * <p>Paced at {@code records-per-second} records read, on the storage threads with backpressure, in the background:
 * each batch, once purged, waits for its turn ({@link Pacer#pause}, a timer: no thread waits).
 * Meters: Counter {@code dht.cleanup.records} (records deleted), Gauge {@code dht.cleanup.pending} (1 while pending).
 */
public final class OwnershipCleanup {
    /** The marker file's name in {@code dht.data-dir}. */
    static final String FILE_NAME = "dht-cleanup-pending";
    static final int BATCH = 256;
    private static final Logger log = LoggerFactory.getLogger(OwnershipCleanup.class);
    private static final byte[] FIRST_KEY = new byte[0];
    /** How long {@link #resume} waits between two checks that the change is final on every member. */
    static final Duration RESUME_RETRY = Duration.ofSeconds(5);
    /** The longest wait for one member to take the view and drain (its drain limit is 30 s). */
    private static final Duration TAKE_LIMIT = Duration.ofSeconds(40);

    private final Membership membership;
    private final Supplier<PeerClient> peers;
    private final LocalStore store;
    private final Path marker;
    private final int recordsPerSecond;
    private final Counter purged;
    private volatile boolean pending;
    private Disposable running;
    private Disposable resuming;

    /**
     * @param peers            the peer client (supplied late), to check after a restart that every member took the
     *                         view
     * @param recordsPerSecond records read per second at most (at least 1)
     */
    public OwnershipCleanup(Membership membership, Supplier<PeerClient> peers, LocalStore store, Path dataDir,
                            int recordsPerSecond, MeterRegistry registry) {
        this.membership = membership;
        this.peers = peers;
        this.store = store;
        this.marker = dataDir.resolve(FILE_NAME);
        this.recordsPerSecond = Math.max(1, recordsPerSecond);
        this.pending = Files.exists(marker);
        this.purged = Counter.builder("dht.cleanup.records")
                .description("records deleted because this node no longer replicates them after a membership change")
                .register(registry);
        Gauge.builder("dht.cleanup.pending", this, cleanup -> cleanup.pending ? 1 : 0)
                .description("1 while this node still has to drop records it no longer replicates").register(registry);
    }

    /**
     * True if {@code node} may hold records it no longer replicates once {@code change} ended in {@code after}, so it
     * needs a pass. Only nodes that lose keys do: a completed join moves keys from the old members to the joiner
     * (every member but the joiner); an aborted decommission or removenode leaves with the gainers what they
     * streamed (every member but the node it was about). A completed decommission or removenode takes keys from no
     * remaining member (removing a node from a rendezvous preference list keeps the others' order, so each new set
     * holds the old set's remaining members), and an aborted join gained nothing but on the joiner, which is no
     * member. Pure.
     */
    public static boolean mayHoldUnreplicated(ClusterChange change, ClusterView after, URI node) {
        // the change's node a member afterwards: a join completed, or a decommission or removenode aborted
        return after.isMember(change.node()) && !node.equals(change.node());
    }

    /** True from the end of a change until this node's cleanup pass completed. */
    public boolean isPending() {
        return pending;
    }

    /**
     * Marks cleanup pending, durably, for the view just adopted; the pass starts on the coordinator's word
     * ({@link #startAfter}), which comes only once every member holds the view. A pass running for an older view
     * stops. Blocks on the
     * marker file: call off event loops.
     */
    public synchronized void schedule() {
        try {
            DurableFile.replace(marker, Long.toString(membership.epoch()).getBytes(StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + marker, e);
        }
        pending = true;
        stop();
    }

    /**
     * Every member took the view of {@code epoch}: starts the pass if this node holds that view and its cleanup is
     * pending (otherwise nothing). Never blocks.
     */
    public synchronized void startAfter(long epoch) {
        if (membership.epoch() == epoch && running == null) {
            start();
        }
    }

    /**
     * At start-up, with a pass pending (the marker of a change that ended before the restart): starts it once the
     * change is final on every member, as the coordinator's word would: this node's view (from its log) has no change
     * in progress, and every other member of it has taken it and drained the requests it coordinated under older
     * views (the view is proposed to each, as the coordinator does before its word; a member that holds it already
     * answers after its drain). Until then it asks again every {@link #RESUME_RETRY}; the coordinator's word, if it
     * comes first, starts the pass as usual. Never blocks.
     */
    public synchronized void resume() {
        if (!pending || resuming != null) {
            return;
        }
        log.info("cleanup pending since before the restart: it starts once every member holds this node's view");
        resuming = finalOnEveryMember()
                .retryWhen(Retry.fixedDelay(Long.MAX_VALUE, RESUME_RETRY)
                        .doBeforeRetry(retry -> log.info("cleanup still waits: {}", retry.failure().getMessage())))
                .subscribe(this::startAfter);
    }

    /** The epoch of this node's view once every other member took it and drained; fails while one did not. */
    private Mono<Long> finalOnEveryMember() {
        return Mono.defer(() -> {
            ClusterView view = membership.view();
            if (view.change() != null) {
                return Mono.error(new IllegalStateException("the " + view.change().kind().token() + " of "
                        + view.change().node() + " is in progress at epoch " + view.epoch()));
            }
            return Flux.fromIterable(membership.nodesOf(view, null))
                    .filter(node -> !node.self())
                    .flatMap(node -> taken(node, view))
                    .then(Mono.just(view.epoch()));
        });
    }

    /** Completes once {@code node} answered a proposal of {@code view} with the same epoch. */
    private Mono<Void> taken(Node node, ClusterView view) {
        return peers.get().propose(node, view, null)
                .timeout(TAKE_LIMIT)
                .onErrorMap(error -> new IllegalStateException(node + " did not take epoch " + view.epoch() + " ("
                        + error.getMessage() + ")"))
                .flatMap(held -> held.epoch() == view.epoch() ? Mono.<Void>empty()
                        : Mono.error(new IllegalStateException(node + " holds epoch " + held.epoch() + ", not "
                                + view.epoch())));
    }

    /** Starts a pass if one is pending; a running pass starts over. */
    private synchronized void start() {
        if (!pending) {
            return;
        }
        if (running != null) {
            running.dispose();
        }
        running = pass()
                .retryWhen(Retry.fixedDelay(Long.MAX_VALUE, Duration.ofSeconds(5))
                        .doBeforeRetry(retry -> log.warn("cleanup failed ({}); again in 5 s", retry.failure().toString())))
                .subscribe();
    }

    /** Stops a pass in progress (shutdown), and the wait to resume one; it resumes at the next start. */
    public synchronized void stop() {
        if (resuming != null) {
            resuming.dispose();
            resuming = null;
        }
        if (running != null) {
            running.dispose();
            running = null;
        }
    }

    private Mono<Void> pass() {
        return Mono.defer(() -> {
            Placement placement = membership.placement();
            if (placement.self() == null || placement.changing()) {
                return Mono.empty(); // not a member (left: emptied by hand), or the next change's own cleanup follows
            }
            long started = System.nanoTime();
            AtomicLong deleted = new AtomicLong();
            Pacer pacer = Pacer.perSecond(recordsPerSecond);
            return store.range(FIRST_KEY, null)
                    .limitRate(BATCH)
                    .buffer(BATCH)
                    .concatMap(batch -> {
                        List<KeyedRecord> notOwned = batch.stream().filter(entry -> !owned(placement, entry)).toList();
                        Mono<Integer> purge = notOwned.isEmpty() ? Mono.just(0) : store.purgeAll(notOwned);
                        return purge.doOnNext(count -> {
                            deleted.addAndGet(count);
                            purged.increment(count);
                        }).then(pacer.pause(batch.size()));
                    }, 1)
                    .then(Mono.fromRunnable(() -> finished(placement.view().epoch(), deleted.get(), started))
                            .subscribeOn(Schedulers.boundedElastic()))
                    .then();
        });
    }

    private synchronized void finished(long epoch, long deleted, long startedNanos) {
        if (membership.epoch() != epoch) {
            return; // a newer view came during the pass: its own pass runs
        }
        try {
            Files.deleteIfExists(marker);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot delete " + marker, e);
        }
        pending = false;
        log.info("cleanup after the change to epoch {}: {} records this node no longer replicates deleted in {} s",
                epoch, deleted, Duration.ofNanos(System.nanoTime() - startedNanos).toSeconds());
    }

    /** True if this node is among the replicas of {@code entry}'s key under {@code placement}. */
    private static boolean owned(Placement placement, KeyedRecord entry) {
        return Placement.contains(placement.newReplicasAtMost(entry.key(), placement.placedFrom(entry.record().from())),
                placement.self().url());
    }
}
