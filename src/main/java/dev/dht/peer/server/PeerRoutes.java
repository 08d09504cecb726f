package dev.dht.peer.server;

import dev.dht.peer.PeerEndpoint;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import java.util.function.Supplier;
import org.springframework.web.reactive.function.server.HandlerFunction;
import org.springframework.web.reactive.function.server.RequestPredicate;
import org.springframework.web.reactive.function.server.RequestPredicates;
import org.springframework.web.reactive.function.server.RouterFunction;
import org.springframework.web.reactive.function.server.RouterFunctions;
import org.springframework.web.reactive.function.server.ServerResponse;

/**
 * The server side of the node-to-node protocol: a route for each {@link PeerEndpoint} (the method and path of the
 * table) to the handler a feature registered for it ({@link PeerEndpointHandler}), every route behind the same three
 * guards: {@link ClusterIdFilter} (403 for another cluster's request, before any other filter),
 * {@link ClusterEpochFilter} (this node's view brought up to a newer sender's first) and {@link ClusterSecretFilter}
 * (403 without the cluster secret or a verified client certificate).
 */
public final class PeerRoutes {

    private PeerRoutes() {
    }

    /**
     * @param handlers      the features' handlers: together they serve every endpoint of the table, each once
     * @param cluster       this node's cluster id (its current view's), which every request must name if it names one
     * @param epochs        brings this node's view up to a sender's newer epoch before a request is served
     * @param clusterSecret {@code dht.cluster-secret}: requests without it get 403 ({@link ClusterSecretFilter})
     * @throws IllegalStateException if an endpoint is served by no handler or by two (the node does not start)
     */
    public static RouterFunction<ServerResponse> routes(List<? extends PeerEndpointHandler> handlers,
                                                        Supplier<Optional<UUID>> cluster,
                                                        ClusterEpochFilter epochs, String clusterSecret) {
        Map<PeerEndpoint, HandlerFunction<ServerResponse>> table = table(handlers);
        RouterFunctions.Builder routes = RouterFunctions.route();
        table.forEach((endpoint, handler) -> routes.route(on(endpoint), handler));
        return routes
                .filter(new ClusterIdFilter(cluster))
                .filter(epochs)
                .filter(new ClusterSecretFilter(clusterSecret))
                .build();
    }

    /** Each endpoint's one handler, in the order of the table. */
    private static Map<PeerEndpoint, HandlerFunction<ServerResponse>> table(List<? extends PeerEndpointHandler> handlers) {
        Map<PeerEndpoint, HandlerFunction<ServerResponse>> table = new EnumMap<>(PeerEndpoint.class);
        for (PeerEndpointHandler handler : handlers) {
            handler.handlers().forEach((endpoint, function) -> {
                if (table.putIfAbsent(endpoint, function) != null) {
                    throw new IllegalStateException(endpoint + " is served by two handlers, the second "
                            + handler.getClass().getName());
                }
            });
        }
        Set<PeerEndpoint> unserved = EnumSet.allOf(PeerEndpoint.class);
        unserved.removeAll(table.keySet());
        if (!unserved.isEmpty()) {
            throw new IllegalStateException("no handler serves " + unserved);
        }
        return table;
    }

    /** Requests to {@code endpoint}: its method and path, as the table gives them. */
    private static RequestPredicate on(PeerEndpoint endpoint) {
        return RequestPredicates.method(endpoint.method()).and(RequestPredicates.path(endpoint.path()));
    }
}
