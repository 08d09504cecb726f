package dev.dht.repair;

import dev.dht.cluster.Node;
import dev.dht.node.RebuildGate;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.Disposable;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.util.retry.Retry;

/**
 * Rebuild of a node that lost its store ({@code dht.rebuild=true}, an empty data dir in a running cluster): a repair
 * with every peer in turn; against an empty store every segment differs, so each repair pulls every record this node
 * shares with that peer, and together they bring every record of which this node is one of the first {@code from}
 * replicas (a record only this node held is lost). A repair that fails is retried every {@link #RETRY_DELAY} until
 * it succeeds, so the rebuild completes only with every replica of this node's ranges: a subset could lack writes
 * acknowledged by this node's lost disk and the replicas that are down. Only a peer the operator named in
 * {@code dht.rebuild.accept-missing} is left out after one failure (logged with what it risks). Until the rebuild
 * completed the {@link RebuildGate} keeps replica reads of this node failing, so coordinators read other replicas,
 * and the node is not ready ({@code /v0/status} 503); writes are taken meanwhile. Progress: log lines with counts
 * per peer and {@code dht.rebuild.records}. Runs in the background; never blocks.
 */
public final class NodeRebuild {
    /** Pause before a failed peer is tried again. */
    static final Duration RETRY_DELAY = Duration.ofSeconds(5);
    private static final Logger log = LoggerFactory.getLogger(NodeRebuild.class);
    private final Supplier<List<Node>> peers;
    private final Function<Node, Mono<RepairResult>> repair;
    private final RebuildGate gate;
    private final Set<URI> acceptMissing;
    private final Duration retryDelay;
    private Disposable running;

    /** A rebuild that runs {@code repair} with every peer and opens {@code gate} when all completed. */
    public NodeRebuild(AntiEntropyRepair repair, RebuildGate gate) {
        this(repair, gate, List.of());
    }

    /**
     * As {@link #NodeRebuild(AntiEntropyRepair, RebuildGate)}, the peers of {@code acceptMissing}
     * ({@code dht.rebuild.accept-missing}) left out if they fail once.
     */
    public NodeRebuild(AntiEntropyRepair repair, RebuildGate gate, List<URI> acceptMissing) {
        this(repair::peers, peer -> repair.repair(peer, true), gate, acceptMissing, RETRY_DELAY);
    }

    /**
     * @param peers      the other members of the current view, asked again at every step
     * @param repair     one rebuild repair with a peer (may throw {@link IllegalArgumentException} for a peer that
     *                   just left the view: that attempt fails and is retried, and finds it gone)
     * @param retryDelay pause before a failed peer is tried again
     */
    NodeRebuild(Supplier<List<Node>> peers, Function<Node, Mono<RepairResult>> repair, RebuildGate gate,
                List<URI> acceptMissing, Duration retryDelay) {
        this.peers = peers;
        this.repair = repair;
        this.gate = gate;
        this.acceptMissing = Set.copyOf(acceptMissing);
        this.retryDelay = retryDelay;
    }

    /**
     * Starts the rebuild if the gate is closed, from every peer: one that fails is asked again until it answers
     * (but one of {@code dht.rebuild.accept-missing}). The peers follow the view while it runs: a peer that is no
     * member any more (a joiner rolled back, a member removed) is left out, as the members hold what it held; a member
     * that joined meanwhile is repaired with too. The rebuild completes when every current peer's repair did. Does
     * nothing if the gate is open.
     */
    public synchronized void start() {
        if (!gate.isRebuilding() || running != null) {
            return;
        }
        long started = System.nanoTime();
        AtomicLong total = new AtomicLong();
        log.info("rebuild: streaming the records of this node from {} peers; replica reads refused until done",
                peers.get().size());
        List<URI> urls = peers.get().stream().map(Node::url).toList();
        acceptMissing.stream().filter(node -> !urls.contains(node)).forEach(node -> log.warn(
                "rebuild: dht.rebuild.accept-missing names {}, which is no other member of the cluster", node));
        Set<URI> done = ConcurrentHashMap.newKeySet();
        running = remaining(done, total)
                .publishOn(Schedulers.boundedElastic()) // finish removes the gate's mark: a file, off the event loops
                .then(Mono.fromRunnable(() -> {
                    gate.finish();
                    log.info("rebuild complete: {} records from {} peers in {} s; serving reads as a replica",
                            total.get(), done.size(), Duration.ofNanos(System.nanoTime() - started).toSeconds());
                }))
                .subscribe(null, error -> log.error("rebuild stopped: {}; the node stays not ready", error.toString()));
    }

    /** Rebuilds from the current peers not yet {@code done}, one after another, until none is left. */
    private Mono<Void> remaining(Set<URI> done, AtomicLong total) {
        return Mono.defer(() -> {
            Node peer = peers.get().stream().filter(node -> !done.contains(node.url())).findFirst().orElse(null);
            if (peer == null) {
                return Mono.empty();
            }
            return rebuildFrom(peer)
                    .doOnNext(result -> log.info("rebuild: {} records from {} ({} total so far)", result.pulled(),
                            peer, total.addAndGet(result.pulled())))
                    .then(Mono.fromRunnable(() -> done.add(peer.url())))
                    .then(remaining(done, total));
        });
    }

    private Mono<RepairResult> rebuildFrom(Node peer) {
        // asked anew on every attempt: a peer that left the view meanwhile ends its part without a result
        Mono<RepairResult> attempt = Mono.defer(() -> {
            if (!peers.get().contains(peer)) {
                log.info("rebuild: {} is no member any more; the members hold what it held", peer);
                return Mono.empty();
            }
            return repair.apply(peer);
        });
        if (acceptMissing.contains(peer.url())) {
            return attempt.onErrorResume(error -> {
                log.warn("rebuild: repair with {} failed ({}); going on without it, as dht.rebuild.accept-missing says:"
                        + " writes acknowledged only by it and this node's lost store are not here", peer,
                        error.toString());
                return Mono.empty();
            });
        }
        return attempt
                .doOnError(error -> log.warn("rebuild: repair with {} failed ({}); again in {} s", peer, error.toString(),
                        retryDelay.toSeconds()))
                .retryWhen(Retry.fixedDelay(Long.MAX_VALUE, retryDelay));
    }

    /** Stops a rebuild in progress (on shutdown). */
    public synchronized void stop() {
        if (running != null) {
            running.dispose();
        }
    }
}
