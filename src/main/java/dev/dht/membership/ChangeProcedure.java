package dev.dht.membership;

import dev.dht.cluster.ChangeKind;
import dev.dht.cluster.ClusterChange;
import dev.dht.cluster.ClusterView;
import dev.dht.cluster.MemberState;
import dev.dht.cluster.Membership;
import dev.dht.cluster.Node;
import dev.dht.membership.raft.ViewLog;
import dev.dht.peer.PeerClient;
import dev.dht.peer.PeerView;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.web.reactive.function.client.WebClientResponseException;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.util.retry.Retry;

/**
 * The requests that start or undo a membership change: each checks it, then appends the change's first view to
 * the view log ({@link ViewLog#compareAndSet}: it is taken only if the log's view is still the one the change was
 * computed from, so two joiners, or a step and an abort, never both win). From there the
 * {@link TopologyCoordinator} on the log's leader drives the change; nothing here waits for it.
 *
 * <ul>
 *   <li>{@link #decommission}: a NORMAL member leaves, streaming its records out.</li>
 *   <li>{@link #removenode}: a dead member is removed, the others re-replicating from the surviving copies; a joiner
 *       or leaver that died during its own change has that change rolled back (a join) or turned into its removal
 *       (a decommission).</li>
 *   <li>{@link #abort}: the change in progress is undone, at any phase before its final view.</li>
 *   <li>A node with no view of its own that is not a founding member joins through the seeds ({@link #startUp}),
 *       asking a member to append its join (it holds no log yet), again every {@link #JOIN_RETRY_DELAY} while
 *       refused.</li>
 * </ul>
 * A change starts only while every member (but a removenode's dead node, and for a removenode the members lost in
 * a recovery of the view log, {@link ViewLog#lost}) answers, holds the log's epoch, and no longer cleans up after
 * the last change. Refusals are {@link ChangeRefusedException} (409 at the actuator). The
 * log is appended on the bounded-elastic scheduler; the public methods never block.
 */
public final class ChangeProcedure {
    /** Pause before a node that is yet to join asks again after a refusal (another change, a member down). */
    static final Duration JOIN_RETRY_DELAY = Duration.ofSeconds(3);
    private static final Logger log = LoggerFactory.getLogger(ChangeProcedure.class);

    private final Membership membership;
    private final ViewLog viewLog;
    private final Supplier<PeerClient> peers;
    private final OwnershipCleanup cleanup;
    private final List<URI> seeds;
    private final boolean joins;
    private Disposable joining;

    /**
     * @param seeds {@code dht.nodes}: whom a node that is yet to join asks for the cluster's view
     * @param joins true if this node starts with no view and is no founding member: it joins at {@link #startUp}
     */
    public ChangeProcedure(Membership membership, ViewLog viewLog, Supplier<PeerClient> peers,
                           OwnershipCleanup cleanup, List<URI> seeds, boolean joins) {
        this.membership = membership;
        this.viewLog = viewLog;
        this.peers = peers;
        this.cleanup = cleanup;
        this.seeds = List.copyOf(seeds);
        this.joins = joins;
    }

    /** At start-up: a node that is yet to join joins through the seeds (in the background). Returns at once. */
    public synchronized void startUp() {
        if (joins && !membership.isMember()) {
            joining = join().subscribe(null, error -> log.warn("join stopped: {}", error.toString()));
        }
    }

    /** Stops asking to join (shutdown). */
    public synchronized void stop() {
        if (joining != null) {
            joining.dispose();
        }
    }

    /** The view requests start from: the log's, or this node's own before it holds a log. */
    private ClusterView base() {
        ClusterView logged = viewLog.view();
        ClusterView own = membership.view();
        return logged == null || own.epoch() > logged.epoch() ? own : logged;
    }

    /**
     * Starts decommissioning {@code node} (null: this node). 202 at the actuator once the log took the first view.
     *
     * @throws ChangeRefusedException (409) if a change is in progress, a member is down or cleans up, or the node is
     *                                not a NORMAL member
     */
    public Mono<ClusterView> decommission(URI node) {
        ClusterView base = base();
        URI leaving = node == null ? membership.self() : node;
        if (base.state(leaving).orElse(null) != MemberState.NORMAL) {
            return Mono.error(new ChangeRefusedException(leaving + " is not a normal member; nothing to decommission"));
        }
        return begin(base, () -> base.withLeaving(leaving, ChangeKind.DECOMMISSION));
    }

    /**
     * Removes the dead member {@code node}. If a change of its own is in progress (it died joining or leaving), that
     * change is undone instead (a join) or turned into this removal (a decommission).
     *
     * @throws ChangeRefusedException (409) if {@code node} is no member, is this node, or still answers
     *                                (decommission it instead), another member is down (but one lost in a recovery
     *                                of this node's view log: {@link ViewLog#lost}), or another change runs
     */
    public Mono<ClusterView> removenode(URI node) {
        ClusterView base = base();
        if (!base.isMember(node)) {
            return Mono.error(new ChangeRefusedException(node + " is no member of the cluster (epoch " + base.epoch()
                    + ")"));
        }
        if (node.equals(membership.self())) {
            return Mono.error(new ChangeRefusedException(node + " is this node: decommission it instead"));
        }
        return peers.get().view(new Node(node, false))
                .then(Mono.<ClusterView>error(new ChangeRefusedException(node + " is alive: decommission it instead")))
                .onErrorResume(error -> !(error instanceof ChangeRefusedException), down -> {
                    ClusterChange change = base.change();
                    if (change != null && change.node().equals(node)) {
                        return switch (change.kind()) {
                            case JOIN -> change.rollingBack() ? Mono.just(base) : append(base, base::aborted);
                            case DECOMMISSION -> append(base, base::asRemovenode);
                            case REMOVENODE -> Mono.just(base); // being removed already
                        };
                    }
                    return begin(base, () -> base.withLeaving(node, ChangeKind.REMOVENODE));
                });
    }

    /**
     * Undoes the change in progress: the joiner is no member again, the leaver NORMAL again. After the read switch
     * it goes back through {@link dev.dht.cluster.ChangePhase#ROLLBACK}.
     *
     * @throws ChangeRefusedException (409) if no change is in progress or it is being rolled back already
     */
    public Mono<ClusterView> abort() {
        ClusterView base = base();
        return append(base, base::aborted)
                .doOnNext(taken -> log.info("the {} of {} is aborted at epoch {}", base.change().kind().token(),
                        base.change().node(), taken.epoch()));
    }

    /**
     * Appends {@code next} to the log if its view is at {@code expect}: a change's first view proposed by a node
     * that holds no log yet (a joiner).
     *
     * @throws ChangeRefusedException (409) if the log's view moved on, or the log has no leader in time
     */
    public Mono<ClusterView> append(long expect, ClusterView next) {
        ClusterView base = base();
        if (next.change() != null && base.change() != null && base.epoch() == expect) {
            ClusterChange running = base.change();
            if (running.kind() != next.change().kind() || !running.node().equals(next.change().node())) {
                return Mono.error(new ChangeRefusedException("the " + running.kind().token() + " of "
                        + running.node() + " is in progress (" + running.phase().token() + ")"));
            }
        }
        return Mono.fromCallable(() -> viewLog.compareAndSet(expect, next))
                .subscribeOn(Schedulers.boundedElastic())
                .onErrorMap(ViewLog.Refused.class, refused -> new ChangeRefusedException(refused.getMessage()));
    }

    private Mono<ClusterView> append(ClusterView base, Supplier<ClusterView> next) {
        ClusterView view;
        try {
            view = next.get();
        } catch (IllegalStateException e) {
            return Mono.error(new ChangeRefusedException(e.getMessage()));
        }
        return append(base.epoch(), view);
    }

    /** The checks, then the first view appended (through a member if this node holds no log yet). */
    private Mono<ClusterView> begin(ClusterView base, Supplier<ClusterView> next) {
        ClusterView first;
        try {
            first = next.get();
        } catch (IllegalStateException e) {
            return Mono.error(new ChangeRefusedException(e.getMessage()));
        }
        return everyMemberReady(base, first.change()).then(Mono.defer(() -> membership.isMember()
                ? append(base.epoch(), first)
                : appendThroughMember(base, first)));
    }

    /** A joiner's first view, appended by the first member that takes it. */
    private Mono<ClusterView> appendThroughMember(ClusterView base, ClusterView first) {
        return Flux.fromIterable(base.nodes())
                .concatMap(node -> peers.get().propose(new Node(node, false), first, base.epoch())
                        .onErrorMap(WebClientResponseException.Conflict.class,
                                conflict -> new ChangeRefusedException(conflict.getResponseBodyAsString().strip()))
                        .onErrorResume(error -> !(error instanceof ChangeRefusedException), error -> Mono.empty()), 1)
                .next()
                .switchIfEmpty(Mono.error(() -> new ChangeRefusedException("no member of " + base.nodes()
                        + " took the join")));
    }

    /**
     * Fails with {@link ChangeRefusedException} unless every member (but a removenode's dead node) answers, holds
     * {@code base}'s epoch or a newer one, and does not clean up after the last change. A removenode does not ask the
     * members lost in a recovery of this node's log ({@link ViewLog#lost}): they are dead for good, each removed in
     * turn; any other member down refuses it, as it may gain keys it would have to stream.
     */
    private Mono<Void> everyMemberReady(ClusterView base, ClusterChange change) {
        String refused = "the " + change.kind().token() + " of " + change.node() + " is refused: member ";
        Set<URI> lost = change.kind() == ChangeKind.REMOVENODE ? viewLog.lost() : Set.of();
        return Flux.fromIterable(membership.nodesOf(base, change))
                .filter(node -> !lost.contains(node.url()))
                .flatMap(node -> view(node)
                        .onErrorMap(error -> !(error instanceof ChangeRefusedException),
                                error -> new ChangeRefusedException(refused + node.url() + " is down ("
                                        + error.getMessage() + ")" + (viewLog.lost().contains(node.url())
                                        ? "; it was lost in the recovery of the view log: remove it first"
                                        : "")))
                        .doOnNext(answer -> {
                            if (answer.view().epoch() < base.epoch()) {
                                throw new ChangeRefusedException(refused + node.url() + " still holds epoch "
                                        + answer.view().epoch() + ", not " + base.epoch());
                            }
                            if (answer.cleanupPending()) {
                                throw new ChangeRefusedException(refused + node.url()
                                        + " still cleans up after the last change");
                            }
                        }))
                .then();
    }

    /** A member's view: this node's own (and its own cleanup) without a call. */
    private Mono<PeerView> view(Node node) {
        return node.self() ? Mono.fromSupplier(() -> new PeerView(membership.view(), cleanup.isPending()))
                : peers.get().view(node);
    }

    /**
     * Joins this node through the seeds: takes the view of the first seed that answers and asks its members to
     * append the join. While another change runs, a member is down or the log refuses, it waits
     * {@link #JOIN_RETRY_DELAY} and asks again; it stops once it is a member (the leader drives the join).
     */
    private Mono<Void> join() {
        URI self = membership.self();
        return Mono.defer(this::seedView)
                .flatMap(view -> {
                    if (membership.isMember() || view.isMember(self)) {
                        log.info("{} is a member at epoch {}; the log's leader drives its join", self,
                                Math.max(view.epoch(), membership.epoch()));
                        return Mono.empty();
                    }
                    log.info("joining the cluster of {} members at epoch {}", view.members().size(), view.epoch());
                    return begin(view, () -> view.withJoining(self)).then();
                })
                .retryWhen(Retry.fixedDelay(Long.MAX_VALUE, JOIN_RETRY_DELAY)
                        .doBeforeRetry(retry -> log.info("join not started: {}; again in {} s",
                                retry.failure().getMessage(), JOIN_RETRY_DELAY.toSeconds())));
    }

    /** The view of the first seed that answers (other than this node). */
    private Mono<ClusterView> seedView() {
        return Flux.fromIterable(seeds)
                .filter(seed -> !seed.equals(membership.self()))
                .concatMap(seed -> peers.get().view(new Node(seed, false)).onErrorResume(error -> Mono.empty()), 1)
                .next()
                .map(PeerView::view)
                .switchIfEmpty(Mono.error(() -> new ChangeRefusedException("no seed of " + seeds + " answers")));
    }
}
