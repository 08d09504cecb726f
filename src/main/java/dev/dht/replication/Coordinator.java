package dev.dht.replication;

import dev.dht.cluster.Membership;
import dev.dht.cluster.Placement;
import dev.dht.failure.OverloadReason;
import dev.dht.failure.OverloadedException;
import dev.dht.node.HybridLogicalClock;
import dev.dht.storage.Record;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * Coordinates a client request: route the id to its replicas ({@link Placement}), send the request to them
 * in parallel, wait for the first {@code ack} successes ({@link QuorumCollector}) and reconcile
 * ({@link Record#newest}), repairing stale replicas among the answers before answering (read repair). Any
 * node may coordinate any key. Writes go to all {@code from} replicas; reads to {@code ack} of them first, with
 * speculative retry to the others (see {@link #get}). In a cluster of more than one member a write is answered once
 * its wall-clock millisecond is over ({@link #commitWait}).
 *
 * <p>Errors: {@link QuorumNotReachedException} (504) when fewer than {@code ack} replicas succeed within
 * {@code dht.replica-timeout} (a write waits past it for this node's own store when that alone keeps the quorum
 * open, so a single node's write never times out); 500 instead when this node's own store failed with an error
 * ({@link QuorumNotReachedException#localError()}). Non-blocking: safe on an event loop.
 *
 * <p>Each request is placed under the cluster view current when it starts ({@link Membership#enter}) and counted
 * under that epoch until it ends. While the membership changes, a write goes to the key's old and new replica sets
 * and needs {@code ack} in each ({@link ReplicaPlan#forWrite(String, List, List, int, Duration)}); a read asks the
 * set the change's phase reads from ({@link Placement#readReplicas}).
 *
 * <p>Each replica call carries the epoch of that view (and a read its {@code from}); a replica that took a step since
 * which moved the key's replica sets refuses it ({@link OverloadReason#STALE_EPOCH}, {@link
 * dev.dht.cluster.EpochFence}). A request that fails with such a refusal among its replicas' outcomes waits until
 * this node took the refusing replica's view (fetched by the peer client, within {@code dht.replica-timeout}) and is
 * placed again under it, up to {@link #STALE_ATTEMPTS} attempts in all (a change's next step may come while it
 * catches up); a write keeps its record and timestamp. If it cannot catch up, or its last attempt is refused too,
 * it fails as before (503 when only refusals failed it).
 */
public final class Coordinator {
    /** Timers of at most 1 ms one {@link #commitWait} sets, at most. */
    private static final int COMMIT_WAIT_TIMERS = 10;
    /** How often a request refused as stale looks whether this node took the newer view. */
    private static final Duration CATCH_UP_POLL = Duration.ofMillis(5);
    /** Attempts of a request whose replicas refuse it as placed under a stale view ({@link #placedWhileStale}). */
    static final int STALE_ATTEMPTS = 3;
    /** Speculative retries allowed per read ({@link RetryBudget}). */
    static final double SPECULATIVE_RETRY_RATIO = 0.1;
    private final Membership membership;
    private final Replicas replicas;
    private final HybridLogicalClock clock;
    private final Duration timeout;
    private final Duration speculativeRetryDelay;
    /**
     * Counters {@code dht.quorum} by operation (GET, PUT, DELETE): [outcome success, outcome failure], registered
     * once.
     */
    private final Map<String, Counter[]> quorumOutcomes = new HashMap<>();
    private final Counter repairsSent;
    private final Counter repairsFailed;
    private final Counter speculativeReads;
    private final RetryBudget retryBudget = new RetryBudget(SPECULATIVE_RETRY_RATIO);
    private final BooleanSupplier speculativeRetryAllowed = retryBudget::tryWithdraw;
    private final Runnable countSpeculativeRead;

    /**
     * @param membership            the cluster view each request is placed under
     * @param replicas              the {@link Replica} of each node (self as a {@link LocalReplica})
     * @param timeout               how long to wait for {@code ack} answers before 504
     * @param speculativeRetryDelay how long a read waits for its first {@code ack} replicas before it asks the
     *                              others too; zero asks all {@code from} at once
     */
    public Coordinator(Membership membership, Replicas replicas, HybridLogicalClock clock, Duration timeout,
                       Duration speculativeRetryDelay, MeterRegistry registry) {
        this.membership = membership;
        this.replicas = replicas;
        this.clock = clock;
        this.timeout = timeout;
        this.speculativeRetryDelay = speculativeRetryDelay;
        for (String operation : List.of("GET", "PUT", "DELETE")) {
            String tag = operation.toLowerCase(Locale.ROOT);
            quorumOutcomes.put(operation, new Counter[] {
                    registry.counter("dht.quorum", "operation", tag, "outcome", "success"),
                    registry.counter("dht.quorum", "operation", tag, "outcome", "failure")});
        }
        this.repairsSent = registry.counter("dht.read.repairs", "outcome", "ok");
        this.repairsFailed = registry.counter("dht.read.repairs", "outcome", "error");
        this.speculativeReads = Counter.builder("dht.read.speculative.retries")
                .description("replica reads sent beyond the first ack, after a failure or the speculative retry delay")
                .register(registry);
        this.countSpeculativeRead = speculativeReads::increment;
    }

    /**
     * Reads {@code id}: the newest record among the first {@code ack} answers, or empty Optional if none of them
     * has a record or the newest has expired (TTL, judged against this node's wall clock,
     * {@link HybridLogicalClock#wallMillis()}; an expired value still wins last-write-wins by its timestamp and is
     * read-repaired as it is). A tombstone is returned as such (the caller answers 404). The node clock observes the
     * newest timestamp read, so a write this node coordinates after the read orders after what was read.
     *
     * <p>Only {@code ack} of the {@code from} replicas are asked at first, in {@link Replica#readRank} order; another
     * when one fails, and all the rest once {@code dht.speculative-retry-delay} passes ({@link ReplicaPlan#forRead}),
     * the latter for at most about 10 % of the reads ({@link RetryBudget}). Counter
     * {@code dht.read.speculative.retries} counts the replicas asked beyond the first {@code ack}.
     *
     * <p>When the {@code ack} answers disagree, the answer waits until the stale ones among them got the newest
     * record ({@link #repairStale}); a repair that fails gives 504 (503 if only overload failed it).
     *
     * <p>Fails with {@link ClusterTooSmallException} (400) if {@code rf.from()} exceeds the view the read is placed
     * with (the cluster shrank after the caller checked it).
     */
    public Mono<Optional<Record>> get(String id, ReplicationFactor rf) {
        return counted("GET", placedWhileStale(Mono.defer(() -> placedGet(id, rf)), () -> placedGet(id, rf),
                STALE_ATTEMPTS));
    }

    /**
     * {@code attempt}, and while a replica refuses it as placed under a stale view, {@code again} under the view this
     * node then holds ({@link #caughtUp}), at most {@code attempts} attempts in all: the steps of a change follow each other
     * within milliseconds (a removenode's four), so an attempt placed under the view a refusal named can meet the
     * next step. The last refusal is answered (503 if only refusals failed it, else 504).
     */
    private <T> Mono<T> placedWhileStale(Mono<T> attempt, Supplier<Mono<T>> again, int attempts) {
        return attempt.onErrorResume(error -> attempts > 1 && staleEpochOf(error) > 0,
                error -> caughtUp(staleEpochOf(error), error)
                        .then(placedWhileStale(Mono.defer(again), again, attempts - 1)));
    }

    /** One attempt of {@link #get}: placed under the current view, counted under its epoch until it ends. */
    private Mono<Optional<Record>> placedGet(String id, ReplicationFactor rf) {
        Membership.Ticket ticket = membership.enter();
        try {
            rf.within(ticket.placement().size()); // the view may have shrunk since the handler's check
            return get(id, rf, ticket.placement()).doFinally(signal -> ticket.exit());
        } catch (RuntimeException e) {
            ticket.exit();
            throw e;
        }
    }

    private Mono<Optional<Record>> get(String id, ReplicationFactor rf, Placement placement) {
        byte[] key = id.getBytes(StandardCharsets.UTF_8);
        ReplicaPlan plan = ReplicaPlan.forRead(replicas.of(placement.readReplicas(key, rf.from())), rf.ack(), timeout,
                speculativeRetryDelay,
                speculativeRetryAllowed, countSpeculativeRead);
        if (plan.speculativeRetryDelay() != null) {
            retryBudget.deposit();
        }
        int from = rf.from();
        long epoch = placement.view().epoch();
        Mono<List<ReplicaRead>> quorum = QuorumCollector.firstAcks(plan,
                replica -> replica.read(id, from, epoch).map(record -> new ReplicaRead(replica, record)));
        return quorum.flatMap(answers -> {
            Optional<Record> newest = answers.stream()
                    .flatMap(answer -> answer.record().stream())
                    .reduce(Record::newest);
            if (newest.isEmpty()) {
                return Mono.just(newest);
            }
            clock.observe(newest.get().timestamp());
            // an expired value is repaired like any record (it hides older values as a tombstone would), then absent
            return repairStale(id, newest.get(), answers, placement)
                    .thenReturn(newest.filter(record -> !record.isExpiredAt(clock.wallMillis())));
        });
    }

    /**
     * The epoch of the newest view a replica named when it refused a call of {@code error} as placed under a stale
     * view ({@link OverloadReason#STALE_EPOCH}); 0 if none did.
     */
    static long staleEpochOf(Throwable error) {
        if (error instanceof OverloadedException refusal) {
            return refusal.reason() == OverloadReason.STALE_EPOCH ? Math.max(1, refusal.heldEpoch()) : 0;
        }
        long newest = 0;
        if (error instanceof QuorumNotReachedException quorum) {
            for (QuorumNotReachedException.ReplicaOutcome outcome : quorum.outcomes()) {
                if (outcome.failure() != null) {
                    newest = Math.max(newest, staleEpochOf(outcome.failure()));
                }
            }
        }
        return newest;
    }

    /**
     * Completes once this node holds the view of {@code epoch} or a newer one (the peer client fetches it from the
     * replica that named it, {@link dev.dht.peer.EpochTracker#newerEpochSeen}); fails with {@code error} if that
     * takes longer than {@code dht.replica-timeout}. Polls every {@link #CATCH_UP_POLL} on Reactor's parallel
     * scheduler: only a request refused as stale waits here.
     */
    private Mono<Void> caughtUp(long epoch, Throwable error) {
        return Flux.interval(Duration.ZERO, CATCH_UP_POLL)
                .filter(tick -> membership.epoch() >= epoch)
                .next()
                .then()
                .timeout(timeout, Mono.error(error));
    }

    /**
     * Blocking read repair (Cassandra's): sends {@code newest} to every answering replica that returned an older
     * record or none, and completes once all of them applied it, so the client's answer waits for the repair.
     * While the membership changes, the record's replicas in both sets that did not answer get it too (read repair
     * writes to both sets, as writes do); their failures do not fail the read.
     * Then {@code ack} replicas hold what the read returned, and a later read, whose {@code ack} replicas overlap
     * them when {@code 2 * ack > from}, never returns an older record (monotonic quorum reads). Completes at once
     * when the answers agree (the common case). Only replicas among the first {@code from} of the key as the
     * record was written ({@link Record#from}, when known) are repaired, so a 1/1 write read at 3/3 stays one copy;
     * an answer from beyond them does not count as stale.
     *
     * <p>Fails with {@link QuorumNotReachedException} (504) if a repair fails or does not finish within
     * {@code dht.replica-timeout}: the read could not make {@code ack} replicas agree. Counter
     * {@code dht.read.repairs} (tag outcome: ok, error).
     */
    private Mono<Void> repairStale(String id, Record newest, List<ReplicaRead> answers, Placement placement) {
        List<Replica> toRepair = null;
        List<Replica> owners = null; // placed only once an answer is stale: agreeing answers cost no hashing
        for (ReplicaRead answer : answers) {
            boolean stale = answer.record().isEmpty() || newest.supersedes(answer.record().get());
            if (!stale) {
                continue;
            }
            if (owners == null && newest.from() > 0) {
                owners = replicas.of(placement.readReplicas(id.getBytes(StandardCharsets.UTF_8),
                        Math.min(newest.from(), placement.size())));
            }
            if (owners == null || owners.contains(answer.replica())) {
                if (toRepair == null) {
                    toRepair = new ArrayList<>(answers.size());
                }
                toRepair.add(answer.replica());
            }
        }
        if (toRepair == null) {
            return Mono.empty();
        }
        long epoch = placement.view().epoch();
        Mono<Void> blocking = repair(id, newest, toRepair, epoch);
        List<Replica> unanswered = placement.changing() ? unanswered(id, newest, answers, placement) : List.of();
        if (unanswered.isEmpty()) {
            return blocking;
        }
        // the set this phase does not read gets the record too (a joiner must not miss what a read repaired); its
        // failures do not fail the read, but the read waits for it, so no repair lands after the request's epoch
        return Mono.whenDelayError(blocking, repair(id, newest, unanswered, epoch)
                .onErrorResume(error -> Mono.empty()));
    }

    /** Sends {@code newest} to each of {@code targets}; completes once all applied it, fails if one did not. */
    private Mono<Void> repair(String id, Record newest, List<Replica> targets, long epoch) {
        return QuorumCollector.awaitAcks(ReplicaPlan.forReadRepair(targets, timeout), replica -> replica.write(id, newest,
                        epoch)
                .doOnSuccess(applied -> repairsSent.increment())
                .doOnError(error -> repairsFailed.increment()));
    }

    /**
     * During a membership change, the record's replicas in the old and the new set that did not answer the read
     * (the other set's, and any of the read set not asked).
     */
    private List<Replica> unanswered(String id, Record newest, List<ReplicaRead> answers, Placement placement) {
        byte[] key = id.getBytes(StandardCharsets.UTF_8);
        int from = placement.placedFrom(newest.from());
        List<Replica> other = ReplicaPlan.union(replicas.of(placement.oldReplicasAtMost(key, from)),
                replicas.of(placement.newReplicasAtMost(key, from)));
        for (ReplicaRead answer : answers) {
            other.remove(answer.replica());
        }
        return other;
    }

    /** One replica's answer to a read. */
    private record ReplicaRead(Replica replica, Optional<Record> record) {
    }

    /**
     * Carries out a client write: the value (or tombstone) stamped with this node's clock and with
     * {@code rf.from()}, the replica count that repair paths keep the key to; with a TTL, the record carries the
     * absolute expiry {@code ttl} after this node's wall clock ({@link HybridLogicalClock#wallMillis()}), replicated
     * with it, and reads as absent on every node from then on. Sent to the {@code from} replicas; completes once
     * {@code ack} applied it. The timeout does not cut short this node's own write: a local write that is merely
     * slow completes the quorum when it lands ({@link ReplicaPlan#forWrite}). Fails with
     * {@link ClusterTooSmallException} (400), storing nothing, if {@code rf.from()} exceeds the view the write is
     * placed with (the cluster shrank after the caller checked it).
     */
    public Mono<Void> write(WriteRequest request) {
        return write(request, null);
    }

    /**
     * {@link #write(WriteRequest)}, and runs {@code settled} once every replica asked is done with the record
     * (stored it, failed, or timed out its call), which may be after the answer: then nothing holds the value any
     * more. Runs on the thread of the last replica's outcome; must not block.
     *
     * @param settled run once, or null
     */
    public Mono<Void> write(WriteRequest request, Runnable settled) {
        return Mono.defer(() -> {
            Membership.Ticket ticket = membership.enter();
            try {
                request.rf().within(ticket.placement().size()); // the view may have shrunk since the handler's check
            } catch (RuntimeException e) {
                ticket.exit();
                throw e;
            }
            Record record = stamped(request);
            long timestamp = record.timestamp();
            // no wait when no other node coordinates (one member), or when the clock runs ahead of the wall clock (it
            // observed a later timestamp): waiting would order nothing
            boolean commitWait = ticket.placement().members().size() > 1
                    && HybridLogicalClock.millisOf(timestamp) <= clock.wallMillis();
            Settling settling = new Settling(settled);
            Mono<Void> first = placedWrite(request, record, ticket, settling);
            // a replica that refused the call as placed under a stale view: the same record (an idempotent
            // last-write-wins write) placed again under the view this node then holds (placedWhileStale)
            Mono<Void> write = placedWhileStale(first, () -> {
                Membership.Ticket again = membership.enter();
                try {
                    request.rf().within(again.placement().size());
                } catch (RuntimeException e) {
                    again.exit();
                    throw e;
                }
                return placedWrite(request, record, again, settling);
            }, STALE_ATTEMPTS);
            return counted(request.operation(), write)
                    .doOnTerminate(settling::release)
                    .doOnCancel(settling::release)
                    .then(commitWait ? Mono.defer(() -> commitWait(timestamp, COMMIT_WAIT_TIMERS)) : Mono.empty());
        });
    }

    /**
     * The client's value (or tombstone) stamped with this node's clock and with {@code rf.from()}; with a TTL, its
     * absolute expiry.
     */
    private Record stamped(WriteRequest request) {
        long timestamp = clock.now();
        int from = request.rf().from();
        if (request.isDelete()) {
            return Record.tombstone(timestamp, from);
        }
        long expiresAt = request.ttl() == null ? 0 : clock.wallMillis() + request.ttl().toMillis();
        return Record.value(timestamp, request.value(), from, expiresAt);
    }

    /**
     * One attempt of a write: {@code record} sent to its replicas under {@code ticket}'s placement, which this
     * attempt exits once every replica call of it ended; {@code settling} counts those calls too.
     */
    private Mono<Void> placedWrite(WriteRequest request, Record record, Membership.Ticket ticket, Settling settling) {
        Placement placement = ticket.placement();
        ReplicaPlan plan;
        try {
            plan = writePlan(request.operation(), request.id().getBytes(StandardCharsets.UTF_8), request.rf(),
                    placement);
        } catch (RuntimeException e) {
            ticket.exit();
            throw e;
        }
        AtomicInteger running = new AtomicInteger(plan.contacts().size());
        settling.add(plan.contacts().size());
        Runnable oneDone = () -> {
            if (running.decrementAndGet() == 0) {
                ticket.exit();
            }
            settling.release();
        };
        String id = request.id();
        long epoch = placement.view().epoch();
        // every contact of a write is asked, and its call always ends (QuorumCollector never cancels it)
        return QuorumCollector.awaitAcks(plan, replica -> replica.write(id, record, epoch)
                .doOnSuccess(applied -> oneDone.run())
                .doOnError(failed -> oneDone.run()));
    }

    /**
     * What holds a write's record: the replica calls of its attempts, and until the write's outcome is decided (no
     * further attempt follows) the write itself; runs the caller's {@code settled} once, when none is left. Thread-safe.
     */
    private static final class Settling {
        private final AtomicInteger holding = new AtomicInteger(1);
        private final Runnable settled;

        Settling(Runnable settled) {
            this.settled = settled;
        }

        void add(int calls) {
            holding.addAndGet(calls);
        }

        void release() {
            if (holding.decrementAndGet() == 0 && settled != null) {
                settled.run();
            }
        }
    }

    /**
     * Holds a write's answer until the wall clock has left the millisecond of its timestamp (often not at all, else
     * one timer to the next millisecond; at most {@code timers} of them, so a wall clock stepped back holds no
     * answer longer). Two coordinators stamp within one millisecond by their own counters, which do not order
     * their writes: a client that overwrites a key through another node right after this answer, before that node
     * stored this write (at {@code ack < from} its copy may still be on the way), would otherwise get a timestamp
     * that equals or precedes this one and lose to the older value. Once the millisecond is over, any node's next timestamp is greater (same wall clock; skew
     * between machines remains last-write-wins' known limit). Spanner's commit wait (Corbett et al., 2012) for an
     * uncertainty of one clock tick. Non-blocking: the timers run on Reactor's parallel scheduler.
     */
    private Mono<Void> commitWait(long timestamp, int timers) {
        long nanos = clock.nanosUntilAfter(HybridLogicalClock.millisOf(timestamp));
        if (nanos <= 0 || timers == 0) {
            return Mono.empty();
        }
        return Mono.delay(Duration.ofNanos(Math.min(nanos, 1_000_000)))
                .then(Mono.defer(() -> commitWait(timestamp, timers - 1)));
    }

    /** Counts the quorum outcome as Counter {@code dht.quorum} (tags operation; outcome success or failure). */
    private <T> Mono<T> counted(String operation, Mono<T> quorum) {
        Counter[] outcomes = quorumOutcomes.get(operation);
        Counter success = outcomes[0];
        Counter failure = outcomes[1];
        return quorum
                .doOnSuccess(ignored -> success.increment())
                .doOnError(QuorumNotReachedException.class, ignored -> failure.increment());
    }

    /**
     * The write's replicas: the key's {@code from} replicas, or while the membership changes its old and new sets,
     * with {@code ack} needed in each (one set when the change leaves this key's replicas as they are).
     */
    private ReplicaPlan writePlan(String operation, byte[] key, ReplicationFactor rf, Placement placement) {
        List<Replica> old = replicas.of(placement.oldReplicas(key, rf.from()));
        if (placement.changing()) {
            List<Replica> next = replicas.of(placement.newReplicas(key, rf.from()));
            if (!next.equals(old)) {
                return ReplicaPlan.forWrite(operation, old, next, rf.ack(), timeout);
            }
        }
        return ReplicaPlan.forWrite(operation, old, rf.ack(), timeout);
    }
}
