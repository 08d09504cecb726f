package dev.dht.membership;

import dev.dht.cluster.ClusterView;
import dev.dht.cluster.Membership;
import dev.dht.cluster.Node;
import dev.dht.peer.EpochTracker;
import dev.dht.peer.PeerClient;
import java.net.URI;
import java.time.Duration;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * How cluster views travel between nodes: a node takes a proposed view ({@link #accept}), and catches up with a
 * peer that named a newer epoch on an internal request or answer ({@link #catchUp}), so a node that missed a
 * proposal (restarted, paused) adopts the view before it serves the request that showed it was behind.
 *
 * <p>Storing a view blocks on the file, so adoption runs on Reactor's bounded-elastic scheduler, never on an event
 * loop. Thread-safe.
 */
public final class ViewExchange implements EpochTracker {
    private static final Logger log = LoggerFactory.getLogger(ViewExchange.class);
    private final Membership membership;
    private final Supplier<PeerClient> peers;
    private final Duration drainLimit;
    private final AtomicBoolean catchingUp = new AtomicBoolean();

    /**
     * @param peers      the peer client (supplied late: it sends this exchange's epoch)
     * @param drainLimit how long requests coordinated under a replaced view may run before they are refused
     *                   ({@link Membership#drained})
     */
    public ViewExchange(Membership membership, Supplier<PeerClient> peers, Duration drainLimit) {
        this.membership = membership;
        this.peers = peers;
        this.drainLimit = drainLimit;
    }

    @Override
    public long epoch() {
        return membership.epoch();
    }

    @Override
    public URI self() {
        return membership.self();
    }

    @Override
    public UUID cluster() {
        return membership.cluster().orElse(null);
    }

    @Override
    public void newerEpochSeen(Node peer, long epoch) {
        catchUp(peer.url(), epoch).subscribe(null, error -> log.debug("catching up with {} failed: {}", peer,
                error.toString()));
    }

    /**
     * Completes once this node holds epoch {@code epoch} or newer, fetching {@code from}'s view if it does not. One
     * fetch at a time: a caller that finds one running waits for its view by polling the epoch. A node with no view
     * of its own (yet to join) takes only a view that holds it. Fails if the fetch fails.
     */
    public Mono<Void> catchUp(URI from, long epoch) {
        if (membership.epoch() >= epoch) {
            return Mono.empty();
        }
        return Mono.defer(() -> {
            if (membership.epoch() >= epoch) {
                return Mono.empty();
            }
            if (!catchingUp.compareAndSet(false, true)) {
                return Mono.delay(Duration.ofMillis(5)).then(catchUp(from, epoch));
            }
            return peers.get().view(new Node(from, false))
                    .publishOn(Schedulers.boundedElastic())
                    .doOnNext(answer -> membership.adoptIfConcerned(answer.view()))
                    .doFinally(signal -> catchingUp.set(false))
                    .then();
        });
    }

    /**
     * Takes a proposed view: adopts it if it is newer than this node's, then waits until the requests this node
     * coordinated under older epochs finished, and completes with the view this node then holds. Runs the file write
     * on the bounded-elastic scheduler.
     */
    public Mono<ClusterView> accept(ClusterView proposed) {
        Objects.requireNonNull(proposed, "proposed");
        return Mono.fromCallable(() -> {
                    synchronized (this) {
                        membership.adopt(proposed);
                        return proposed.epoch();
                    }
                })
                .subscribeOn(Schedulers.boundedElastic())
                .flatMap(epoch -> membership.drained(epoch, drainLimit))
                .then(Mono.fromSupplier(membership::view));
    }
}
