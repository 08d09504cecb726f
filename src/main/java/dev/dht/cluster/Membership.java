package dev.dht.cluster;

import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

/**
 * The cluster view this node acts on now, and its placement: every client request, hint, repair and stream takes
 * the current {@link Placement} when it starts. A newer view is {@link #adopt adopted} (stored durably first, then
 * used), never an older one, so the epoch a node acts on only grows, across restarts too.
 *
 * <p>Requests coordinated under a view are counted ({@link #enter}, {@link Ticket#exit}): client reads and writes,
 * ranges and hint replays. A node can tell when the last request placed under an older epoch finished
 * ({@link #drained}); a phase of a membership change is entered only after every member adopted it and drained the
 * one before. What does not finish by itself within a limit is refused ({@link Ticket#revoked}), never left to run
 * on beside the next phase.
 *
 * <p>A node that is no member of its current view either has not joined yet (no view of its own: epoch 0) or has
 * left; it serves no client requests ({@link #isMember()}). Thread-safe; {@link #adopt} blocks on the view file
 * (fsync) and must not run on an event loop, everything else never blocks.
 */
public final class Membership {
    private static final Logger log = LoggerFactory.getLogger(Membership.class);
    /** How often {@link #drained} looks at the counts. */
    private static final Duration DRAIN_POLL = Duration.ofMillis(5);

    private final URI self;
    private final ClusterViewFile file;
    private final List<ViewListener> listeners = new CopyOnWriteArrayList<>();
    private final List<Ticket> retired = new CopyOnWriteArrayList<>();
    private volatile Ticket current;
    private volatile ViewConfirmation confirmation = ViewConfirmation.ALWAYS;

    /**
     * @param self    this node's base URL ({@code dht.self})
     * @param initial the view to start with: the stored one, a new cluster's first, or (epoch 0, not stored) the
     *                seeds' membership of a node that has yet to join
     * @param file    where adopted views are stored; null: nowhere (tests)
     */
    public Membership(URI self, ClusterView initial, ClusterViewFile file) {
        this.self = Objects.requireNonNull(self, "self");
        this.file = file;
        this.current = new Ticket(new Placement(initial, self));
    }

    /** This node's base URL. */
    public URI self() {
        return self;
    }

    /** The current view. */
    public ClusterView view() {
        return current.placement.view();
    }

    /** The current view's placement. */
    public Placement placement() {
        return current.placement;
    }

    /** The current epoch (0 before a joining node has a view of its own). */
    public long epoch() {
        return current.placement.view().epoch();
    }

    /**
     * The id of this node's cluster, its view's ({@link ClusterView#cluster}); empty for a founding member that has
     * not agreed on the new cluster's id yet (epoch 0 and {@link ClusterView#LEGACY_CLUSTER}). Never blocks.
     */
    public Optional<UUID> cluster() {
        ClusterView view = view();
        return view.epoch() == 0 && view.cluster().equals(ClusterView.LEGACY_CLUSTER) ? Optional.empty()
                : Optional.of(view.cluster());
    }

    /**
     * Gives the view of a founding member that has no cluster id yet the new cluster's {@code id} (not stored: a view
     * of epoch 0 never is). Does nothing if this node has an id already.
     */
    public synchronized void foundCluster(UUID id) {
        ClusterView view = view();
        if (cluster().isEmpty()) {
            current = new Ticket(new Placement(new ClusterView(0, view.replicationFactor(), view.members(), null, id),
                    self));
            log.info("the new cluster's id is {}", id);
        }
    }

    /** True if this node is a member of its current view, in any state (never before it holds a view: epoch 0). */
    public boolean isMember() {
        return current.placement.self() != null && current.placement.view().epoch() > 0;
    }

    /**
     * True if clients may be served under the current view: it was checked with the other members since the start
     * and since the last pause of this process ({@link ViewConfirmation}). Never blocks.
     */
    public boolean isViewConfirmed() {
        return confirmation.isConfirmed();
    }

    /** From now on {@link #isViewConfirmed} asks {@code confirmation} (set once, before the node serves). */
    public void confirmWith(ViewConfirmation confirmation) {
        this.confirmation = confirmation;
    }

    /** True if this node is a {@link MemberState#NORMAL} member: it has joined and is not leaving. */
    public boolean isNormalMember() {
        return view().state(self).orElse(null) == MemberState.NORMAL;
    }

    /**
     * The current placement, counted as in use by one more coordinated request until {@link Ticket#exit}. Never
     * blocks.
     */
    public Ticket enter() {
        Ticket ticket = current;
        ticket.inFlight.increment();
        return ticket;
    }

    /**
     * Makes {@code next} the current view if it is newer than the current one and of this node's cluster
     * ({@link #cluster()}; a view of another cluster is logged and refused; a founding member that has no cluster id
     * yet takes any): stores it durably (if this
     * node is a member of it, or was one of the view it replaces), then switches, logs the phase and tells the
     * listeners.
     * Blocks on the file: never call it on an event loop.
     *
     * @return true if adopted, false if {@code next} is not newer or of another cluster
     * @throws java.io.UncheckedIOException if the view cannot be stored (the current view stays)
     */
    public synchronized boolean adopt(ClusterView next) {
        Ticket previous = current;
        if (next.epoch() <= previous.placement.view().epoch()) {
            return false;
        }
        if (cluster().isPresent() && !next.sameCluster(previous.placement.view())) {
            log.warn("refused the view of epoch {} of cluster {}: this node is of cluster {}", next.epoch(),
                    next.cluster(), previous.placement.view().cluster());
            return false;
        }
        if (file != null && (next.isMember(self) || previous.placement.self() != null)) {
            file.write(next);
        }
        Ticket ticket = new Ticket(new Placement(next, self));
        current = ticket;
        previous.retiredAtNanos = System.nanoTime();
        retired.add(previous);
        log.info("cluster view epoch {}: {}", next.epoch(), describe(next));
        if (previous.placement.self() != null && !next.isMember(self)) {
            // whichever path brought the view (the view log, a peer's answer, the start-up check): said once, here
            ClusterChange leaving = previous.placement.view().change();
            boolean decommissioned = leaving != null && leaving.kind() == ChangeKind.DECOMMISSION
                    && leaving.node().equals(self);
            String line = "{} is no member of the cluster at epoch {}: it serves no client any more";
            if (decommissioned) {
                log.info(line, self, next.epoch());
            } else {
                log.warn(line, self, next.epoch());
            }
        }
        for (ViewListener listener : listeners) {
            try {
                listener.adopted(ticket.placement);
            } catch (RuntimeException e) {
                log.error("a cluster view listener failed at epoch {}", next.epoch(), e);
            }
        }
        return true;
    }

    /**
     * {@link #adopt}s {@code next} if it concerns this node: this node is a member of its current view (a view
     * without it tells it that it left) or of {@code next} (a node yet to join takes only a view that holds it).
     * Blocks on the file, as {@link #adopt}.
     *
     * @return true if adopted
     */
    public boolean adoptIfConcerned(ClusterView next) {
        return (isMember() || next.isMember(self)) && adopt(next);
    }

    /**
     * The members of {@code view} as nodes, this one marked as self, but the dead node {@code change} removes if it is
     * a removenode (null: none): the members a membership step asks for views, streams or consent.
     */
    public List<Node> nodesOf(ClusterView view, ClusterChange change) {
        List<Node> nodes = new ArrayList<>(view.members().size());
        for (Member member : view.members()) {
            if (change == null || !change.removes(member.node())) {
                nodes.add(new Node(member.node(), member.node().equals(self)));
            }
        }
        return nodes;
    }

    /**
     * Calls {@code listener} with every placement adopted from now on, on the adopting thread (it may block), after the
     * listeners registered before it: see {@link ViewListener} for the thread, the order and its failures. The
     * configuration registers each listener when it makes the bean the listener serves, so their order is the order
     * in which the context makes those beans; in a node that is {@code CleanupAfterChange}, {@code HintsOfRemovedPeers},
     * {@link EpochFence}, {@code NewMemberReplicas}, then (a founding member on an empty disk) {@code FirstViewRebuild}.
     * None of them reads what another one changes.
     */
    public void onChange(ViewListener listener) {
        listeners.add(listener);
    }

    /**
     * Completes once every request this node entered under an epoch below {@code epoch} has exited. The requests of a
     * view retired more than {@code limit} ago that still run are {@link Ticket#revoked revoked} (logged): a range
     * a slow client reads is cut, a hint replay sends no more hints, so a membership step never waits for a client
     * and never goes on beside requests placed under a view two steps old. Client reads and writes end by
     * themselves within {@code dht.replica-timeout} (their replica calls time out), revoked or not. Polls every few
     * ms; never blocks a thread.
     */
    public Mono<Void> drained(long epoch, Duration limit) {
        return Flux.interval(Duration.ZERO, DRAIN_POLL)
                .filter(tick -> {
                    retired.removeIf(ticket -> ticket.inFlight.sum() == 0);
                    boolean drained = true;
                    for (Ticket ticket : retired) {
                        if (ticket.placement.view().epoch() >= epoch) {
                            continue;
                        }
                        drained = false;
                        if (System.nanoTime() - ticket.retiredAtNanos >= limit.toNanos() && ticket.revoke()) {
                            log.warn("{} requests coordinated under epoch {} still run {} ms after it was replaced;"
                                    + " refusing them (ranges are cut, hint replays stop)", ticket.inFlight.sum(),
                                    ticket.placement.view().epoch(), limit.toMillis());
                        }
                    }
                    return drained;
                })
                .next()
                .then();
    }

    /** One line for the log: members and states, and the change with its phase. */
    public static String describe(ClusterView view) {
        StringBuilder line = new StringBuilder();
        for (Member member : view.members()) {
            line.append(line.isEmpty() ? "" : ", ").append(member.node().getHost()).append(':')
                    .append(member.node().getPort());
            if (member.state() != MemberState.NORMAL) {
                line.append(' ').append(member.state());
            }
        }
        ClusterChange change = view.change();
        line.append(change == null ? "; no change in progress"
                : "; " + change.kind().token() + " of " + change.node() + ", phase " + change.phase().token());
        return line.toString();
    }

    /**
     * The placement of one epoch and the number of requests coordinated under it that have not exited yet; once the
     * view is replaced and a drain found it running too long, revoked: requests that may run long (ranges, hint
     * replays) watch {@link #revoked} and end early.
     */
    public static final class Ticket {
        private final Placement placement;
        private final LongAdder inFlight = new LongAdder();
        private final Sinks.Empty<Void> revocation = Sinks.empty();
        private final AtomicBoolean revokedFlag = new AtomicBoolean();
        /** {@link System#nanoTime} when a newer view replaced this one (set before it is retired). */
        private volatile long retiredAtNanos;

        private Ticket(Placement placement) {
            this.placement = placement;
        }

        /** The placement the request uses from start to end. */
        public Placement placement() {
            return placement;
        }

        /** The request is done (answered, failed or cancelled); call exactly once per {@link #enter}. */
        public void exit() {
            inFlight.decrement();
        }

        /** True once the requests of this ticket's view are refused: start no more work under it. Never blocks. */
        public boolean isRevoked() {
            return revokedFlag.get();
        }

        /** Completes (empty) when the ticket is revoked; never errors. */
        public Mono<Void> revoked() {
            return revocation.asMono();
        }

        /** Revokes the ticket; true the first time. */
        private boolean revoke() {
            if (!revokedFlag.compareAndSet(false, true)) {
                return false;
            }
            revocation.tryEmitEmpty();
            return true;
        }
    }
}
