package dev.dht.membership;

import dev.dht.cluster.ClusterView;
import dev.dht.cluster.Membership;
import dev.dht.cluster.Node;
import dev.dht.cluster.ViewConfirmation;
import dev.dht.peer.PeerClient;
import dev.dht.peer.PeerView;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;

/**
 * Confirms this node's cluster view before it serves clients: after its start, and after it finds it was paused for
 * {@link #PAUSE} or longer (a long GC pause, a frozen VM, SIGSTOP: HBase's JvmPauseMonitor idea), since it may have
 * been removed meanwhile. Until the view is confirmed, client requests get 503 ({@code view-check}) and the node is
 * not ready. A check asks every other member of the view for theirs (each within {@link #ASK_TIMEOUT}; a view of
 * another cluster does not count) and reads the
 * view log linearizably (through its leader); it adopts the newest view it got, and confirms only if the log answered
 * or a member holds the same epoch or a newer one. If none did (the members are down, frozen or cut off, and the log
 * has no leader this node reaches), it confirms nothing: it asks again every {@link #RETRY}, never confirming a view
 * by silence, so a node removed while it was down or frozen acknowledges no write until it learns it was removed.
 * A member that is merely cut off while it runs (no pause) is not checked and keeps serving. A node that is the only
 * member of its view confirms at once: it is the log's only voter, so no newer view exists without it.
 *
 * <p>A ticker thread of its own ({@code view-check-ticker}) beats every {@link #TICK}; the members are asked on
 * Reactor's schedulers, the log read (blocking) and the adoption of a view on bounded-elastic. Never blocks an event
 * loop.
 */
public final class ViewCheck {
    /** How often the ticker beats. */
    static final Duration TICK = Duration.ofMillis(500);
    /** A gap between two beats at least this long is a pause. */
    static final Duration PAUSE = Duration.ofSeconds(2);
    /** The longest wait for one member's view. */
    static final Duration ASK_TIMEOUT = Duration.ofSeconds(2);
    /** The longest wait for the view log's read. */
    static final Duration READ_TIMEOUT = Duration.ofSeconds(5);
    /** The pause between two checks that confirmed nothing. */
    static final Duration RETRY = Duration.ofSeconds(1);
    /** The longest {@link #start} waits for the first confirmation (then the checks go on in the background). */
    static final Duration START_LIMIT = Duration.ofSeconds(10);
    private static final Logger log = LoggerFactory.getLogger(ViewCheck.class);

    private final Membership membership;
    private final Supplier<PeerClient> peers;
    private final Supplier<Optional<ClusterView>> logRead;
    private final ViewConfirmation confirmation;
    private final AtomicBoolean checking = new AtomicBoolean();
    private volatile boolean stopped;
    /** True once a check that confirmed nothing was logged, until one confirms: one line per streak. */
    private volatile boolean warned;
    private Disposable ticker;

    /**
     * From its construction on, clients are served only once {@link #start} has confirmed the view.
     *
     * @param logRead the view log's linearizable read ({@code ViewLog.readView}): blocks, throws if it did not succeed
     */
    public ViewCheck(Membership membership, Supplier<PeerClient> peers, Supplier<Optional<ClusterView>> logRead) {
        this.membership = membership;
        this.peers = peers;
        this.logRead = logRead;
        this.confirmation = new ViewConfirmation(PAUSE, () -> {
            log.warn("this node was paused for {} s or more: it confirms its cluster view before it serves again",
                    PAUSE.toSeconds());
            checkUntilConfirmed();
        });
        membership.confirmWith(confirmation);
    }

    /**
     * Starts checking until the view is confirmed and waits for that up to {@link #START_LIMIT} (blocks the start;
     * a node not confirmed by then starts unready and goes on asking), then starts the ticker.
     *
     * @param storedView true if the node started from the view its data dir holds; false if it holds none (epoch 0:
     *                   a founding member or a joiner) or took it from a running member just now: nothing to confirm
     */
    public synchronized void start(boolean storedView) {
        if (storedView) {
            checkUntilConfirmed();
        } else {
            confirmation.confirm();
        }
        long deadline = System.nanoTime() + START_LIMIT.toNanos();
        while (!confirmation.isConfirmed() && System.nanoTime() < deadline && !stopped) {
            try {
                Thread.sleep(50);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        ticker = Flux.interval(TICK, Schedulers.newSingle("view-check-ticker", true))
                .subscribe(beat -> confirmation.tick());
        confirmation.tick();
    }

    /** Stops the ticker and the checks (shutdown). */
    public synchronized void stop() {
        stopped = true;
        if (ticker != null) {
            ticker.dispose();
        }
    }

    /** Checks, and again every {@link #RETRY} until a check confirmed the view; a second caller meanwhile is a no-op. */
    private void checkUntilConfirmed() {
        if (!checking.compareAndSet(false, true)) {
            return;
        }
        long started = System.nanoTime();
        Mono.defer(this::check)
                .filter(confirmed -> confirmed || stopped)
                .repeatWhenEmpty(Integer.MAX_VALUE, attempts -> attempts.delayElements(RETRY))
                .doFinally(signal -> checking.set(false))
                .subscribe(confirmed -> {
                    long waited = Duration.ofNanos(System.nanoTime() - started).toSeconds();
                    if (waited >= RETRY.toSeconds() && !stopped) {
                        log.info("cluster view confirmed at epoch {} after {} s", membership.epoch(), waited);
                    }
                }, error -> log.error("the cluster view check failed", error));
    }

    /**
     * One check: asks the members and the log, adopts the newest view if newer than this node's, and confirms the
     * view if the log answered or a member holds the same epoch or a newer one. Emits whether it confirmed.
     */
    Mono<Boolean> check() {
        URI self = membership.self();
        long epoch = membership.epoch();
        if (membership.view().nodes().equals(List.of(self))) {
            // The only member is the view log's only voter: no view can be committed without this node, so the one
            // it holds is the newest. Waiting for its log's leader here only kept a lone node unready after a pause.
            confirmation.confirm();
            return Mono.just(true);
        }
        Mono<List<ClusterView>> members = Flux.fromIterable(membership.view().nodes())
                .filter(node -> !node.equals(self))
                .flatMap(node -> peers.get().view(new Node(node, false))
                        .timeout(ASK_TIMEOUT)
                        .map(PeerView::view)
                        .filter(view -> view.sameCluster(membership.view()))
                        .onErrorResume(error -> Mono.empty()))
                .collectList();
        Mono<LogAnswer> fromLog = Mono.fromCallable(() -> new LogAnswer(true, logRead.get().orElse(null), null))
                .subscribeOn(Schedulers.boundedElastic())
                .timeout(READ_TIMEOUT)
                .onErrorResume(error -> Mono.just(new LogAnswer(false, null, error.getMessage())));
        return Mono.zip(members, fromLog)
                .publishOn(Schedulers.boundedElastic())
                .map(answers -> decide(epoch, answers.getT1(), answers.getT2()))
                .onErrorResume(error -> {
                    log.warn("cluster view check failed ({}); asking again in {} s", error.toString(),
                            RETRY.toSeconds());
                    return Mono.just(false);
                });
    }

    /** The view log's answer to a check: whether it read, the view it holds (null if none), why it did not read. */
    private record LogAnswer(boolean read, ClusterView view, String failure) {
    }

    private boolean decide(long epoch, List<ClusterView> answers, LogAnswer logAnswer) {
        ClusterView newest = logAnswer.view();
        for (ClusterView view : answers) {
            newest = newest == null || view.epoch() > newest.epoch() ? view : newest;
        }
        if (newest != null) {
            membership.adoptIfConcerned(newest); // a view without this node: Membership.adopt says so in the log
        }
        boolean memberConfirmed = answers.stream().anyMatch(view -> view.epoch() >= epoch);
        if (!logAnswer.read() && !memberConfirmed) {
            if (!warned) {
                warned = true;
                log.warn("no member confirmed epoch {} ({} of {} answered, none at that epoch or newer) and the view "
                        + "log did not ({}): this node serves no client until one does; asking every {} s", epoch,
                        answers.size(), membership.view().nodes().size() - 1, logAnswer.failure(), RETRY.toSeconds());
            }
            return false;
        }
        warned = false;
        confirmation.confirm();
        return true;
    }

}
