package dev.dht.membership;

import dev.dht.peer.PeerEndpoint;
import dev.dht.peer.server.PeerEndpointHandler;
import java.util.Map;
import org.springframework.http.MediaType;
import org.springframework.web.reactive.function.server.HandlerFunction;
import org.springframework.web.reactive.function.server.ServerRequest;
import org.springframework.web.reactive.function.server.ServerResponse;
import reactor.core.publisher.Mono;

/**
 * The serving side of {@code GET /internal/node/stats} ({@link dev.dht.peer.PeerEndpoint#STATS}): 200 with this
 * node's {@link dev.dht.peer.NodeStats} as text. Routed by
 * {@link dev.dht.peer.server.PeerRoutes} behind the guards of every internal route; never blocks.
 */
public final class InternalNodeHandler implements PeerEndpointHandler {
    private final LocalNodeStats stats;

    /** The handler over this node's {@code stats}. */
    public InternalNodeHandler(LocalNodeStats stats) {
        this.stats = stats;
    }

    /** {@link PeerEndpoint#STATS}. */
    @Override
    public Map<PeerEndpoint, HandlerFunction<ServerResponse>> handlers() {
        return Map.of(PeerEndpoint.STATS, this::stats);
    }

    /** This node's figures, as described above. */
    public Mono<ServerResponse> stats(ServerRequest request) {
        return stats.current().flatMap(answer -> ServerResponse.ok().contentType(MediaType.TEXT_PLAIN)
                .bodyValue(answer.encode()));
    }
}
