package dev.dht.membership;

import dev.dht.cluster.ChangeKind;
import dev.dht.cluster.ChangePhase;
import dev.dht.cluster.ClusterChange;
import dev.dht.cluster.ClusterView;
import dev.dht.cluster.Member;
import dev.dht.cluster.MemberState;
import dev.dht.cluster.Membership;
import dev.dht.cluster.Node;
import dev.dht.peer.PeerClient;
import dev.dht.peer.PeerView;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.web.reactive.function.client.WebClientResponseException;
import reactor.core.Disposable;
import reactor.core.Disposables;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.util.retry.Retry;

/**
 * Drives one membership change through its phases, from the node it concerns (the joiner joins itself, the leaver
 * decommissions itself; a removenode or an abort is driven by the member that received it). After ScyllaDB's
 * topology coordinator and Riak's claimant, without a consensus log:
 *
 * <ul>
 *   <li><b>One step at a time, cluster-wide.</b> Every new view is first proposed to the <em>claimant</em>, the first
 *       {@code NORMAL} member of the view that the change does not concern, with the epoch it must hold: it takes
 *       the view only at that epoch and only if no other change is in progress, so two joiners, or a step and an
 *       abort, never both win; the loser gets 409 and stops.</li>
 *   <li><b>Every member before the next phase.</b> The view then goes to every other member (retried until each
 *       took it); a member answers once it stored the view and finished the requests it coordinated under the old
 *       one ({@link ViewExchange#accept}). Only then is the next phase proposed, so members are never more than one
 *       phase apart.</li>
 *   <li><b>Phases.</b> write-both-read-old, streaming (the gainers pull, {@link RecordStreaming}), write-both-read-new,
 *       then the completed view; each member cleans up after it ({@link OwnershipCleanup}).</li>
 *   <li><b>Safety.</b> A change starts only while every member answers and none still cleans up after the last
 *       change (409 naming the node otherwise); it can be aborted up to the read switch.</li>
 * </ul>
 *
 * <p>A driver killed mid-change resumes at its next start ({@link #resume}) from the claimant's view. Progress is one
 * log line per phase (from {@link Membership#adopt}). Everything runs in the background on Reactor's schedulers;
 * the public methods return at once.
 */
public final class ChangeProcedure {
    /** Pause before a member that did not take a view, or a failed step, is tried again. */
    static final Duration RETRY_DELAY = Duration.ofSeconds(1);
    /** Pause before a node that is yet to join asks again after a refusal (another change, a member down). */
    static final Duration JOIN_RETRY_DELAY = Duration.ofSeconds(3);
    private static final Logger log = LoggerFactory.getLogger(ChangeProcedure.class);

    private final Membership membership;
    private final ViewExchange exchange;
    private final Supplier<PeerClient> peers;
    private final RecordStreaming streaming;
    private final OwnershipCleanup cleanup;
    private final List<URI> seeds;
    /** Every background task of this node's changes (a join, a drive, an abort's spread): disposed at shutdown. */
    private final Disposable.Composite running = Disposables.composite();

    /**
     * @param seeds {@code dht.nodes}: whom a node that is yet to join asks for the cluster's view
     */
    public ChangeProcedure(Membership membership, ViewExchange exchange, Supplier<PeerClient> peers,
                           RecordStreaming streaming, OwnershipCleanup cleanup, List<URI> seeds) {
        this.membership = membership;
        this.exchange = exchange;
        this.peers = peers;
        this.streaming = streaming;
        this.cleanup = cleanup;
        this.seeds = List.copyOf(seeds);
    }

    /**
     * At start-up: a node with no view of its own joins through the seeds (retrying while a change runs or a member
     * is down); a node whose stored view holds a change of its own resumes driving it. Returns at once.
     */
    public synchronized void startUp() {
        ClusterView view = membership.view();
        if (view.epoch() == 0) {
            running.add(join().subscribe());
        } else if (view.change() != null && isDriver(view)) {
            running.add(resume().subscribe());
        }
    }

    /** Stops driving (shutdown); the change resumes at the next start. */
    public synchronized void stop() {
        running.dispose();
    }

    /**
     * Starts decommissioning this node: 2xx once the claimant took the first view, the rest in the background.
     *
     * @throws ChangeRefusedException (409) if a change is in progress, a member is down or cleans up, or this node is
     *                                not a NORMAL member
     */
    public Mono<ClusterView> decommission() {
        ClusterView base = membership.view();
        if (!membership.isNormalMember()) {
            return Mono.error(new ChangeRefusedException(membership.self() + " is not a normal member; nothing to "
                    + "decommission"));
        }
        return begin(base, () -> base.withLeaving(membership.self(), ChangeKind.DECOMMISSION));
    }

    /**
     * Starts removing the dead member {@code node}: the others re-replicate what it held from the surviving copies.
     *
     * @throws ChangeRefusedException (409) if {@code node} is no member or still answers (decommission it instead),
     *                                another member is down, or a change is in progress
     */
    public Mono<ClusterView> removenode(URI node) {
        ClusterView base = membership.view();
        if (!base.isMember(node)) {
            return Mono.error(new ChangeRefusedException(node + " is no member of the cluster (epoch " + base.epoch()
                    + ")"));
        }
        if (node.equals(membership.self())) {
            return Mono.error(new ChangeRefusedException(node + " is this node: decommission it instead"));
        }
        return peers.get().view(new Node(node, false))
                .then(Mono.<ClusterView>error(new ChangeRefusedException(node + " is alive: decommission it instead")))
                .onErrorResume(error -> !(error instanceof ChangeRefusedException),
                        down -> begin(base, () -> base.withLeaving(node, ChangeKind.REMOVENODE)));
    }

    /**
     * Aborts the change in progress: the joiner is no member again, the leaver NORMAL again. Driven from this node.
     *
     * @throws ChangeRefusedException (409) if no change is in progress or reads already use the new replica sets
     */
    public Mono<ClusterView> abort() {
        ClusterView base = membership.view();
        ClusterView aborted;
        try {
            aborted = base.aborted();
        } catch (IllegalStateException e) {
            return Mono.error(new ChangeRefusedException(e.getMessage()));
        }
        ClusterChange change = base.change();
        return claim(base, aborted).doOnNext(taken -> {
            log.info("the {} of {} is aborted at epoch {}", change.kind().token(), change.node(), aborted.epoch());
            background(spread(aborted, targets(base)).then(startCleanup(aborted)));
        });
    }

    /** The checks, then the claimant's consent, then the rest of the change in the background. */
    private Mono<ClusterView> begin(ClusterView base, Supplier<ClusterView> next) {
        ClusterView first;
        try {
            first = next.get();
        } catch (IllegalStateException e) {
            return Mono.error(new ChangeRefusedException(e.getMessage()));
        }
        return everyMemberReady(base, first.change())
                .then(claim(base, first))
                .doOnNext(taken -> background(drive(base, first)));
    }

    private synchronized void background(Mono<?> work) {
        running.add(work.subscribe(null, error -> log.warn("membership change stopped: {}", error.getMessage())));
    }

    /**
     * Fails with {@link ChangeRefusedException} unless every member (but a removenode's dead node) answers its view
     * at {@code base}'s epoch or later and none cleans up after the last change.
     */
    private Mono<Void> everyMemberReady(ClusterView base, ClusterChange change) {
        return Flux.fromIterable(targets(base, change))
                .flatMap(node -> view(node)
                        .onErrorMap(error -> !(error instanceof ChangeRefusedException),
                                error -> new ChangeRefusedException("the " + change.kind().token() + " of "
                                        + change.node() + " is refused: member " + node.url() + " is down ("
                                        + error.getMessage() + ")"))
                        .doOnNext(answer -> {
                            if (answer.cleanupPending()) {
                                throw new ChangeRefusedException("the " + change.kind().token() + " of " + change.node()
                                        + " is refused: member " + node.url()
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

    /** Proposes {@code next} to the claimant of {@code base}, which takes it only at {@code base}'s epoch. */
    private Mono<ClusterView> claim(ClusterView base, ClusterView next) {
        URI claimant = claimant(base);
        Mono<ClusterView> taken = claimant.equals(membership.self())
                ? exchange.accept(next, base.epoch())
                : peers.get().propose(new Node(claimant, false), next, base.epoch())
                        .onErrorMap(WebClientResponseException.Conflict.class,
                                conflict -> new ChangeRefusedException(conflict.getResponseBodyAsString().strip()))
                        .onErrorMap(error -> !(error instanceof ChangeRefusedException),
                                error -> new ChangeRefusedException("the claimant " + claimant + " did not answer ("
                                        + error.getMessage() + ")"));
        return taken;
    }

    /** The node that serialises changes: the first NORMAL member the change does not concern. */
    static URI claimant(ClusterView view) {
        URI concerned = view.change() == null ? null : view.change().node();
        for (Member member : view.members()) {
            if (member.state() == MemberState.NORMAL && !member.node().equals(concerned)) {
                return member.node();
            }
        }
        throw new IllegalStateException("no normal member in " + view);
    }

    /**
     * The change from {@code previous} (the claimant took {@code view} already): every member takes {@code view};
     * streaming runs in its phase; then the next step is claimed, until the change completes.
     */
    private Mono<Void> drive(ClusterView previous, ClusterView view) {
        return spread(view, targets(view.change() != null ? view : previous))
                .then(Mono.defer(() -> view.change() != null && view.change().phase() == ChangePhase.STREAMING
                        ? stream(view) : Mono.empty()))
                .then(Mono.defer(() -> {
                    if (view.change() == null) {
                        log.info("membership change complete at epoch {}", view.epoch());
                        return startCleanup(view);
                    }
                    ClusterView next = view.advanced();
                    return claim(view, next)
                            .retryWhen(Retry.fixedDelay(Long.MAX_VALUE, RETRY_DELAY)
                                    .filter(error -> !isMovedOn(error)))
                            .then(drive(view, next));
                }));
    }

    /** True for a claimant's refusal: another step (an abort) came first, so this driver stops. */
    private static boolean isMovedOn(Throwable error) {
        return error instanceof ChangeRefusedException && !error.getMessage().startsWith("the claimant");
    }

    /**
     * At start-up, for a change of this node's own: takes the claimant's view if newer (this node may have died
     * before it stored the last step), then goes on from there.
     */
    private Mono<Void> resume() {
        ClusterView stored = membership.view();
        URI claimant = claimant(stored);
        log.info("resuming the {} of {} from epoch {}", stored.change().kind().token(), stored.change().node(),
                stored.epoch());
        return peers.get().view(new Node(claimant, false))
                .retryWhen(Retry.fixedDelay(Long.MAX_VALUE, RETRY_DELAY))
                .flatMap(answer -> exchange.accept(answer.view(), null))
                .flatMap(current -> {
                    ClusterChange change = current.change();
                    if (change == null || !isDriver(current)) {
                        log.info("the change driven here ended while this node was down (epoch {})", current.epoch());
                        return change == null ? startCleanup(current) : Mono.empty();
                    }
                    return drive(current, current);
                });
    }

    /**
     * Joins this node through the seeds: takes the view of the first seed that answers; resumes a join of its own
     * found there; otherwise proposes itself as JOINING. While another change runs, a member is down or the claimant
     * refuses, it waits {@link #JOIN_RETRY_DELAY} and asks again.
     */
    private Mono<Void> join() {
        URI self = membership.self();
        return Mono.defer(this::seedView)
                .flatMap(view -> {
                    ClusterChange change = view.change();
                    if (change != null && change.kind() == ChangeKind.JOIN && change.node().equals(self)) {
                        log.info("resuming the join of this node at epoch {}", view.epoch());
                        return exchange.accept(view, null).flatMap(current -> drive(current, current));
                    }
                    if (view.isMember(self)) {
                        log.error("{} is a member of the cluster (epoch {}) but its data dir holds no view: remove it "
                                + "(POST /actuator/cluster/removenode) before it joins again", self, view.epoch());
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

    /** The pull of the streaming phase: on the joiner for a join, on every remaining member for a leave. */
    private Mono<Void> stream(ClusterView view) {
        ClusterChange change = view.change();
        List<Node> gainers = new ArrayList<>();
        for (Member member : view.members()) {
            boolean gains = change.kind() == ChangeKind.JOIN ? member.node().equals(change.node())
                    : member.state() == MemberState.NORMAL;
            if (gains) {
                gainers.add(new Node(member.node(), member.node().equals(membership.self())));
            }
        }
        return Flux.fromIterable(gainers)
                .flatMap(node -> (node.self() ? streaming.pullAll(view.epoch()) : peers.get().pull(node, view.epoch()))
                        .doOnError(error -> log.warn("streaming on {} failed ({}); again in {} s", node,
                                error.toString(), RETRY_DELAY.toSeconds()))
                        .retryWhen(Retry.fixedDelay(Long.MAX_VALUE, RETRY_DELAY)))
                .then();
    }

    /**
     * Whether this node drives {@code view}'s change after a restart: the joiner or leaver itself; for a removenode
     * the claimant (a second driver of the same change is harmless: it proposes the same views, which are taken as
     * already taken).
     */
    private boolean isDriver(ClusterView view) {
        ClusterChange change = view.change();
        URI self = membership.self();
        return change.node().equals(self) || change.kind() == ChangeKind.REMOVENODE && claimant(view).equals(self);
    }

    /**
     * Every member took {@code ended}, the view that ended a change, and drained: each may start its cleanup (one
     * try each; a member that misses it starts after its fallback delay).
     */
    private Mono<Void> startCleanup(ClusterView ended) {
        return Flux.fromIterable(ended.members())
                .flatMap(member -> member.node().equals(membership.self())
                        ? Mono.<Void>fromRunnable(() -> cleanup.startAfter(ended.epoch()))
                        : peers.get().cleanup(new Node(member.node(), false), ended.epoch())
                                .onErrorResume(error -> {
                                    log.warn("{} did not take the start of its cleanup ({}); it starts by itself later",
                                            member.node(), error.toString());
                                    return Mono.empty();
                                }))
                .then();
    }

    /** Sends {@code view} to every one of {@code targets} until each took it. */
    private Mono<Void> spread(ClusterView view, List<Node> targets) {
        return Flux.fromIterable(targets)
                .flatMap(node -> (node.self() ? exchange.accept(view, null) : peers.get().propose(node, view, null))
                        .retryWhen(Retry.fixedDelay(Long.MAX_VALUE, RETRY_DELAY)
                                .doBeforeRetry(retry -> {
                                    if (retry.totalRetries() % 10 == 0) {
                                        log.warn("{} has not taken epoch {} yet: {}", node, view.epoch(),
                                                retry.failure().toString());
                                    }
                                })))
                .then();
    }

    /** Every member of {@code view} but a removenode's dead node. */
    private List<Node> targets(ClusterView view) {
        return targets(view, view.change());
    }

    /** Every member of {@code view} but the dead node {@code change} removes, if it is a removenode (null: none). */
    private List<Node> targets(ClusterView view, ClusterChange change) {
        List<Node> targets = new ArrayList<>();
        for (Member member : view.members()) {
            if (change == null || !change.removes(member.node())) {
                targets.add(new Node(member.node(), member.node().equals(membership.self())));
            }
        }
        return targets;
    }
}
