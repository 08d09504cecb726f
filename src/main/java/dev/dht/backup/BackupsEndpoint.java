package dev.dht.backup;

import dev.dht.backup.format.BackupManifest;
import dev.dht.backup.format.BackupManifest.PartStatus;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.springframework.boot.actuate.endpoint.annotation.DeleteOperation;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Scheduler;

/**
 * Actuator endpoint {@code backups}, the backups at {@code dht.backup.location}:
 * <ul>
 *   <li>{@code GET /actuator/backups}: {@code {"location": ..., "backups": [{"id", "state", "startedAt", "endedAt",
 *       "base": ID|null, "since"?, "fullReason"?, "records", "bytes", "nodes": {URL: records}, "error"?, "missing"?, "coordinator"?, "updatedAt"?,
 *       "members"?}, ...]}}, newest first;</li>
 *   <li>{@code GET /actuator/backups/{id}}: one of them; while it runs also {@code "progress": {"membersDone",
 *       "members", "records"}}, on any node (from the manifest the coordinator writes every 10 s; on the coordinator,
 *       as of now); 404 if unknown;</li>
 *   <li>{@code DELETE /actuator/backups/{id}}: deletes it (cluster secret needed, 403 without); 204, 404 if unknown,
 *       409 while it runs, whichever node coordinates it, or while it is the base of an incremental that is done
 *       or runs (delete that one first).</li>
 * </ul>
 * An incremental backup ({@code "base"} names the backup it holds the changes since, itself full or incremental)
 * restores with its whole chain.
 * {@code "state"} is {@code running}, {@code done} or {@code failed} (then {@code "error"} names the members that
 * failed, or says the coordinator stopped: a running backup whose manifest was not written for a minute).
 * {@code "members"} is each member's part: {@code {"node", "state": "running"|"retrying"|"done"|"failed",
 * "records", "bytes", "attempts", "error"?}} (records so far while it runs where the coordinator knows them, its own
 * part). The location's I/O runs on the backup scheduler; nothing blocks an event loop.
 */
@Endpoint(id = "backups")
public class BackupsEndpoint {
    private final BackupCatalog catalog;
    private final BackupCoordinator coordinator;
    private final Scheduler scheduler;

    /** The endpoint over {@code catalog}; its I/O runs on {@code scheduler}. */
    public BackupsEndpoint(BackupCatalog catalog, BackupCoordinator coordinator, Scheduler scheduler) {
        this.catalog = catalog;
        this.coordinator = coordinator;
        this.scheduler = scheduler;
    }

    /** Every backup, newest first. */
    @ReadOperation
    public Mono<Map<String, Object>> list() {
        return Mono.fromCallable(() -> {
            Map<String, Object> answer = new LinkedHashMap<>();
            answer.put("location", catalog.describe());
            answer.put("backups", catalog.list().stream().map(BackupsEndpoint::describe).toList());
            return answer;
        }).subscribeOn(scheduler);
    }

    /** One backup, with its progress while it runs; 404 if unknown. */
    @ReadOperation
    public Mono<WebEndpointResponse<Map<String, Object>>> get(@Selector String id) {
        return Mono.fromCallable(() -> coordinator.current(id).or(() -> catalog.read(id))
                        .map(manifest -> {
                            Map<String, Object> answer = describe(manifest);
                            if (BackupManifest.RUNNING.equals(manifest.state())) {
                                answer.put("progress", progress(manifest));
                            }
                            return new WebEndpointResponse<>(answer, 200);
                        })
                        .orElseGet(() -> notFound(id)))
                .subscribeOn(scheduler);
    }

    /** Deletes one backup: 204, 404 if unknown, 409 while it runs on any node or an incremental needs it. */
    @DeleteOperation
    public Mono<WebEndpointResponse<Map<String, Object>>> delete(@Selector String id) {
        if (coordinator.isRunning(id)) {
            return Mono.just(new WebEndpointResponse<>(Map.of("error", "backup " + id + " is running"), 409));
        }
        return Mono.fromCallable(() -> catalog.delete(id)
                        ? new WebEndpointResponse<Map<String, Object>>(204)
                        : notFound(id))
                .onErrorResume(BackupRefusedException.class, refused -> Mono.just(
                        new WebEndpointResponse<>(Map.of("error", refused.getMessage()), 409)))
                .subscribeOn(scheduler);
    }

    /** Members done, members, records written so far. */
    private static Map<String, Object> progress(BackupManifest manifest) {
        Map<String, Object> progress = new LinkedHashMap<>();
        progress.put("membersDone", manifest.progress().stream()
                .filter(part -> BackupManifest.DONE.equals(part.state())).count());
        progress.put("members", manifest.members().size());
        progress.put("records", manifest.progress().stream().mapToLong(PartStatus::records).sum());
        return progress;
    }

    private static WebEndpointResponse<Map<String, Object>> notFound(String id) {
        return new WebEndpointResponse<>(Map.of("error", "no backup " + id), 404);
    }

    static Map<String, Object> describe(BackupManifest manifest) {
        Map<String, Object> answer = new LinkedHashMap<>();
        answer.put("id", manifest.id());
        answer.put("state", manifest.state());
        answer.put("startedAt", manifest.startedAt());
        answer.put("endedAt", manifest.endedAt());
        answer.put("epoch", manifest.epoch());
        answer.put("base", manifest.base());
        if (manifest.isIncremental()) {
            answer.put("since", manifest.since());
        }
        if (manifest.fullReason() != null) {
            answer.put("fullReason", manifest.fullReason());
        }
        answer.put("records", manifest.records());
        answer.put("bytes", manifest.bytes());
        Map<String, Long> nodes = new LinkedHashMap<>();
        manifest.nodes().forEach(part -> nodes.put(part.node(), part.records()));
        answer.put("nodes", nodes);
        if (manifest.error() != null) {
            answer.put("error", manifest.error());
        }
        if (!manifest.missing().isEmpty()) {
            answer.put("missing", List.copyOf(manifest.missing()));
        }
        if (manifest.coordinator() != null) {
            answer.put("coordinator", manifest.coordinator());
            answer.put("updatedAt", manifest.updatedAt());
        }
        if (!manifest.progress().isEmpty()) {
            List<Map<String, Object>> members = new ArrayList<>();
            for (PartStatus part : manifest.progress()) {
                Map<String, Object> member = new LinkedHashMap<>();
                member.put("node", part.node());
                member.put("state", part.state());
                member.put("records", part.records());
                member.put("bytes", part.bytes());
                member.put("attempts", part.attempts());
                if (part.error() != null) {
                    member.put("error", part.error());
                }
                members.add(member);
            }
            answer.put("members", members);
        }
        return answer;
    }
}
