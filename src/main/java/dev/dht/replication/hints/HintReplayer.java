package dev.dht.replication.hints;

import com.google.common.util.concurrent.RateLimiter;
import dev.dht.cluster.Membership;
import dev.dht.cluster.Node;
import dev.dht.cluster.PeerHealth;
import dev.dht.replication.Replica;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.function.Supplier;
import reactor.core.Disposable;
import reactor.core.Disposables;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

/**
 * Replays a peer's hints to it, oldest first, once it is seen up, and deletes each hint the peer acknowledged.
 * Every {@link #TICK} (one loop per peer, on Reactor's parallel timer) a peer with hints gets the next slice: as
 * many of its oldest hints as its {@link RateLimiter} grants ({@code dht.hints.replay-rate} per second, at most
 * {@link #MAX_SLICE}), sent as ordinary replica writes (so they coalesce with client writes), {@link #CONCURRENCY}
 * at a time; the acknowledged ones are deleted in one store write, the others stay for a later slice. A tick that
 * finds the last slice still running is skipped, so a slow peer gets fewer hints, never more. A peer that
 * {@link PeerHealth} sees down is probed with one hint every {@link #PROBE_INTERVAL}; replay starts as soon as one
 * is acknowledged. Order matters only for fairness: records are reconciled by timestamp.
 *
 * <p>A slice is placed under one cluster view ({@link Membership#enter}) from its check to its last write: a hint
 * whose peer no longer replicates its key under that view is deleted unsent; once the view's ticket is revoked
 * (a membership step found the slice running too long), the slice sends no more hints and the rest stay stored.
 *
 * <p>Counter {@code dht.hints.replayed}: hints the peer acknowledged (and that were then deleted).
 *
 * <p>Threading: the loops never block; reading and deleting hints runs on the hints thread ({@code thread}).
 */
final class HintReplayer implements AutoCloseable {
    /** How often each peer's replay loop looks for work. */
    static final Duration TICK = Duration.ofMillis(100);
    /** How often a peer seen down is probed with one hint. */
    static final Duration PROBE_INTERVAL = Duration.ofSeconds(1);
    /** Hints read and sent per slice, at most. */
    static final int MAX_SLICE = 512;
    /** Hint writes of one slice in flight at once. */
    static final int CONCURRENCY = 64;

    private final HintStore store;
    private final Scheduler thread;
    private final PeerHealth health;
    private final int replayRate;
    private final Counter replayed;
    private final Supplier<Membership.Ticket> tickets;
    private final Counter notReplica;
    private final Disposable.Composite loops = Disposables.composite();

    /** @param tickets the cluster view a slice is placed under ({@link Membership#enter}), or null: none, replay all */
    HintReplayer(HintStore store, Scheduler thread, PeerHealth health, int replayRate,
                 Supplier<Membership.Ticket> tickets, Counter notReplica, MeterRegistry registry) {
        this.store = store;
        this.thread = thread;
        this.health = health;
        this.replayRate = replayRate;
        this.tickets = tickets;
        this.notReplica = notReplica;
        this.replayed = Counter.builder("dht.hints.replayed").description("hints the peer acknowledged, then deleted")
                .register(registry);
    }

    /** Starts the replay loop of {@code peer}, whose writes go to {@code replica} (one without hints of its own). */
    void replayTo(Node peer, Replica replica) {
        RateLimiter limiter = RateLimiter.create(replayRate);
        long[] lastProbeNanos = {System.nanoTime() - PROBE_INTERVAL.toNanos()};
        loops.add(Flux.interval(TICK, TICK)
                .onBackpressureDrop()
                .flatMap(tick -> slice(peer, replica, limiter, lastProbeNanos)
                        .onErrorResume(error -> Mono.empty()), 1)
                .subscribe());
    }

    /**
     * One slice of {@code peer}'s hints; empty when there is nothing to do (no hints, no permits, not yet time to
     * probe).
     */
    private Mono<Void> slice(Node peer, Replica replica, RateLimiter limiter, long[] lastProbeNanos) {
        if (store.pending(peer.name()) == 0) {
            return Mono.empty();
        }
        int size;
        if (health.isUp(peer)) {
            size = 0;
            while (size < MAX_SLICE && limiter.tryAcquire()) {
                size++;
            }
        } else {
            long now = System.nanoTime();
            if (now - lastProbeNanos[0] < PROBE_INTERVAL.toNanos() || !limiter.tryAcquire()) {
                return Mono.empty();
            }
            lastProbeNanos[0] = now;
            size = 1;
        }
        if (size == 0) {
            return Mono.empty();
        }
        int limit = size;
        return Mono.defer(() -> {
            Membership.Ticket ticket = tickets == null ? null : tickets.get();
            return Mono.fromCallable(() -> store.oldest(peer.name(), limit))
                    .subscribeOn(thread)
                    .flatMapMany(Flux::fromIterable)
                    .flatMap(hint -> {
                        if (ticket == null) {
                            return send(replica, hint);
                        }
                        if (ticket.isRevoked()) {
                            return Mono.empty(); // stays for a slice under the newer view
                        }
                        if (!ticket.placement().replicates(peer.url(), hint.key(), hint.record().from())) {
                            notReplica.increment();
                            return Mono.just(new Done(hint, false)); // deleted unsent with the acknowledged ones
                        }
                        return send(replica, hint);
                    }, CONCURRENCY)
                    .collectList()
                    .flatMap(done -> done.isEmpty() ? Mono.empty() : delete(done))
                    .doFinally(signal -> {
                        if (ticket != null) {
                            ticket.exit();
                        }
                    });
        });
    }

    private static Mono<Done> send(Replica replica, Hint hint) {
        return replica.write(new String(hint.key(), StandardCharsets.UTF_8), hint.record())
                .thenReturn(new Done(hint, true))
                .onErrorResume(error -> Mono.empty());
    }

    /** A hint done with: acknowledged by the peer ({@code sent}), or dropped unsent. */
    private record Done(Hint hint, boolean sent) {
    }

    private Mono<Void> delete(List<Done> done) {
        return Mono.fromRunnable(() -> {
            store.remove(done.stream().map(Done::hint).toList());
            replayed.increment(done.stream().filter(Done::sent).count());
        }).subscribeOn(thread).then();
    }

    /** Stops every replay loop; a slice in flight is cancelled and its hints stay in the store. */
    @Override
    public void close() {
        loops.dispose();
    }
}
