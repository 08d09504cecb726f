package dev.dht.config;

import dev.dht.admission.BodyMemory;
import dev.dht.api.V0Routes;
import dev.dht.cluster.Membership;
import dev.dht.node.RebuildGate;
import dev.dht.peer.server.ClusterEpochFilter;
import dev.dht.peer.server.InternalClusterHandler;
import dev.dht.peer.server.PeerRoutes;
import dev.dht.repair.RepairScan;
import dev.dht.replication.Coordinator;
import dev.dht.replication.RangeCoordinator;
import dev.dht.storage.LocalStore;
import dev.dht.web.ErrorResponseHandler;
import org.springframework.boot.health.actuate.endpoint.HealthEndpoint;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.web.reactive.function.server.RouterFunction;
import org.springframework.web.reactive.function.server.ServerResponse;

/** The HTTP surface: the public v0 API, the peers' internal endpoints, and the one mapping of failures to statuses. */
@Configuration(proxyBeanMethods = false)
public class WebConfiguration {

    @Bean
    ErrorResponseHandler errorResponseHandler() {
        return new ErrorResponseHandler();
    }

    @Bean
    RouterFunction<ServerResponse> v0Routes(DhtProperties properties, Coordinator coordinator, Membership membership,
                                            RangeCoordinator rangeCoordinator, HealthEndpoint health,
                                            BodyMemory bodyMemory) {
        return V0Routes.routes(coordinator, membership, rangeCoordinator, health, bodyMemory,
                (int) properties.maxValueSize().toBytes());
    }

    @Bean
    RouterFunction<ServerResponse> internalRoutes(DhtProperties properties, LocalStore store, RebuildGate rebuild,
                                                  RepairScan repairScan, Membership membership,
                                                  InternalClusterHandler cluster, ClusterEpochFilter epochs) {
        return PeerRoutes.routes(store, rebuild, repairScan, membership, cluster, epochs,
                (int) properties.maxValueSize().toBytes(), properties.clusterSecret());
    }
}
