package dev.dht.backup;

import java.util.LinkedHashMap;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.WriteOperation;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;
import reactor.core.publisher.Mono;

/**
 * Actuator endpoint {@code backup}: {@code POST /actuator/backup} (body optional: {@code {"allowMissing": true,
 * "incremental": true}}) starts a backup of the whole cluster to {@code dht.backup.location} and answers 202
 * {@code {"id": ID}} once its manifest is written as running, with {@code "base": ID} for an incremental, or
 * {@code "fullReason"} when an incremental was asked and a full one is taken ({@link IncrementalBase}); follow it
 * with {@code GET /actuator/backups/ID}. 409 {@code {"error": reason}}
 * when refused (no location set, another backup running on this node, this node no member), 500 with the reason
 * when the location cannot be written. Needs the cluster secret (403 without it). Never blocks.
 */
@Endpoint(id = "backup")
public class BackupEndpoint {
    private final BackupCoordinator coordinator;

    /** The endpoint over {@code coordinator}. */
    public BackupEndpoint(BackupCoordinator coordinator) {
        this.coordinator = coordinator;
    }

    /**
     * Starts a backup, as described above.
     *
     * @param allowMissing complete without the members that are down or fail, if at most the replication factor
     *                     minus its majority (1 of 3)
     * @param incremental  store only what changed since the newest done backup at the location
     */
    @WriteOperation
    public Mono<WebEndpointResponse<Map<String, Object>>> start(@Nullable Boolean allowMissing,
                                                                @Nullable Boolean incremental) {
        return coordinator.start(Boolean.TRUE.equals(allowMissing), Boolean.TRUE.equals(incremental))
                .map(manifest -> {
                    Map<String, Object> answer = new LinkedHashMap<>();
                    answer.put("id", manifest.id());
                    if (manifest.isIncremental()) {
                        answer.put("base", manifest.base());
                    }
                    if (manifest.fullReason() != null) {
                        answer.put("fullReason", manifest.fullReason());
                    }
                    return new WebEndpointResponse<Map<String, Object>>(answer, 202);
                })
                .onErrorResume(BackupRefusedException.class,
                        refused -> Mono.just(new WebEndpointResponse<>(Map.of("error", refused.getMessage()), 409)))
                .onErrorResume(e -> !(e instanceof BackupRefusedException), failed -> Mono.just(
                        new WebEndpointResponse<>(Map.of("error", String.valueOf(failed.getMessage())), 500)));
    }
}
