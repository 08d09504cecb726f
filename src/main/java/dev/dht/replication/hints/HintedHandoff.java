package dev.dht.replication.hints;

import dev.dht.cluster.Membership;
import dev.dht.cluster.Node;
import dev.dht.cluster.PeerHealth;
import dev.dht.failure.OverloadedException;
import dev.dht.replication.Replica;
import dev.dht.storage.Record;
import dev.dht.storage.StorageScheduler;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.io.IOException;
import java.time.Duration;
import java.util.Collection;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Hinted handoff (after Dynamo and Cassandra): a replica write that does not reach its peer is kept by the
 * coordinator as a hint in its {@link HintStore} and replayed to the peer once it is seen up ({@link HintReplayer}),
 * so a replica that missed writes while down catches up without waiting for a read. No new hints for a peer down
 * longer than {@code dht.hints.window} (as {@link PeerHealth#downFor} sees it; Cassandra's {@code max_hint_window}),
 * nor beyond {@code dht.hints.max-size} bytes. Neither ever delays or fails a client write: a hint is offered after
 * the replica call failed, stored on the hints thread, and dropped (counted) whenever it cannot be kept.
 *
 * <p>Metrics: Counters {@code dht.hints.stored}, {@code dht.hints.dropped} (tag reason: {@code window},
 * {@code full}, {@code disk}, {@code overloaded}, {@code error}, {@code removed_peer}) and
 * {@code dht.hints.replayed} ({@link HintReplayer}); Gauges {@code dht.hints.pending} (tag peer) and
 * {@code dht.hints.size} (bytes).
 *
 * <p>Threading: {@link #offer} and {@link #hinting} are non-blocking (safe on an event loop); all hint store I/O
 * runs on one thread of its own ({@code hints-1}) with a bounded queue.
 */
public final class HintedHandoff implements AutoCloseable {
    private static final Logger log = LoggerFactory.getLogger(HintedHandoff.class);
    /** Hint store tasks that may wait for the hints thread; an offer beyond it is dropped (reason overloaded). */
    static final int QUEUE_CAPACITY = 8192;
    /** Reason tag of hints deleted because their peer is no member of the cluster view any more. */
    static final String REMOVED_PEER = "removed_peer";
    /** Reason tag of hints deleted unsent because the peer no longer replicates their key. */
    static final String NOT_REPLICA = "not_replica";

    private final HintStore store;
    private final StorageScheduler thread = new StorageScheduler(1, QUEUE_CAPACITY, "hints");
    private final PeerHealth health;
    private final boolean enabled;
    private final Duration window;
    private final long maxBytes;
    private final HintReplayer replayer;
    private final Counter stored;
    private final Map<String, Counter> dropped = new ConcurrentHashMap<>();
    private final MeterRegistry registry;
    private volatile boolean closing;

    /**
     * @param enabled    {@code dht.hints.enabled}: store new hints (hints already stored are replayed either way)
     * @param window     {@code dht.hints.window}
     * @param maxBytes   {@code dht.hints.max-size} in bytes
     * @param replayRate {@code dht.hints.replay-rate}: hints replayed per second to one peer, at most
     */
    public HintedHandoff(HintStore store, PeerHealth health, boolean enabled, Duration window, long maxBytes,
                         int replayRate, MeterRegistry registry) {
        this(store, health, enabled, window, maxBytes, replayRate, null, registry);
    }

    /**
     * As above, replaying a hint only while the peer is still one of the key's replicas under the cluster view
     * ({@link dev.dht.cluster.Placement#replicates}); other hints are deleted unsent, counted in
     * {@code dht.hints.dropped{reason=not_replica}}: after a membership change moved the key away, the record on the
     * peer would be one it no longer replicates, left behind by cleanup (it could later bring a deleted key back).
     * Each slice of replays is checked and sent under one view and counts as a request under it
     * ({@link Membership#enter}), so a membership step waits for it; a revoked slice sends no more.
     *
     * @param membership the cluster view, or null to replay every hint (no view)
     */
    public HintedHandoff(HintStore store, PeerHealth health, boolean enabled, Duration window, long maxBytes,
                         int replayRate, Membership membership, MeterRegistry registry) {
        this.store = store;
        this.health = health;
        this.enabled = enabled;
        this.window = window;
        this.maxBytes = maxBytes;
        this.registry = registry;
        this.stored = Counter.builder("dht.hints.stored").description("replica writes kept as hints")
                .register(registry);
        for (String reason : new String[] {"window", "full", "disk", "overloaded", "error", REMOVED_PEER, NOT_REPLICA}) {
            droppedCounter(reason);
        }
        Gauge.builder("dht.hints.size", store, HintStore::sizeBytes).baseUnit("bytes")
                .description("bytes of the hints kept (keys and values)").register(registry);
        this.replayer = new HintReplayer(store, thread.scheduler(), health, replayRate,
                membership == null ? null : membership::enter,
                droppedCounter(NOT_REPLICA), registry);
    }

    /**
     * The replica to coordinate with for {@code peer}: {@code replica} whose failed writes become hints. Also
     * registers {@code replica} itself (not the hinting one, so a failed replay adds no hint) for replay, with Gauge
     * {@code dht.hints.pending} for the peer.
     */
    public Replica hinting(Node peer, Replica replica) {
        Gauge.builder("dht.hints.pending", store, hints -> hints.pending(peer.name()))
                .description("hints kept for the peer, not yet replayed").tag("peer", peer.name()).register(registry);
        replayer.replayTo(peer, replica);
        return new HintingReplica(peer, replica, this);
    }

    /**
     * Deletes the hints kept for peers not in {@code nodes}, the members of the cluster view (peers removed since
     * the hints were stored: nothing would ever replay them), counts them in
     * {@code dht.hints.dropped{reason=removed_peer}} and logs one line with the count. It runs at start-up, before any
     * replay, and with every view this node adopts as a member ({@link HintsOfRemovedPeers}), not only once; it
     * blocks on the hint store (the caller's thread, not an event loop). Below the free-space reserve the rest is
     * kept (logged) and deleted with a later view or start; the batches deleted before that are then not counted.
     */
    public void dropHintsOfRemovedPeers(Collection<Node> nodes) {
        Set<String> names = nodes.stream().map(Node::name).collect(Collectors.toSet());
        long removed;
        try {
            removed = store.removePeersOtherThan(names);
        } catch (OverloadedException e) {
            log.warn("hints of peers no longer members of the cluster view not deleted: {}", e.getMessage());
            return;
        }
        if (removed > 0) {
            droppedCounter(REMOVED_PEER).increment(removed);
            log.info("deleted {} hints of peers no longer members of the cluster view", removed);
        }
    }

    /**
     * Keeps a hint of {@code record} under {@code key} for {@code peer}, whose replica write failed; or drops it
     * (counted) if hints are off, the peer has been down longer than the window, the store is full, the disk is
     * below {@code dht.storage.min-free-space} or the hints thread is behind. Non-blocking; never throws.
     */
    void offer(Node peer, byte[] key, Record record) {
        if (!enabled || closing) {
            return;
        }
        if (health.downFor(peer).compareTo(window) > 0) {
            droppedCounter("window").increment();
            return;
        }
        try {
            thread.scheduler().schedule(() -> store(peer, key, record));
        } catch (RejectedExecutionException e) {
            droppedCounter("overloaded").increment();
        }
    }

    /** Runs on the hints thread. */
    private void store(Node peer, byte[] key, Record record) {
        if (store.sizeBytes() + HintStore.sizeOf(peer.name(), key, record) > maxBytes) {
            droppedCounter("full").increment();
            return;
        }
        try {
            store.add(peer.name(), key, record);
            stored.increment();
        } catch (OverloadedException e) { // the hint store refuses only below the free-space reserve
            droppedCounter("disk").increment();
        } catch (RuntimeException e) {
            droppedCounter("error").increment();
            log.warn("could not store a hint for {}: {}", peer, e.toString());
        }
    }

    private Counter droppedCounter(String reason) {
        return dropped.computeIfAbsent(reason, tag -> Counter.builder("dht.hints.dropped")
                .description("hints not kept, by reason").tag("reason", tag).register(registry));
    }

    /** Hints kept for the peer named {@code peer} ({@link Node#name()}). Any thread; never blocks. */
    public long pending(String peer) {
        return store.pending(peer);
    }

    /**
     * Stops replaying, stores the hints already offered (waits up to 10 s for the hints thread), then closes the
     * store. Blocking; called once on shutdown.
     */
    @Override
    public void close() throws IOException {
        closing = true;
        replayer.close();
        thread.shutdown(10_000);
        store.close();
    }
}
