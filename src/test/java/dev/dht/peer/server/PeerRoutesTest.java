package dev.dht.peer.server;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dht.peer.InternalProtocol;
import dev.dht.peer.PeerEndpoint;
import java.net.URI;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.springframework.test.web.reactive.server.WebTestClient;
import org.springframework.web.reactive.function.server.HandlerFunction;
import org.springframework.web.reactive.function.server.ServerResponse;
import reactor.core.publisher.Mono;

/**
 * Every endpoint of the protocol is routed to the handler its feature registered, and every one of them behind the
 * same guards: another cluster's request gets 403, a request without the cluster secret gets 403, a sender ahead of
 * this node's epoch is served only once this node caught up with it, and every answer carries this node's cluster id
 * and epoch. A node whose features serve an endpoint twice, or leave one unserved, does not start.
 */
class PeerRoutesTest {
    private static final String SECRET = "the-cluster-secret";
    private static final UUID CLUSTER = UUID.fromString("00000000-0000-0000-0000-00000000c1a5");
    private static final long EPOCH = 5;
    private static final String MEMBER = "http://member:8080";

    private final List<URI> caughtUpWith = new ArrayList<>();
    private final WebTestClient client = WebTestClient.bindToRouterFunction(PeerRoutes.routes(
                    List.of(serving(EnumSet.range(PeerEndpoint.READ, PeerEndpoint.REPAIR_RECORDS)),
                            serving(EnumSet.range(PeerEndpoint.VIEW, PeerEndpoint.STATS))),
                    () -> Optional.of(CLUSTER),
                    new ClusterEpochFilter(() -> EPOCH, (from, epoch) -> Mono.fromRunnable(() -> caughtUpWith.add(from)),
                            from -> from.equals(URI.create(MEMBER))),
                    SECRET))
            .build();

    /** A feature that serves {@code endpoints}, each answering 200 with its own name. */
    private static PeerEndpointHandler serving(Set<PeerEndpoint> endpoints) {
        return () -> {
            Map<PeerEndpoint, HandlerFunction<ServerResponse>> handlers = new EnumMap<>(PeerEndpoint.class);
            endpoints.forEach(endpoint -> handlers.put(endpoint, request -> ServerResponse.ok().bodyValue(endpoint.name())));
            return handlers;
        };
    }

    private WebTestClient.RequestBodySpec request(PeerEndpoint endpoint) {
        return client.method(endpoint.method()).uri(endpoint.path());
    }

    @ParameterizedTest
    @EnumSource(PeerEndpoint.class)
    void eachEndpointReachesItsHandlerWithTheSecretAndAnswersWithThisNodesClusterAndEpoch(PeerEndpoint endpoint) {
        request(endpoint).header(InternalProtocol.SECRET_HEADER, SECRET)
                .header(InternalProtocol.CLUSTER_ID_HEADER, CLUSTER.toString())
                .exchange()
                .expectStatus().isOk()
                .expectHeader().valueEquals(InternalProtocol.CLUSTER_ID_HEADER, CLUSTER.toString())
                .expectHeader().valueEquals(InternalProtocol.EPOCH_HEADER, Long.toString(EPOCH))
                .expectBody(String.class).isEqualTo(endpoint.name());
    }

    @ParameterizedTest
    @EnumSource(PeerEndpoint.class)
    void eachEndpointRefusesARequestWithoutTheSecretOrWithAWrongOne(PeerEndpoint endpoint) {
        request(endpoint).exchange().expectStatus().isForbidden();
        request(endpoint).header(InternalProtocol.SECRET_HEADER, SECRET + "x").exchange().expectStatus().isForbidden();
    }

    @ParameterizedTest
    @EnumSource(PeerEndpoint.class)
    void eachEndpointRefusesAnotherClustersRequest(PeerEndpoint endpoint) {
        request(endpoint).header(InternalProtocol.SECRET_HEADER, SECRET)
                .header(InternalProtocol.CLUSTER_ID_HEADER, UUID.randomUUID().toString())
                .exchange()
                .expectStatus().isForbidden()
                .expectBody(String.class).value(body -> assertThat(body).contains("is of cluster"));
    }

    @ParameterizedTest
    @EnumSource(value = PeerEndpoint.class, names = {"VIEW", "PROPOSE_VIEW"}, mode = EnumSource.Mode.EXCLUDE)
    void eachEndpointCatchesUpWithASenderAheadBeforeServingIt(PeerEndpoint endpoint) {
        request(endpoint).header(InternalProtocol.SECRET_HEADER, SECRET)
                .header(InternalProtocol.SENDER_HEADER, MEMBER)
                .header(InternalProtocol.EPOCH_HEADER, Long.toString(EPOCH + 1))
                .exchange()
                .expectStatus().isOk();
        assertThat(caughtUpWith).containsExactly(URI.create(MEMBER));
    }

    @Test
    void aNodeWhoseFeaturesLeaveAnEndpointUnservedDoesNotStart() {
        assertThatThrownBy(() -> PeerRoutes.routes(List.of(serving(EnumSet.complementOf(EnumSet.of(PeerEndpoint.STATS)))),
                Optional::empty, new ClusterEpochFilter(() -> 0, (from, epoch) -> Mono.empty(), from -> true), SECRET))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("STATS");
    }

    @Test
    void aNodeWhoseFeaturesServeAnEndpointTwiceDoesNotStart() {
        assertThatThrownBy(() -> PeerRoutes.routes(List.of(serving(EnumSet.allOf(PeerEndpoint.class)),
                        serving(EnumSet.of(PeerEndpoint.BACKUP))),
                Optional::empty, new ClusterEpochFilter(() -> 0, (from, epoch) -> Mono.empty(), from -> true), SECRET))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("BACKUP");
    }
}
