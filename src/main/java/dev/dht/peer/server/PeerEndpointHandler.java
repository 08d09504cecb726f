package dev.dht.peer.server;

import dev.dht.peer.PeerEndpoint;
import java.util.Map;
import org.springframework.web.reactive.function.server.HandlerFunction;
import org.springframework.web.reactive.function.server.ServerResponse;

/**
 * A feature's serving side of the node-to-node protocol (after Cassandra's {@code IVerbHandler}, which each feature
 * keeps beside its own code): the handler of each {@link PeerEndpoint} the feature serves. The features' handlers are
 * Spring beans; {@link PeerRoutes} collects them all and routes each endpoint to its one handler behind the guards of
 * every internal route, so {@code peer} knows the endpoints and no feature. A handler function runs on the event loop
 * that read the request: it must not block, and hands storage or disk work to its scheduler.
 */
public interface PeerEndpointHandler {

    /** The handler of each endpoint this feature serves; an endpoint is served by one feature only. */
    Map<PeerEndpoint, HandlerFunction<ServerResponse>> handlers();
}
