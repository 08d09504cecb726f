package dev.dht.backup;

import dev.dht.backup.format.BackupFileFormat;
import dev.dht.backup.format.BackupManifest;
import dev.dht.backup.format.BackupManifest.MemberPart;
import dev.dht.cluster.ClusterView;
import dev.dht.cluster.Membership;
import dev.dht.cluster.Node;
import dev.dht.metrics.BackupMetrics;
import dev.dht.peer.PeerClient;
import java.net.URI;
import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.web.reactive.function.client.WebClientResponseException;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

/**
 * Runs a cluster backup from the node it was asked on (its coordinator): writes the manifest as running, asks every
 * member of the current view for its part at once ({@link MemberBackup} here, {@link PeerClient#backup} on the
 * others), then writes the manifest as done, or as failed with a reason naming each member that was down or failed,
 * and applies {@code dht.backup.keep}. With {@code allowMissing} a backup still completes without the members that
 * failed, as long as at most {@link #allowedMissing} failed (the replication factor minus its majority: each key
 * written to a majority of its replicas then still has a copy), and the manifest lists them as missing.
 *
 * <p>Threads: {@link #start} never blocks; manifest I/O runs on the backup scheduler. One backup runs at a time per
 * coordinator (and one part per node: a second backup started elsewhere fails on the members that are busy).
 */
public final class BackupCoordinator {
    private static final Logger LOG = LoggerFactory.getLogger(BackupCoordinator.class);
    private static final DateTimeFormatter ID_TIME = DateTimeFormatter.ofPattern("yyyyMMdd'T'HHmmss'Z'")
            .withZone(ZoneOffset.UTC);
    private final Membership membership;
    private final MemberBackup local;
    private final PeerClient peers;
    private final BackupCatalog catalog;
    private final Scheduler scheduler;
    private final BackupMetrics metrics;
    private final Clock clock;
    private final Map<String, Running> running = new ConcurrentHashMap<>();

    /** What a running backup has done so far, for {@code GET /actuator/backups/{id}}. */
    record Running(BackupManifest manifest, List<MemberPart> parts, AtomicInteger membersDone) {
    }

    /**
     * @param catalog   the backups at the location, with retention
     * @param scheduler where manifest I/O runs (it blocks)
     */
    public BackupCoordinator(Membership membership, MemberBackup local, PeerClient peers, BackupCatalog catalog,
                             Scheduler scheduler, BackupMetrics metrics, Clock clock) {
        this.membership = membership;
        this.local = local;
        this.peers = peers;
        this.catalog = catalog;
        this.scheduler = scheduler;
        this.metrics = metrics;
        this.clock = clock;
    }

    /**
     * Starts a backup of every member of the current view; completes with its id once its manifest is written as
     * running (the rest runs in the background). Fails with {@link BackupRefusedException} if another backup runs
     * on this node or this node is no member.
     */
    public Mono<String> start(boolean allowMissing) {
        if (!membership.isMember()) {
            return Mono.error(new BackupRefusedException("this node is no member of the cluster"));
        }
        ClusterView view = membership.view();
        Instant now = clock.instant();
        String id = ID_TIME.format(now) + "-" + HexFormat.of().toHexDigits((short) ThreadLocalRandom.current().nextInt());
        List<String> members = view.nodes().stream().map(URI::toString).toList();
        BackupManifest manifest = new BackupManifest(BackupFileFormat.VERSION, id, BackupManifest.RUNNING, null,
                now.toString(), null, view.epoch(), view.replicationFactor(), members, List.of(), List.of());
        Running state = new Running(manifest, new CopyOnWriteArrayList<>(), new AtomicInteger());
        synchronized (running) {
            if (!running.isEmpty()) {
                return Mono.error(new BackupRefusedException("backup " + running.keySet().iterator().next()
                        + " is running on this node"));
            }
            running.put(id, state);
        }
        LOG.info("backup {}: started by {} at epoch {} over {}", id, membership.self(), view.epoch(), members);
        return Mono.fromRunnable(() -> catalog.write(manifest))
                .subscribeOn(scheduler)
                .doOnError(e -> running.remove(id))
                .doOnSuccess(written -> run(state, view, allowMissing).subscribe())
                .thenReturn(id);
    }

    /** The parts of every member, then the final manifest; never fails (a failure is written into the manifest). */
    private Mono<Void> run(Running state, ClusterView view, boolean allowMissing) {
        String id = state.manifest().id();
        List<Mono<Outcome>> parts = new ArrayList<>();
        for (URI member : view.nodes()) {
            Mono<MemberPart> part = member.equals(membership.self())
                    ? local.run(id)
                    : peers.backup(new Node(member, false), id).map(MemberPart::fromJson);
            parts.add(part.doOnNext(done -> {
                        state.parts().add(done);
                        state.membersDone().incrementAndGet();
                    })
                    .map(done -> new Outcome(member, done, null))
                    .onErrorResume(e -> Mono.just(new Outcome(member, null, reason(member, e)))));
        }
        return Flux.merge(parts).collectList()
                .flatMap(outcomes -> Mono.fromRunnable(() -> finish(state, outcomes, allowMissing)).subscribeOn(scheduler))
                .onErrorResume(e -> {
                    LOG.error("backup {}: cannot write its manifest: {}", id, e.toString());
                    return Mono.empty();
                })
                .doFinally(signal -> running.remove(id))
                .then();
    }

    private record Outcome(URI member, MemberPart part, String error) {
    }

    /** Writes the final manifest (blocking) and applies retention. */
    private void finish(Running state, List<Outcome> outcomes, boolean allowMissing) {
        BackupManifest manifest = state.manifest();
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
     * What this node knows of backup {@code id} while it coordinates it: members done, records written; empty if it
     * does not coordinate it (the manifest then says all there is).
     */
    public Optional<Map<String, Object>> progress(String id) {
        Running state = running.get(id);
        if (state == null) {
            return Optional.empty();
        }
        long records = state.parts().stream().mapToLong(MemberPart::records).sum();
        long localRecords = local.progress(id);
        return Optional.of(Map.of(
                "membersDone", state.membersDone().get(),
                "members", state.manifest().members().size(),
                "records", records + Math.max(0, localRecords)));
    }

    /** Whether backup {@code id} is running with this node as its coordinator. */
    public boolean isRunning(String id) {
        return running.containsKey(id);
    }
}
