package dev.dht.repair;

import dev.dht.cluster.Node;
import dev.dht.metrics.RepairMetrics;
import dev.dht.replication.Replica;
import dev.dht.storage.LocalStore;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Anti-entropy repair of this node with its peers, one {@link RepairSession} per repair of a pair; started by
 * {@link RepairScheduler} every {@code dht.repair.interval}, on demand by {@link RepairEndpoint}
 * ({@code POST /actuator/repair}) and by {@link NodeRebuild}. One repair at a time per peer: a second one asked
 * for meanwhile fails with {@link IllegalStateException} (for {@link #repairAll} it is reported in the result).
 * Each completed repair is logged with its counts and recorded in {@link RepairMetrics}. Non-blocking.
 */
public final class AntiEntropyRepair {
    private static final Logger log = LoggerFactory.getLogger(AntiEntropyRepair.class);
    private final RepairScan scan;
    private final RepairClient client;
    private final RepairScope scope;
    private final LocalStore store;
    private final Supplier<List<Node>> peers;
    private final Function<Node, Replica> replicas;
    private final int maxRate;
    private final RepairMetrics metrics;
    /** Records between two progress lines of a rebuild. */
    static final long REBUILD_LOG_EVERY = 10_000;
    private final Set<Node> running = ConcurrentHashMap.newKeySet();
    private final AtomicLong rebuildRecords = new AtomicLong();

    /**
     * @param peers    every peer (not this node) of the current cluster view, asked on each use
     * @param replicas a peer's replica, whose write path receives pushed records
     * @param maxRate  {@code dht.repair.max-rate}, keys per second per repair
     */
    public AntiEntropyRepair(RepairScan scan, RepairClient client, RepairScope scope, LocalStore store,
                             Supplier<List<Node>> peers, Function<Node, Replica> replicas, int maxRate,
                             RepairMetrics metrics) {
        this.scan = scan;
        this.client = client;
        this.scope = scope;
        this.store = store;
        this.peers = peers;
        this.replicas = replicas;
        this.maxRate = maxRate;
        this.metrics = metrics;
    }

    /** The peers: the other members of the current cluster view, in its order. */
    public List<Node> peers() {
        return peers.get();
    }

    /** Repairs this node with {@code peer} once (see {@link #repair(Node, boolean)}, not as a rebuild). */
    public Mono<RepairResult> repair(Node peer) {
        return repair(peer, false);
    }

    /**
     * Repairs this node with {@code peer} once.
     *
     * @param rebuild count the records written here as rebuild progress too ({@code dht.rebuild.records})
     * @throws IllegalArgumentException if {@code peer} is not a peer (at once)
     */
    public Mono<RepairResult> repair(Node peer, boolean rebuild) {
        if (!peers.get().contains(peer)) {
            throw new IllegalArgumentException(peer + " is not a peer of this node");
        }
        Replica replica = replicas.apply(peer);
        return Mono.defer(() -> {
            if (!running.add(peer)) {
                return Mono.error(new IllegalStateException("a repair with " + peer + " is running already"));
            }
            RepairSession session = new RepairSession(scan, client, scope, store, replica, peer, maxRate,
                    records -> pulled(peer, records, rebuild), records -> metrics.pushed(peer, records));
            return session.run((ranges, differing) -> metrics.compared(peer, ranges, differing))
                    .doOnNext(result -> {
                        metrics.completed(peer, System.currentTimeMillis() / 1000);
                        log.info("repair with {}: {} ranges compared, {} segments differed, {} records compared, "
                                        + "{} pulled, {} pushed in {} ms (trees built in {} ms)", peer,
                                result.rangesCompared(), result.segmentsDiffered(), result.recordsCompared(),
                                result.pulled(), result.pushed(), result.millis(), result.treeMillis());
                    })
                    .doFinally(signal -> running.remove(peer));
        });
    }

    /** Counts pulled records; a rebuild also logs its progress every {@link #REBUILD_LOG_EVERY} records. */
    private void pulled(Node peer, long records, boolean rebuild) {
        metrics.pulled(peer, records, rebuild);
        if (rebuild) {
            long before = rebuildRecords.getAndAdd(records);
            if ((before + records) / REBUILD_LOG_EVERY > before / REBUILD_LOG_EVERY) {
                log.info("rebuild: {} records written so far, now from {}", before + records, peer);
            }
        }
    }

    /**
     * Repairs this node with every peer, one after another; a failed repair is logged and reported in its
     * result, and the others still run.
     */
    public Mono<List<RepairResult>> repairAll() {
        return Flux.fromIterable(peers())
                .concatMap(peer -> {
                    long started = System.nanoTime();
                    return repair(peer).onErrorResume(error -> {
                        log.warn("repair with {} failed: {}", peer, error.toString());
                        return Mono.just(RepairResult.failed(peer.name(),
                                Duration.ofNanos(System.nanoTime() - started).toMillis(), error));
                    });
                })
                .collectList();
    }
}
