package dev.dht.repair;

import dev.dht.cluster.Node;
import dev.dht.cluster.PeerHealth;
import java.time.Duration;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Runs {@link AntiEntropyRepair} with every peer every {@code dht.repair.interval} (0: never), one peer after
 * another, skipping a peer whose last exchange failed ({@link PeerHealth}). A round still running when the next
 * is due delays it (ticks are dropped, not queued). No round starts while the membership changes (streaming then
 * moves records by the change's placement, and repair would compare by a placement about to change). Timers run on Reactor's parallel scheduler; the repairs
 * themselves do not block it.
 */
public final class RepairScheduler {
    private static final Logger log = LoggerFactory.getLogger(RepairScheduler.class);
    private final AntiEntropyRepair repair;
    private final PeerHealth health;
    private final Duration interval;
    private final BooleanSupplier membershipChanging;
    private Disposable rounds;

    /**
     * @param interval           {@code dht.repair.interval}; zero schedules nothing
     * @param membershipChanging true while a membership change is in progress: rounds are skipped
     */
    public RepairScheduler(AntiEntropyRepair repair, PeerHealth health, Duration interval,
                           BooleanSupplier membershipChanging) {
        this.repair = repair;
        this.health = health;
        this.interval = interval;
        this.membershipChanging = membershipChanging;
    }

    /** Starts the rounds, the first one {@code interval} from now; does nothing for an interval of 0. */
    public synchronized void start() {
        if (interval.isZero() || rounds != null) {
            return;
        }
        rounds = Flux.interval(interval, interval)
                .onBackpressureDrop()
                .concatMap(tick -> membershipChanging.getAsBoolean()
                        ? Mono.empty()
                        : Flux.fromIterable(repair.peers()).concatMap(this::repairIfUp), 1)
                .subscribe();
    }

    private Mono<RepairResult> repairIfUp(Node peer) {
        if (!health.isUp(peer)) {
            log.info("scheduled repair with {} skipped: the peer is down", peer);
            return Mono.empty();
        }
        return repair.repair(peer).onErrorResume(error -> {
            log.warn("scheduled repair with {} failed: {}", peer, error.toString());
            return Mono.empty();
        });
    }

    /** Stops the rounds (a repair in progress is cancelled). */
    public synchronized void stop() {
        if (rounds != null) {
            rounds.dispose();
            rounds = null;
        }
    }
}
