package dev.dht.membership;

import dev.dht.cluster.ClusterView;
import dev.dht.cluster.Membership;
import dev.dht.cluster.Node;
import dev.dht.cluster.ViewConfirmation;
import dev.dht.peer.PeerClient;
import dev.dht.peer.PeerView;
import java.net.URI;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * Checks this node's cluster view with the other members before it serves clients: after its start, and after it
 * finds it was paused for {@link #PAUSE} or longer (a long GC pause, a frozen VM, SIGSTOP: HBase's JvmPauseMonitor
 * idea), since it may have been removed meanwhile. Until a check completes, client requests get 503
 * ({@code view-check}). A check asks every other member of the view for theirs (each within {@link #ASK_TIMEOUT})
 * and adopts the newest, so a node removed while it was frozen learns it is no member before it acknowledges
 * anything; if no member answers (a partition), the node goes on serving under its last view, as every node keeps
 * serving while the view log has no leader.
 *
 * <p>A ticker thread of its own ({@code view-check-ticker}) beats every {@link #TICK}; the check runs on Reactor's
 * schedulers, the adoption of a view on bounded-elastic. Never blocks an event loop.
 */
public final class ViewCheck {
    /** How often the ticker beats. */
    static final Duration TICK = Duration.ofMillis(500);
    /** A gap between two beats at least this long is a pause. */
    static final Duration PAUSE = Duration.ofSeconds(2);
    /** The longest wait for one member's view. */
    static final Duration ASK_TIMEOUT = Duration.ofSeconds(2);
    /** The longest the check at start-up may hold the start. */
    static final Duration START_LIMIT = Duration.ofSeconds(10);
    private static final Logger log = LoggerFactory.getLogger(ViewCheck.class);

    private final Membership membership;
    private final Supplier<PeerClient> peers;
    private final ViewConfirmation confirmation;
    private final AtomicBoolean checking = new AtomicBoolean();
    private Disposable ticker;

    /** From its construction on, clients are served only once {@link #start} has checked the view. */
    public ViewCheck(Membership membership, Supplier<PeerClient> peers) {
        this.membership = membership;
        this.peers = peers;
        this.confirmation = new ViewConfirmation(PAUSE, () -> {
            log.warn("this node was paused for {} s or more: it checks its cluster view before it serves again",
                    PAUSE.toSeconds());
            check().subscribe();
        });
        membership.confirmWith(confirmation);
    }

    /**
     * Checks the view (blocking the start for the check: each member's answer waits at most {@link #ASK_TIMEOUT},
     * the whole check at most {@link #START_LIMIT}, then the node serves under its view), then starts the ticker.
     */
    public synchronized void start() {
        check().timeout(START_LIMIT, Mono.fromRunnable(() -> {
            log.warn("the members did not answer the view check within {} s; serving under epoch {}",
                    START_LIMIT.toSeconds(), membership.epoch());
            confirmation.confirm();
        })).block();
        ticker = Flux.interval(TICK, Schedulers.newSingle("view-check-ticker", true))
                .subscribe(beat -> confirmation.tick());
        confirmation.tick();
    }

    /** Stops the ticker (shutdown). */
    public synchronized void stop() {
        if (ticker != null) {
            ticker.dispose();
        }
    }

    /**
     * Asks the other members for their views, adopts the newest if it is newer than this node's, then confirms the
     * view. One check at a time: a second caller gets the empty result at once.
     */
    Mono<Void> check() {
        if (!checking.compareAndSet(false, true)) {
            return Mono.empty();
        }
        URI self = membership.self();
        return Flux.fromIterable(membership.view().nodes())
                .filter(node -> !node.equals(self))
                .flatMap(node -> peers.get().view(new Node(node, false))
                        .timeout(ASK_TIMEOUT)
                        .map(PeerView::view)
                        .onErrorResume(error -> Mono.empty()))
                .reduce((a, b) -> a.epoch() >= b.epoch() ? a : b)
                .publishOn(Schedulers.boundedElastic())
                .doOnNext(this::adoptIfNewer)
                .then(Mono.fromRunnable(confirmation::confirm))
                .doFinally(signal -> checking.set(false))
                .onErrorResume(error -> {
                    log.warn("cluster view check failed ({}); serving under epoch {}", error.toString(),
                            membership.epoch());
                    confirmation.confirm();
                    return Mono.empty();
                })
                .then();
    }

    private void adoptIfNewer(ClusterView newest) {
        if (membership.adoptIfConcerned(newest) && !newest.isMember(membership.self())) {
            log.warn("{} is no member of the cluster at epoch {}: it serves no client any more", membership.self(),
                    newest.epoch());
        }
    }
}
