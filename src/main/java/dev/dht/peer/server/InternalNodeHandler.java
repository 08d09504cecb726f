package dev.dht.peer.server;

import dev.dht.membership.LocalNodeStats;
import org.springframework.http.MediaType;
import org.springframework.web.reactive.function.server.ServerRequest;
import org.springframework.web.reactive.function.server.ServerResponse;
import reactor.core.publisher.Mono;

/**
 * The serving side of {@code GET /internal/node/stats} ({@link dev.dht.peer.PeerEndpoint#STATS}): 200 with this
 * node's {@link dev.dht.peer.NodeStats} as text. Guarded by {@link ClusterSecretFilter}; never blocks.
 */
public final class InternalNodeHandler {
    private final LocalNodeStats stats;

    /** The handler over this node's {@code stats}. */
    public InternalNodeHandler(LocalNodeStats stats) {
        this.stats = stats;
    }

    /** This node's figures, as described above. */
    public Mono<ServerResponse> stats(ServerRequest request) {
        return stats.current().flatMap(answer -> ServerResponse.ok().contentType(MediaType.TEXT_PLAIN)
                .bodyValue(answer.encode()));
    }
}
