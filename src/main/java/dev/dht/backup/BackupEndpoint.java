package dev.dht.backup;

import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.WriteOperation;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;
import reactor.core.publisher.Mono;

/**
 * Actuator endpoint {@code backup}: {@code POST /actuator/backup} (body optional: {@code {"allowMissing": true}})
 * starts a backup of the whole cluster to {@code dht.backup.location} and answers 202 {@code {"id": ID}} once its
 * manifest is written as running; follow it with {@code GET /actuator/backups/ID}. 409 {@code {"error": reason}}
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
     */
    @WriteOperation
    public Mono<WebEndpointResponse<Map<String, Object>>> start(@Nullable Boolean allowMissing) {
        return coordinator.start(Boolean.TRUE.equals(allowMissing))
                .map(id -> new WebEndpointResponse<Map<String, Object>>(Map.of("id", id), 202))
                .onErrorResume(BackupRefusedException.class,
                        refused -> Mono.just(new WebEndpointResponse<>(Map.of("error", refused.getMessage()), 409)))
                .onErrorResume(e -> !(e instanceof BackupRefusedException), failed -> Mono.just(
                        new WebEndpointResponse<>(Map.of("error", String.valueOf(failed.getMessage())), 500)));
    }
}
