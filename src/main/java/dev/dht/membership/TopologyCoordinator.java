package dev.dht.membership;

import dev.dht.cluster.ChangePhase;
import dev.dht.cluster.ClusterChange;
import dev.dht.cluster.ClusterView;
import dev.dht.cluster.Membership;
import dev.dht.cluster.Node;
import dev.dht.cluster.PeerHealth;
import dev.dht.membership.raft.RaftPeers;
import dev.dht.membership.raft.ViewLog;
import dev.dht.peer.PeerClient;
import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.web.reactive.function.client.WebClientResponseException;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * Drives every membership change, on the view log's leader only (ScyllaDB's topology coordinator on the Raft
 * leader of group 0). Every {@link #TICK} the leader takes one step from the log's view; a new leader goes on from
 * the log where the old one stopped, so a change never depends on one node staying up:
 *
 * <ol>
 *   <li><b>Form.</b> No view in the log yet: the founding members' first view ({@code dht.nodes}, epoch 1), once
 *   every founding member answers that it holds no view.</li>
 *   <li><b>Roll back.</b> A member the change waits for (its joiner or leaver included; not the node a removenode
 *       removes, dead by definition, nor a member lost in a recovery of the log, {@link ViewLog#lost}) has not
 *       answered for {@code dht.change-failure-timeout}: the change is undone ({@link ClusterView#aborted}), so it
 *       never stays stuck; the dead member can then be removed.</li>
 *   <li><b>Raft configuration.</b> The log's voters and listeners follow the view ({@link RaftPeers}): a joiner
 *       becomes a listener when its join starts, a node that left is dropped; not while a voter of the new
 *       configuration is down (it might not commit), nor while a lost member is in it.</li>
 *   <li><b>Next phase.</b> The view goes to every member (each stores it and finishes the requests it coordinated
 *       under the one before: {@link ViewExchange#accept}); in the streaming phase the gainers pull what they gain;
 *       then the next view is appended, only if the log's view is still this one.</li>
 *   <li><b>Settle.</b> No change in progress: every member is brought to the view and told to start its cleanup once
 *       all hold it (never before: a member one view behind may still write under the change).</li>
 * </ol>
 * A step that cannot finish (a member down) ends after {@link #STEP_LIMIT} and is tried again at the next tick, so
 * a rollback is never held up by it. Runs on Reactor's parallel and bounded-elastic schedulers; never blocks an
 * event loop.
 */
public final class TopologyCoordinator {
    /** How often the leader looks at the log's view. */
    static final Duration TICK = Duration.ofMillis(200);
    /** The longest a step waits for members before it gives way to the next tick. */
    static final Duration STEP_LIMIT = Duration.ofSeconds(5);
    /** The longest wait for one member's answer to a liveness probe. */
    static final Duration PROBE_TIMEOUT = Duration.ofSeconds(2);
    /**
     * A member is probed when it has not answered for this long, at most this often (its answers to requests and to
     * the steps' own calls count as probes too).
     */
    static final Duration PROBE_INTERVAL = Duration.ofSeconds(1);
    private static final Logger log = LoggerFactory.getLogger(TopologyCoordinator.class);

    private final Membership membership;
    private final ViewLog viewLog;
    private final RaftPeers raftPeers;
    private final ViewExchange exchange;
    private final Supplier<PeerClient> peers;
    private final RecordStreaming streaming;
    private final OwnershipCleanup cleanup;
    private final Supplier<ClusterView> founding;
    /** True once the wait for every founding member was logged (one line). */
    private volatile boolean waitingToForm;
    private final Duration failureTimeout;
    /** The failure detector of requests and membership alike: every member's last answer, whoever leads. */
    private final PeerHealth health;
    private final ChangeLiveness liveness;
    /** {@link System#nanoTime} of the last liveness probe sent to each node. */
    private final Map<URI, Long> lastProbed = new ConcurrentHashMap<>();
    /** The epoch whose cleanup start every member has acknowledged under this leadership (0: none yet). */
    private volatile long settled;
    /** {@link System#nanoTime} of the last settle attempt while a member was down. */
    private volatile long lastSettleNanos;
    private Disposable ticks;

    /**
     * @param founding       the first view of a new cluster of {@code dht.nodes} (with the id the founding members
     *                       agreed on), or null if this node is no founding member
     * @param failureTimeout {@code dht.change-failure-timeout}: how long any member the change waits for (its joiner
     *                       or leaver included) may be silent before the change is rolled back

     * @param health         the node's failure detector, which this node's liveness probes of every member feed
     */
    public TopologyCoordinator(Membership membership, ViewLog viewLog, RaftPeers raftPeers, ViewExchange exchange,
                               Supplier<PeerClient> peers, RecordStreaming streaming, OwnershipCleanup cleanup,
                               Supplier<ClusterView> founding, Duration failureTimeout, PeerHealth health) {
        this.membership = membership;
        this.viewLog = viewLog;
        this.raftPeers = raftPeers;
        this.exchange = exchange;
        this.peers = peers;
        this.streaming = streaming;
        this.cleanup = cleanup;
        this.founding = founding;
        this.failureTimeout = failureTimeout;
        this.health = health;
        this.liveness = new ChangeLiveness(health, failureTimeout, System::nanoTime);
    }

    /**
     * Starts the ticks: on every node, whichever leads, the log's change is observed and every member probed that
     * has not answered for {@link #PROBE_INTERVAL}, on every tick, a step in progress or not; a step runs only while
     * this node leads the log, one at a time (the ticks that come meanwhile take none). The probes do not wait for
     * the step: a member that answers them but holds back its answer to a step's proposal is alive, and a step that
     * waits for it up to {@link #STEP_LIMIT} must not make it look silent for that long to the next one.
     */
    public synchronized void start() {
        viewLog.onLeadership(leader -> settled = 0);
        ticks = Flux.interval(TICK)
                .doOnNext(tick -> watch(viewLog.view()))
                .onBackpressureDrop()
                .concatMap(tick -> viewLog.isLeader()
                        ? step().onErrorResume(error -> {
                            log.warn("membership step failed: {}", error.getMessage());
                            return Mono.empty();
                        })
                        : Mono.empty(), 1)
                .subscribe();
    }

    /** Observes {@code view}'s change and probes each of its members due for a probe (without waiting). */
    private void watch(ClusterView view) {
        if (view == null) {
            return;
        }
        liveness.observe(view.change());
        long now = System.nanoTime();
        for (Node node : membership.nodesOf(view, null)) {
            if (!node.self() && dueForProbe(node, now)) {
                probe(node).subscribe(null, error -> { });
            }
        }
    }

    /**
     * Waits until the log holds a view (the cluster is formed) or {@code limit} passed. Blocks: start-up of a
     * one-node cluster only, so it serves as soon as it has started.
     */
    public void awaitFormed(Duration limit) {
        Flux.interval(Duration.ofMillis(20))
                .filter(tick -> viewLog.view() != null && membership.isMember())
                .next()
                .timeout(limit, Mono.empty())
                .block();
    }

    /** Stops the ticks (shutdown). */
    public synchronized void stop() {
        if (ticks != null) {
            ticks.dispose();
        }
    }

    /** One step from the log's current view (see the class description). */
    Mono<Void> step() {
        return Mono.defer(() -> {
            ClusterView view = viewLog.view();
            if (view == null) {
                if (founding == null) {
                    return Mono.empty();
                }
                ClusterView first = founding.get();
                return everyFounderUnformed(first).flatMap(unformed -> unformed
                        ? append(0, first, "a new cluster of " + first.members().size() + " members, id "
                                + first.cluster())
                        : Mono.empty());
            }
            ClusterChange change = view.change();
            if (change != null && !change.rollingBack()) {
                URI dead = deadMember(view);
                if (dead != null) {
                    ClusterView aborted = view.aborted();
                    return append(view.epoch(), aborted, "the " + change.kind().token() + " of "
                            + change.node() + " rolled back: " + dead + " has not answered for "
                            + failureTimeout.toSeconds() + " s")
                            .then(Mono.fromRunnable(() -> tellIfLeft(change.node(), aborted)));
                }
            }
            if (!viewLog.hasConfiguration(raftPeers, view) && everyVoterAnswers(view)) {
                return Mono.fromRunnable(() -> viewLog.reconfigure(raftPeers, view))
                        .subscribeOn(Schedulers.boundedElastic()).then();
            }
            return change == null ? settle(view) : advance(view);
        });
    }

    /**
     * True if every other founding member answers that it holds no view (epoch 0) and the new cluster's id
     * ({@code founding}'s). A cluster is formed only once all of {@code dht.nodes} answer and none of them ran one:
     * founding members on empty disks whose cluster ran without them (its other members down) must not form a new
     * one over the records those members hold; the next tick asks again, so formation waits until every founding
     * member is up.
     */
    private Mono<Boolean> everyFounderUnformed(ClusterView founding) {
        URI self = membership.self();
        return Flux.fromIterable(founding.nodes())
                .filter(node -> !node.equals(self))
                .flatMap(node -> peers.get().view(new Node(node, false))
                        .timeout(PROBE_TIMEOUT)
                        .map(answer -> answer.view().epoch() == 0 && answer.view().sameCluster(founding))
                        .onErrorReturn(false))
                .all(Boolean::booleanValue)
                .doOnNext(unformed -> {
                    if (!unformed && !waitingToForm) {
                        waitingToForm = true;
                        log.info("a new cluster is formed once every one of {} answers and holds no view; waiting",
                                founding.nodes());
                    }
                });
    }

    /** The next phase of {@code view}'s change: spread, stream in the streaming phase, then append. */
    private Mono<Void> advance(ClusterView view) {
        ClusterChange change = view.change();
        Mono<Void> streamed = change.phase() == ChangePhase.STREAMING ? stream(view) : Mono.empty();
        ClusterView next = view.advanced();
        return spread(view)
                .then(streamed)
                .then(Mono.defer(() -> append(view.epoch(), next, describeStep(view))))
                .then(Mono.fromRunnable(() -> tellIfLeft(change.node(), next)));
    }

    /** Tells {@code node}, without waiting, the view {@code next} if it is no member of it (it left or was rolled back). */
    private void tellIfLeft(URI node, ClusterView next) {
        if (!next.isMember(node) && !node.equals(membership.self())) {
            propose(new Node(node, false), next).subscribe(null, error -> { });
        }
    }

    private static String describeStep(ClusterView view) {
        ClusterChange change = view.change();
        ChangePhase next = change.rollingBack() ? null : change.phase().next();
        return next != null ? "the " + change.kind().token() + " of " + change.node() + " enters " + next.token()
                : "the " + change.kind().token() + " of " + change.node()
                        + (change.rollingBack() ? " is rolled back" : " is complete");
    }

    /**
     * No change in progress: every member holds {@code view}, and each whose cleanup is pending is told to start
     * it. Once all did, nothing more until the next view. A member down for the failure timeout is not waited for
     * (a dead member would otherwise keep every other member's cleanup pending, and with it every later change, its
     * own removal included): {@link #spread} tells it the view without waiting, at most once a
     * {@link #PROBE_INTERVAL}, until it answers (then the next attempt waits for it and gives it the word too) or is
     * removed. A dead member has no request in flight, and one that comes back checks its view before it serves.
     */
    private Mono<Void> settle(ClusterView view) {
        if (settled == view.epoch()) {
            return Mono.empty();
        }
        List<Node> members = membership.nodesOf(view, null);
        List<Node> down = members.stream().filter(node -> lost(node) || liveness.downTooLong(node)).toList();
        long now = System.nanoTime();
        if (!down.isEmpty() && now - lastSettleNanos < PROBE_INTERVAL.toNanos()) {
            return Mono.empty();
        }
        lastSettleNanos = now;
        return spread(view)
                .thenMany(Flux.fromIterable(members).filter(node -> !down.contains(node))
                        .flatMap(node -> cleanupWord(node, view.epoch())))
                .timeout(STEP_LIMIT)
                .then(Mono.fromRunnable(() -> {
                    if (down.isEmpty()) {
                        settled = view.epoch();
                    }
                }));
    }

    /** Tells {@code node} that every member holds the view of {@code epoch}: its pending cleanup may start. */
    private Mono<Void> cleanupWord(Node node, long epoch) {
        return node.self() ? Mono.fromRunnable(() -> cleanup.startAfter(epoch)) : peers.get().cleanup(node, epoch);
    }

    /**
     * Sends {@code view} to every member that must take it before the next step: all but a removed node, a member
     * lost in a recovery of the log ({@link ViewLog#lost}), and a member down for the failure timeout while a change
     * rolls back or none runs (those are told without waiting).
     */
    private Mono<Void> spread(ClusterView view) {
        ClusterChange change = view.change();
        List<Node> awaited = new ArrayList<>();
        List<Node> told = new ArrayList<>();
        for (Node node : membership.nodesOf(view, change)) {
            boolean optional = lost(node) || (change == null || change.rollingBack()) && liveness.downTooLong(node);
            (optional ? told : awaited).add(node);
        }
        told.forEach(node -> propose(node, view).subscribe(null, error -> { }));
        return Flux.fromIterable(awaited)
                .flatMap(node -> propose(node, view))
                .timeout(STEP_LIMIT, Mono.error(() -> new IllegalStateException("not every member took epoch "
                        + view.epoch() + " within " + STEP_LIMIT.toSeconds() + " s")))
                .then();
    }

    private Mono<ClusterView> propose(Node node, ClusterView view) {
        Mono<ClusterView> taken = node.self() ? exchange.accept(view) : peers.get().propose(node, view, null);
        return node.self() ? taken : taken.doOnNext(answer -> health.succeeded(node));
    }

    /** The streaming phase: every gainer pulls what it gains; ends early if the change's node is found dead. */
    private Mono<Void> stream(ClusterView view) {
        ClusterChange change = view.change();
        List<Node> gainers = new ArrayList<>();
        for (URI member : view.nodes()) {
            Node node = new Node(member, member.equals(membership.self()));
            if (change.gains(member) && !lost(node)) {
                gainers.add(node);
            }
        }
        Mono<Void> pulled = Flux.fromIterable(gainers)
                .flatMap(node -> node.self() ? streaming.pullAll(view.epoch())
                        : peers.get().pull(node, view.epoch(), viewLog.lost()))
                .then();
        Mono<Long> death = Flux.interval(Duration.ofSeconds(1))
                .filter(tick -> deadMember(view) != null)
                .next();
        return pulled.takeUntilOther(death)
                .then(Mono.defer(() -> deadMember(view) != null
                        ? Mono.error(new IllegalStateException("a member is down; the change rolls back"))
                        : Mono.empty()));
    }

    /**
     * A member that the step after {@code view} must wait for and that has not answered for the failure timeout
     * ({@link ChangeLiveness}), or null. A removed node is not waited for, nor a member lost in a recovery of the log
     * (it is dead for good and removed next, gaining nothing it could serve); nor, while its change
     * rolls back, is any dead member: a member that was down for the whole timeout has no request in flight, and a
     * member one step behind is compatible with the rolled back view (it checks its view before serving again).
     */
    private URI deadMember(ClusterView view) {
        for (Node node : membership.nodesOf(view, view.change())) {
            if (!lost(node) && liveness.downTooLong(node)) {
                return node.url();
            }
        }
        return null;
    }

    /** True if {@code node} has not answered for {@link #PROBE_INTERVAL} nor been probed for as long. */
    private boolean dueForProbe(Node node, long now) {
        if (health.silentFor(node).compareTo(PROBE_INTERVAL) < 0) {
            return false;
        }
        Long probed = lastProbed.get(node.url());
        if (probed != null && now - probed < PROBE_INTERVAL.toNanos()) {
            return false;
        }
        lastProbed.put(node.url(), now);
        return true;
    }

    /**
     * Whether every voter of {@code view}'s Raft configuration ({@link RaftPeers#voters}) has answered within the
     * failure timeout. The Raft configuration follows the view only then: a new configuration whose voters include a
     * dead member (a rolled back change's dead leader among the first NORMAL members again) may not commit, and the
     * reconfiguration would hold every later step, the dead member's removal included. Meanwhile the current
     * configuration stays; the removal then leaves it out. So does a configuration that holds a member lost in a
     * recovery of the log, voter or listener: the recovered log keeps its one voter until every lost member is
     * removed.
     */
    private boolean everyVoterAnswers(ClusterView view) {
        List<URI> voters = raftPeers.voters(view);
        for (URI node : view.nodes()) {
            if (viewLog.lost().contains(node)) {
                return false;
            }
            if (voters.contains(node) && downTooLong(node)) {
                return false;
            }
        }
        return true;
    }

    /** True if {@code node} was lost in the recovery of this node's log and is not removed yet. */
    private boolean lost(Node node) {
        return viewLog.lost().contains(node.url());
    }

    private boolean downTooLong(URI node) {
        return liveness.downTooLong(new Node(node, node.equals(membership.self())));
    }

    /**
     * Asks {@code node} for its view: an answer (an error status too: it runs) is a sign of life, no answer within
     * {@link #PROBE_TIMEOUT} or no connection a failure, both reported to {@link PeerHealth}.
     */
    private Mono<Void> probe(Node node) {
        return peers.get().view(node)
                .timeout(PROBE_TIMEOUT)
                .doOnNext(answer -> health.succeeded(node))
                .onErrorResume(error -> {
                    if (error instanceof WebClientResponseException) {
                        health.succeeded(node);
                    } else {
                        health.failed(node, error);
                    }
                    return Mono.empty();
                })
                .then();
    }

    /** Appends {@code next} if the log's view is still at {@code expect}; logs {@code what} once taken. */
    private Mono<Void> append(long expect, ClusterView next, String what) {
        return Mono.fromCallable(() -> viewLog.compareAndSet(expect, next))
                .subscribeOn(Schedulers.boundedElastic())
                .doOnNext(taken -> log.info("epoch {}: {}", taken.epoch(), what))
                .onErrorResume(ViewLog.Refused.class, refused -> {
                    log.info("step to epoch {} not taken: {}", next.epoch(), refused.getMessage());
                    return Mono.empty();
                })
                .then();
    }
}
