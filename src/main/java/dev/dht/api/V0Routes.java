package dev.dht.api;

import static org.springframework.web.reactive.function.server.RequestPredicates.path;

import dev.dht.admission.BodyMemory;
import dev.dht.cluster.Membership;
import dev.dht.http.RequestBodyReader;
import dev.dht.replication.Coordinator;
import dev.dht.replication.RangeCoordinator;
import org.springframework.boot.health.actuate.endpoint.HealthEndpoint;
import org.springframework.http.HttpMethod;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.web.reactive.function.server.RouterFunction;
import org.springframework.web.reactive.function.server.RouterFunctions;
import org.springframework.web.reactive.function.server.ServerResponse;

/** The public v0 API as functional routes: {@code /v0/entity}, {@code /v0/entities}, {@code /v0/status}. */
public final class V0Routes {

    private V0Routes() {
    }

    /**
     * @param bodyMemory        the node's client request-body bytes in flight ({@code dht.max-in-flight-bytes})
     * @param maxValueBytes     largest value a PUT may carry ({@code dht.max-value-size}), bytes; a larger one is 413
     */
    public static RouterFunction<ServerResponse> routes(Coordinator coordinator, Membership membership,
                                                        RangeCoordinator rangeCoordinator, HealthEndpoint health,
                                                        BodyMemory bodyMemory, int maxValueBytes) {
        EntityHandler entity = new EntityHandler(coordinator, membership, new RequestBodyReader(maxValueBytes),
                bodyMemory);
        RangeHandler range = new RangeHandler(rangeCoordinator, membership);
        StatusHandler status = new StatusHandler(health);
        return RouterFunctions.route()
                .GET("/v0/entity", entity::get)
                .PUT("/v0/entity", entity::put)
                .DELETE("/v0/entity", entity::delete)
                .route(path("/v0/entity"), entity::methodNotAllowed)
                .GET("/v0/entities", range::stream)
                .route(path("/v0/entities"), request -> ServerResponse.status(HttpStatus.METHOD_NOT_ALLOWED)
                        .allow(HttpMethod.GET).contentType(MediaType.TEXT_PLAIN)
                        .bodyValue("method " + request.method() + " not allowed on /v0/entities\n"))
                .GET("/v0/status", status::status)
                .build();
    }
}
