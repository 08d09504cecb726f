package dev.dht.membership;

import dev.dht.cluster.ClusterStart;
import dev.dht.cluster.ClusterStart.Founding;
import dev.dht.cluster.ClusterView;
import dev.dht.cluster.Membership;
import dev.dht.cluster.Node;
import dev.dht.membership.raft.RaftPeers;
import dev.dht.membership.raft.ViewLog;
import dev.dht.peer.PeerClient;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.util.function.Tuples;

/**
 * A founding member's start of its view log: the log's Raft group id is the cluster's id, so a founding member on an
 * empty data dir first learns which cluster it founds. Every {@link #ASK_EVERY} it asks the other founding members
 * for their views and decides by {@link ClusterStart#founding}: the running cluster's view if one holds this node (it
 * takes that view and its log joins that cluster's group; it lost its data and rebuilds), or the new cluster's id
 * once agreed (its log starts with the founding members as the first configuration, and its leader forms the
 * cluster), else it asks again. A view taken meanwhile from a member of a running cluster (it called this node) ends
 * the wait too. Asks on Reactor's schedulers and starts the log (blocking) on bounded-elastic; never blocks an event
 * loop.
 */
public final class ClusterFounding {
    /** The pause between two rounds of questions. */
    static final Duration ASK_EVERY = Duration.ofSeconds(1);
    /** The longest wait for one founding member's view. */
    static final Duration ASK_TIMEOUT = Duration.ofSeconds(2);
    private static final Logger log = LoggerFactory.getLogger(ClusterFounding.class);

    private final Membership membership;
    private final Supplier<PeerClient> peers;
    private final ViewLog viewLog;
    private final RaftPeers raftPeers;
    private final List<URI> nodes;
    private final UUID fresh = UUID.randomUUID();
    private volatile UUID agreed;
    private volatile boolean waitLogged;
    private boolean stopped;
    private Disposable asking;

    /** @param nodes {@code dht.nodes}: the founding members, this node among them */
    public ClusterFounding(Membership membership, Supplier<PeerClient> peers, ViewLog viewLog, RaftPeers raftPeers,
                           List<URI> nodes) {
        this.membership = membership;
        this.peers = peers;
        this.viewLog = viewLog;
        this.raftPeers = raftPeers;
        this.nodes = List.copyOf(nodes);
    }

    /** Starts asking (at once, then every {@link #ASK_EVERY}) until the log started. Returns at once. */
    public synchronized void start() {
        asking = Flux.interval(Duration.ZERO, ASK_EVERY)
                .onBackpressureDrop()
                .concatMap(tick -> round(), 1)
                .takeUntil(started -> started)
                .subscribe(null, error -> log.error("the founding of the cluster stopped", error));
    }

    /** Stops asking (shutdown); a round that is starting the log finishes first, so the log's close stops it. */
    public synchronized void stop() {
        stopped = true;
        if (asking != null) {
            asking.dispose();
        }
    }

    /**
     * The id of the new cluster this node agreed on with the other founding members, or null if it did not (yet, or
     * it took a running cluster's view): a first view of this id is of a brand-new cluster, with nothing to rebuild.
     */
    public UUID agreed() {
        return agreed;
    }

    /** One round: emits true once the log started. */
    private Mono<Boolean> round() {
        URI self = membership.self();
        return Flux.fromIterable(nodes)
                .filter(node -> !node.equals(self))
                .flatMap(node -> peers.get().view(new Node(node, false))
                        .timeout(ASK_TIMEOUT)
                        .map(answer -> Tuples.of(node, answer.view()))
                        .onErrorResume(error -> Mono.empty()))
                .collectMap(answer -> answer.getT1(), answer -> answer.getT2())
                .publishOn(Schedulers.boundedElastic())
                .map(this::decide);
    }

    private synchronized boolean decide(Map<URI, ClusterView> answers) {
        if (stopped) {
            return true;
        }
        try {
            return startLog(answers);
        } catch (RuntimeException e) {
            log.error("the view log did not start ({}); again in {} s", e.getMessage(), ASK_EVERY.toSeconds());
            return false;
        }
    }

    private boolean startLog(Map<URI, ClusterView> answers) {
        if (membership.epoch() > 0) {
            log.warn("{} took the view of the running cluster {} at epoch {} from a member: it lost its data",
                    membership.self(), membership.view().cluster(), membership.epoch());
            viewLog.startAwaiting(raftPeers, membership.view(), null);
            return true;
        }
        Founding founding = ClusterStart.founding(membership.self(), nodes, answers, fresh);
        if (founding.running() != null) {
            log.warn("{} is a member of the running cluster {} (epoch {}) but holds no view: it lost its data; it takes"
                    + " that view and rebuilds", membership.self(), founding.running().cluster(),
                    founding.running().epoch());
            membership.adopt(founding.running());
            viewLog.startAwaiting(raftPeers, founding.running(), null);
            return true;
        }
        if (founding.cluster() != null) {
            agreed = founding.cluster();
            membership.foundCluster(founding.cluster());
            viewLog.start(raftPeers, membership.view());
            return true;
        }
        if (!waitLogged) {
            waitLogged = true;
            log.info("the view log starts once the new cluster's id is known: waiting for {}; asking every {} s",
                    founding.waitsFor(), ASK_EVERY.toSeconds());
        }
        return false;
    }
}
