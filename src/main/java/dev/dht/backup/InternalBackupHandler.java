package dev.dht.backup;

import dev.dht.failure.OverloadedException;
import dev.dht.http.QueryParameters;
import dev.dht.peer.PeerEndpoint;
import dev.dht.peer.server.PeerEndpointHandler;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.web.reactive.function.server.HandlerFunction;
import org.springframework.web.reactive.function.server.ServerRequest;
import org.springframework.web.reactive.function.server.ServerResponse;
import reactor.core.publisher.Mono;

/**
 * The serving side of {@code POST /internal/backup?id=ID[&since=T]} ({@link dev.dht.peer.PeerEndpoint#BACKUP}): writes this
 * node's part of the backup ({@link MemberBackup}, on the backup scheduler) and answers 200 with the part's JSON once
 * done; 409 with the reason if refused (no location, a part already running), 400 for a malformed id or since, 503 (by the
 * error handler, with the reason's header) if the storage queue stayed full, 500 with the failure's message if
 * writing failed. Routed by {@link dev.dht.peer.server.PeerRoutes} behind the guards of every internal route.
 * Returns at once; the part is written on the backup scheduler, off the event loop.
 */
public final class InternalBackupHandler implements PeerEndpointHandler {
    private static final Logger LOG = LoggerFactory.getLogger(InternalBackupHandler.class);
    private final MemberBackup backup;

    /** The handler over this node's {@code backup}. */
    public InternalBackupHandler(MemberBackup backup) {
        this.backup = backup;
    }

    /** {@link PeerEndpoint#BACKUP}. */
    @Override
    public Map<PeerEndpoint, HandlerFunction<ServerResponse>> handlers() {
        return Map.of(PeerEndpoint.BACKUP, this::backup);
    }

    /** Writes this node's part, as described above. */
    public Mono<ServerResponse> backup(ServerRequest request) {
        String id = QueryParameters.required(request, "id");
        if (!id.matches("[A-Za-z0-9][A-Za-z0-9_-]{0,99}")) {
            return text(HttpStatus.BAD_REQUEST, "malformed backup id");
        }
        long since;
        try {
            since = request.queryParam("since").map(Long::parseLong).orElse(0L);
        } catch (NumberFormatException e) {
            return text(HttpStatus.BAD_REQUEST, "malformed since: a timestamp");
        }
        if (since < 0) {
            return text(HttpStatus.BAD_REQUEST, "malformed since: a timestamp");
        }
        return backup.run(id, since)
                .flatMap(part -> ServerResponse.ok().contentType(MediaType.APPLICATION_JSON).bodyValue(part.toJson()))
                .onErrorResume(BackupRefusedException.class, refused -> text(HttpStatus.CONFLICT, refused.getMessage()))
                .onErrorResume(e -> !(e instanceof BackupRefusedException || e instanceof OverloadedException), failed -> {
                    LOG.warn("backup {}: this node's part failed", id, failed);
                    return text(HttpStatus.INTERNAL_SERVER_ERROR, String.valueOf(failed.getMessage()));
                });
    }

    private static Mono<ServerResponse> text(HttpStatus status, String message) {
        return ServerResponse.status(status).contentType(MediaType.TEXT_PLAIN).bodyValue(message + "\n");
    }
}
