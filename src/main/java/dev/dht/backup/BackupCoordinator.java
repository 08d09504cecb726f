package dev.dht.backup;

import dev.dht.backup.format.BackupFileFormat;
import dev.dht.backup.format.BackupManifest;
import dev.dht.backup.format.BackupManifest.MemberPart;
import dev.dht.cluster.ClusterView;
import dev.dht.cluster.Membership;
import dev.dht.cluster.Node;
import dev.dht.failure.OverloadReason;
import dev.dht.failure.OverloadedException;
import dev.dht.metrics.BackupMetrics;
import dev.dht.node.HybridLogicalClock;
import dev.dht.peer.PeerClient;
import java.net.URI;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.web.reactive.function.client.WebClientRequestException;
import org.springframework.web.reactive.function.client.WebClientResponseException;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Scheduler;

/**
 * Runs a cluster backup from the node it was asked on (its coordinator): writes the manifest as running, asks every
 * member of the current view for its part at once ({@link MemberBackup} here, {@link PeerClient#backup} on the
 * others), then writes the manifest as done, or as failed with a reason naming each member that was down or failed,
 * and applies {@code dht.backup.keep}. A part that fails on an overload (503, a full storage queue) or an unreachable
 * member (a restart) is tried again with backoff for up to {@code dht.backup.retry-window} after its first such
 * failure. With {@code allowMissing} a backup still completes without the members that failed, as long as at most
 * {@link #allowedMissing} failed (the replication factor minus its majority: each key written to a majority of its
 * replicas then still has a copy), and the manifest lists them as missing. While it runs the manifest is written
 * again every {@link BackupManifest#HEARTBEAT} with each member's part, so every node shows the progress and knows
 * the backup runs. An incremental backup names its base and asks every member for the records stamped since its
 * snapshot point ({@link IncrementalBase}).
 *
 * <p>Threads: {@link #start} never blocks; manifest I/O runs on the backup scheduler. The backup runs whether or not
 * the caller still waits for its id (a cancelled request leaves it running to its end, which frees this node for the
 * next). One backup runs at a time per coordinator (and one part per node: a second backup started elsewhere fails on
 * the members that are busy).
 */
public final class BackupCoordinator {
    private static final Logger LOG = LoggerFactory.getLogger(BackupCoordinator.class);
    private static final DateTimeFormatter ID_TIME = DateTimeFormatter.ofPattern("yyyyMMdd'T'HHmmss'Z'")
            .withZone(ZoneOffset.UTC);
    private static final Duration FIRST_RETRY = Duration.ofMillis(500);
    private static final Duration LONGEST_RETRY = Duration.ofSeconds(10);
    private final Membership membership;
    private final MemberBackup local;
    private final PeerClient peers;
    private final BackupCatalog catalog;
    private final Scheduler scheduler;
    private final BackupMetrics metrics;
    private final Clock clock;
    private final Duration retryWindow;
    private final Duration incrementalMargin;
    private final Duration gcGrace;
    private final Map<String, BackupRun> running = new ConcurrentHashMap<>();

    /**
     * @param catalog     the backups at the location, with retention
     * @param scheduler   where manifest I/O runs (it blocks)
     * @param retryWindow {@code dht.backup.retry-window}: how long a member's part is tried again after an overload
     *                    or an unreachable member; zero: not at all
     * @param incrementalMargin {@code dht.backup.incremental-margin}: an incremental holds the records stamped since its
     *                    base started less this much ({@link IncrementalBase})
     * @param gcGrace     {@code dht.tombstone.gc-grace}: an incremental whose base is older than that (less twice the
     *                    margin) is taken as a full backup
     */
    public BackupCoordinator(Membership membership, MemberBackup local, PeerClient peers, BackupCatalog catalog,
                             Scheduler scheduler, BackupMetrics metrics, Clock clock, Duration retryWindow,
                             Duration incrementalMargin, Duration gcGrace) {
        this.membership = membership;
        this.local = local;
        this.peers = peers;
        this.catalog = catalog;
        this.scheduler = scheduler;
        this.metrics = metrics;
        this.clock = clock;
        this.retryWindow = retryWindow;
        this.incrementalMargin = incrementalMargin;
        this.gcGrace = gcGrace;
    }

    /**
     * Starts a backup of every member of the current view; completes with its first manifest (its id, and for an
     * incremental its base) once that is written as running (the rest runs in the background, also if the returned
     * Mono is cancelled). Fails with {@link BackupRefusedException} if another backup runs on this node or this node
     * is no member.
     *
     * @param allowMissing complete without the members that fail, up to {@link #allowedMissing}
     * @param incremental  store only the records stamped since the newest done backup at the location started (less
     *                     the margin: {@link IncrementalBase}); a full backup, with {@link BackupManifest#fullReason},
     *                     where there is none or it is older than the tombstone GC grace allows
     */
    public Mono<BackupManifest> start(boolean allowMissing, boolean incremental) {
        if (!membership.isMember()) {
            return Mono.error(new BackupRefusedException("this node is no member of the cluster"));
        }
        if (!running.isEmpty()) {
            return Mono.error(refusal());
        }
        ClusterView view = membership.view();
        Instant now = clock.instant();
        String candidate = ID_TIME.format(now) + "-"
                + HexFormat.of().toHexDigits((short) ThreadLocalRandom.current().nextInt());
        List<String> members = view.nodes().stream().map(URI::toString).toList();
        Sinks.One<BackupManifest> written = Sinks.one();
        // blocking: listing the location for the base and writing the first manifest run on the backup scheduler
        Mono.fromCallable(() -> {
                    IncrementalBase base = incremental
                            ? IncrementalBase.choose(catalog.list(), now, incrementalMargin, gcGrace)
                            : new IncrementalBase(null, null, null);
                    String id = base.incremental() ? idAfter(candidate, base.base().id()) : candidate;
                    BackupManifest first = new BackupManifest(BackupFileFormat.VERSION, id, BackupManifest.RUNNING,
                            null, now.toString(), null, view.epoch(), view.replicationFactor(), members, List.of(),
                            List.of(), membership.self().toString(), now.toString(), List.of(),
                            base.incremental() ? base.base().id() : null,
                            base.incremental() ? base.since().toString() : null, base.fullReason());
                    BackupRun run = new BackupRun(first);
                    synchronized (running) {
                        if (!running.isEmpty()) {
                            throw refusal();
                        }
                        running.put(id, run);
                    }
                    try {
                        catalog.write(first.updated(now.toString(), run.progress("", -1)));
                    } catch (RuntimeException e) {
                        running.remove(id);
                        throw e;
                    }
                    return run;
                })
                .subscribeOn(scheduler)
                .subscribe(run -> {
                    BackupManifest first = run.manifest();
                    LOG.info("backup {}: started by {} at epoch {} over {}{}", first.id(), membership.self(),
                            view.epoch(), members, first.isIncremental() ? ", incremental to " + first.base() + " since "
                                    + first.since() : first.fullReason() == null ? "" : ", full: " + first.fullReason());
                    written.tryEmitValue(first);
                    run(run, view, allowMissing).subscribe();
                }, written::tryEmitError);
        return written.asMono();
    }

    /**
     * {@code candidate}, or if it does not sort after {@code base} (both started within one second, or the base's
     * coordinator's clock ahead), the first id that does: the base's time with the next suffix, or the next second.
     * Retention and the choice of a base order backups by id, so an incremental must sort after its base.
     */
    static String idAfter(String candidate, String base) {
        if (candidate.compareTo(base) > 0) {
            return candidate;
        }
        int dash = base.lastIndexOf('-');
        String time = base.substring(0, dash);
        int suffix = Integer.parseInt(base.substring(dash + 1), 16);
        if (suffix < 0xffff) {
            return time + "-" + HexFormat.of().toHexDigits((short) (suffix + 1));
        }
        return ID_TIME.format(ID_TIME.parse(time, Instant::from).plusSeconds(1)) + "-0000";
    }

    /** A full backup, as {@link #start(boolean, boolean)}. */
    public Mono<BackupManifest> start(boolean allowMissing) {
        return start(allowMissing, false);
    }

    private BackupRefusedException refusal() {
        return new BackupRefusedException("backup " + running.keySet().stream().findFirst().orElse("")
                + " is running on this node");
    }

    /** The parts of every member, then the final manifest; never fails (a failure is written into the manifest). */
    private Mono<Void> run(BackupRun run, ClusterView view, boolean allowMissing) {
        String id = run.manifest().id();
        Disposable heartbeat = Flux.interval(BackupManifest.HEARTBEAT, BackupManifest.HEARTBEAT)
                .onBackpressureDrop()
                .concatMap(tick -> Mono.fromRunnable(() -> run.writeIfRunning(catalog, current(run)))
                        .subscribeOn(scheduler)
                        .onErrorResume(e -> {
                            LOG.warn("backup {}: cannot write its manifest's heartbeat: {}", id, e.toString());
                            return Mono.empty();
                        }))
                .subscribe();
        List<Mono<Outcome>> parts = new ArrayList<>();
        for (URI member : view.nodes()) {
            parts.add(part(run, member, 1, 0)
                    .doOnNext(done -> run.done(member.toString(), done))
                    .map(done -> new Outcome(member, done, null))
                    .onErrorResume(e -> {
                        String why = reason(member, e);
                        run.failed(member.toString(), why);
                        return Mono.just(new Outcome(member, null, why));
                    }));
        }
        return Flux.merge(parts).collectList()
                .flatMap(outcomes -> Mono.fromRunnable(() -> finish(run, outcomes, allowMissing)).subscribeOn(scheduler))
                .onErrorResume(e -> {
                    LOG.error("backup {}: cannot write its manifest: {}", id, e.toString());
                    return Mono.empty();
                })
                .doFinally(signal -> {
                    heartbeat.dispose();
                    running.remove(id);
                })
                .then();
    }

    /**
     * {@code member}'s part, attempt {@code attempt}; after a failure that {@link #retriable} names, tried again with
     * backoff while less than the retry window passed since the first failure of the streak ({@code streakStart},
     * nanoTime; 0 before any; an attempt that ran longer than the window starts a new streak).
     */
    private Mono<MemberPart> part(BackupRun run, URI member, int attempt, long streakStart) {
        String id = run.manifest().id();
        return Mono.defer(() -> {
            run.attempt(member.toString());
            long started = System.nanoTime();
            long since = sinceTimestamp(run.manifest());
            Mono<MemberPart> call = member.equals(membership.self())
                    ? local.run(id, since)
                    : peers.backup(new Node(member, false), id, since).map(MemberPart::fromJson);
            return call.onErrorResume(e -> {
                long now = System.nanoTime();
                long streak = streakStart == 0 || now - started > retryWindow.toNanos() ? now : streakStart;
                if (!retriable(e) || now - streak >= retryWindow.toNanos()) {
                    return Mono.error(e);
                }
                String why = reason(member, e);
                run.retrying(member.toString(), why);
                Duration delay = FIRST_RETRY.multipliedBy(1L << Math.min(attempt - 1, 5));
                delay = delay.compareTo(LONGEST_RETRY) > 0 ? LONGEST_RETRY : delay;
                LOG.info("backup {}: {}; attempt {} in {} ms", id, why, attempt + 1, delay.toMillis());
                return Mono.delay(delay).then(part(run, member, attempt + 1, streak));
            });
        });
    }

    /**
     * Whether a part's failure may pass: an overload (a full storage queue here, a 503 from the member), a member
     * that just started, or no connection to it (down, restarting, the connection lost mid-scan). Not a refusal
     * (no location, a part already running), a full disk, a node no longer a member, nor a failing write.
     */
    static boolean retriable(Throwable e) {
        if (e instanceof OverloadedException overloaded) {
            return overloaded.reason() != OverloadReason.DISK_FULL && overloaded.reason() != OverloadReason.NOT_A_MEMBER;
        }
        return e instanceof WebClientRequestException;
    }

    /** The lowest timestamp a part of {@code manifest} holds: its {@code since} (an incremental), else 0. */
    static long sinceTimestamp(BackupManifest manifest) {
        return manifest.since() == null ? 0
                : HybridLogicalClock.timestampOf(Instant.parse(manifest.since()).toEpochMilli());
    }

    private record Outcome(URI member, MemberPart part, String error) {
    }

    /** The manifest of {@code run} as of now, with each member's part. */
    private BackupManifest current(BackupRun run) {
        String self = membership.self().toString();
        return run.manifest().updated(clock.instant().toString(), run.progress(self, local.progress(run.manifest().id())));
    }

    /** Writes the final manifest (blocking) and applies retention. */
    private void finish(BackupRun run, List<Outcome> outcomes, boolean allowMissing) {
        run.end();
        BackupManifest manifest = current(run);
        List<MemberPart> done = new ArrayList<>();
        List<String> errors = new ArrayList<>();
        List<String> missing = new ArrayList<>();
        for (URI member : manifest.members().stream().map(URI::create).toList()) {
            for (Outcome outcome : outcomes) {
                if (outcome.member().equals(member)) {
                    if (outcome.part() != null) {
                        done.add(outcome.part());
                    } else {
                        errors.add(outcome.error());
                        missing.add(member.toString());
                    }
                }
            }
        }
        String error = null;
        if (!errors.isEmpty() && !allowMissing) {
            error = String.join("; ", errors);
        } else if (missing.size() > allowedMissing(manifest)) {
            error = missing.size() + " members missing, more than the " + allowedMissing(manifest)
                    + " that keep a copy of every write acknowledged by a majority of its replicas (replication factor "
                    + manifest.replicationFactor() + "): " + String.join("; ", errors);
        }
        Instant end = clock.instant();
        BackupManifest last = manifest.ended(error == null ? BackupManifest.DONE : BackupManifest.FAILED, error,
                end.toString(), done, error == null ? missing : List.of());
        // free this node before the manifest says the backup ended: whoever reads that may start the next at once
        running.remove(manifest.id());
        catalog.write(last);
        if (error == null) {
            metrics.succeeded(end.getEpochSecond());
            LOG.info("backup {}: done, {} records, {} bytes{}", manifest.id(), last.records(), last.bytes(),
                    missing.isEmpty() ? "" : ", missing " + missing);
            catalog.applyRetention();
        } else {
            LOG.warn("backup {}: failed: {}", manifest.id(), error);
        }
    }

    /**
     * Members a backup with {@code allowMissing} may lack: the replication factor (capped at the members) minus its
     * majority, so that every write acknowledged by a majority of its replicas keeps a copy on a member whose part
     * is in the backup (1 of 3, 2 of 5, none of 1 or 2).
     */
    static int allowedMissing(BackupManifest manifest) {
        int replicas = Math.min(manifest.replicationFactor(), manifest.members().size());
        return replicas - (replicas / 2 + 1);
    }

    /** Why {@code member}'s part failed, naming it; an answer's body is the peer's own reason. */
    private static String reason(URI member, Throwable e) {
        String why = e instanceof WebClientResponseException answer && !answer.getResponseBodyAsString().isBlank()
                ? answer.getStatusCode().value() + " " + answer.getResponseBodyAsString().strip()
                : e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
        return "member " + member + " failed: " + why;
    }

    /**
     * Backup {@code id}'s manifest as of now, with each member's part, while this node coordinates it; empty if it
     * does not (the manifest at the location then says all there is, as of its last heartbeat).
     */
    public Optional<BackupManifest> current(String id) {
        BackupRun run = running.get(id);
        return run == null ? Optional.empty() : Optional.of(current(run));
    }

    /** Whether backup {@code id} is running with this node as its coordinator. */
    public boolean isRunning(String id) {
        return running.containsKey(id);
    }
}
