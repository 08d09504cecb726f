package dev.dht.config;

import dev.dht.admission.BodyMemory;
import dev.dht.api.V0Routes;
import dev.dht.cluster.Membership;
import dev.dht.peer.server.ClusterEpochFilter;
import dev.dht.peer.server.PeerEndpointHandler;
import dev.dht.peer.server.PeerRoutes;
import dev.dht.replication.Coordinator;
import dev.dht.replication.RangeCoordinator;
import dev.dht.web.ErrorResponseHandler;
import java.util.List;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.boot.health.actuate.endpoint.HealthEndpoint;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.web.reactive.function.server.RouterFunction;
import org.springframework.web.reactive.function.server.ServerResponse;
import org.springframework.web.reactive.function.server.support.RouterFunctionMapping;

/** The HTTP surface: the public v0 API, the peers' internal endpoints, and the one mapping of failures to statuses. */
@Configuration(proxyBeanMethods = false)
public class WebConfiguration {
    /**
     * Order of the mapping of the routes below: before the actuator's endpoint mappings (order -100), so that a
     * v0 or internal request is matched by the first mapping asked.
     */
    static final int ROUTES_ORDER = -200;

    /**
     * Asks the routes' {@link RouterFunctionMapping} first ({@link #ROUTES_ORDER}; WebFlux's default is -1, after
     * the actuator's mappings at -100). In the default order every request goes through the actuator's
     * request-mapping lookup and its no-match handling before reaching the routes, a measurable share of a node's CPU
     * and of the bytes allocated per request (docs/performance.md has the figures). The routes match only
     * {@code /v0/} and {@code /internal/} paths, so the actuator's requests still reach its mappings, one lookup
     * later.
     */
    @Bean
    static BeanPostProcessor routesFirst() {
        return new BeanPostProcessor() {
            @Override
            public Object postProcessBeforeInitialization(Object bean, String beanName) {
                if (bean instanceof RouterFunctionMapping mapping) {
                    mapping.setOrder(ROUTES_ORDER);
                }
                return bean;
            }
        };
    }

    @Bean
    ErrorResponseHandler errorResponseHandler() {
        return new ErrorResponseHandler();
    }

    @Bean
    RouterFunction<ServerResponse> v0Routes(AdmissionProperties admission, Coordinator coordinator, Membership membership,
                                            RangeCoordinator rangeCoordinator, HealthEndpoint health,
                                            BodyMemory bodyMemory) {
        return V0Routes.routes(coordinator, membership, rangeCoordinator, health, bodyMemory,
                (int) admission.maxValueSize().toBytes());
    }

    /**
     * The peers' internal endpoints: each feature's {@link PeerEndpointHandler} bean (records and ranges in
     * {@link ReplicationConfiguration}, trees in {@link RepairConfiguration}, backup parts in
     * {@link BackupConfiguration}, views, streams and node figures in {@link MembershipConfiguration}), all behind the
     * guards of {@link PeerRoutes}.
     */
    @Bean
    RouterFunction<ServerResponse> internalRoutes(DhtProperties properties, List<PeerEndpointHandler> handlers,
                                                  Membership membership, ClusterEpochFilter epochs) {
        return PeerRoutes.routes(handlers, membership::cluster, epochs, properties.clusterSecret());
    }
}
