package dev.dht.repair;

import dev.dht.cluster.Node;
import dev.dht.node.RebuildGate;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
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
    private final AntiEntropyRepair repair;
    private final RebuildGate gate;
    private final Set<URI> acceptMissing;
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
        this.repair = repair;
        this.gate = gate;
        this.acceptMissing = Set.copyOf(acceptMissing);
    }

    /**
     * Starts the rebuild if the gate is closed, from every peer: one that fails is asked again until it answers
     * (but one of {@code dht.rebuild.accept-missing}). Does nothing if the gate is open.
     */
    public synchronized void start() {
        if (!gate.isRebuilding() || running != null) {
            return;
        }
        long started = System.nanoTime();
        AtomicLong total = new AtomicLong();
        log.info("rebuild: streaming the records of this node from {} peers; replica reads refused until done",
                repair.peers().size());
        List<URI> peers = repair.peers().stream().map(Node::url).toList();
        acceptMissing.stream().filter(node -> !peers.contains(node)).forEach(node -> log.warn(
                "rebuild: dht.rebuild.accept-missing names {}, which is no other member of the cluster", node));
        running = Flux.fromIterable(repair.peers())
                .concatMap(peer -> rebuildFrom(peer).doOnNext(result -> log.info(
                        "rebuild: {} records from {} ({} total so far)", result.pulled(), peer,
                        total.addAndGet(result.pulled()))))
                .publishOn(Schedulers.boundedElastic()) // finish removes the gate's mark: a file, off the event loops
                .then(Mono.fromRunnable(() -> {
                    gate.finish();
                    log.info("rebuild complete: {} records from {} peers in {} s; serving reads as a replica",
                            total.get(), repair.peers().size(), Duration.ofNanos(System.nanoTime() - started).toSeconds());
                }))
                .subscribe();
    }

    private Mono<RepairResult> rebuildFrom(Node peer) {
        if (acceptMissing.contains(peer.url())) {
            return repair.repair(peer, true).onErrorResume(error -> {
                log.warn("rebuild: repair with {} failed ({}); going on without it, as dht.rebuild.accept-missing says:"
                        + " writes acknowledged only by it and this node's lost store are not here", peer,
                        error.toString());
                return Mono.empty();
            });
        }
        return repair.repair(peer, true)
                .doOnError(error -> log.warn("rebuild: repair with {} failed ({}); again in {} s", peer, error.toString(),
                        RETRY_DELAY.toSeconds()))
                .retryWhen(Retry.fixedDelay(Long.MAX_VALUE, RETRY_DELAY));
    }

    /** Stops a rebuild in progress (on shutdown). */
    public synchronized void stop() {
        if (running != null) {
            running.dispose();
        }
    }
}
