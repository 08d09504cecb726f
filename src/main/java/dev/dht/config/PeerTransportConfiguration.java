package dev.dht.config;

import dev.dht.membership.ViewExchange;
import dev.dht.metrics.ReplicaCallMetrics;
import dev.dht.peer.PeerClient;
import io.micrometer.core.instrument.MeterRegistry;
import io.netty.channel.ChannelOption;
import java.time.Duration;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.client.ReactorResourceFactory;
import org.springframework.http.client.reactive.ReactorClientHttpConnector;
import org.springframework.web.reactive.function.client.ExchangeFilterFunction;
import org.springframework.web.reactive.function.client.WebClient;
import reactor.netty.http.client.HttpClient;
import reactor.netty.resources.ConnectionProvider;
import reactor.netty.resources.LoopResources;

/**
 * The node's Netty resources (server and replica client alike), the one replica {@link WebClient} and the
 * {@link PeerClient} every call to a peer goes through, from {@link ReplicaClientProperties} and
 * {@link DhtProperties}.
 */
@Configuration(proxyBeanMethods = false)
public class PeerTransportConfiguration {
    /** Longest time a peer's resolved address is reused before its name is looked up again. */
    private static final Duration PEER_ADDRESS_MAX_TTL = Duration.ofSeconds(1);

    /**
     * Netty resources of this node only (not Reactor Netty's global ones), so several nodes can run in one JVM
     * and stopping one does not stop the others.
     *
     * <p>{@code dht.io-threads} event loops (default one per processor, not Reactor Netty's at least 4) serve the
     * web server and the replica client alike; fewer loops than cores plus storage threads mean fewer thread
     * hand-offs per request.
     *
     * <p>One more thread ({@code webflux-http-select-*}) only accepts new connections, as Netty's boss group does,
     * and hands each to an event loop. On an event loop, accepting would wait behind the loop's request work: a
     * client that opens many connections at once (Gatling's open model under overload opens thousands) would
     * fill the kernel's accept queue (at most {@code net.core.somaxconn}, 4096 by default), and the kernel then
     * drops connection attempts, which clients retry only after 1 s, 3 s, ... The thread sleeps while no
     * connection arrives.
     *
     * <p>The connection pool is the replica pool: keep-alive, at most
     * {@code dht.replica-pool-size} connections per peer, and at most as many calls again waiting for one, each
     * at most the replica timeout. A call beyond that is refused at once as overload (503 to the client, see
     * {@link PeerClient}): a long line of waiting calls would only turn overload into
     * timeouts (504) a second later.
     */
    @Bean
    ReactorResourceFactory reactorResourceFactory(DhtProperties properties, ReplicaClientProperties replicaClient) {
        ReactorResourceFactory factory = new ReactorResourceFactory();
        factory.setUseGlobalResources(false);
        factory.setLoopResourcesSupplier(() -> LoopResources.create("webflux-http", 1, properties.effectiveIoThreads(), true));
        factory.setConnectionProviderSupplier(() -> ConnectionProvider.builder("replicas")
                .maxConnections(replicaClient.replicaPoolSize())
                .pendingAcquireMaxCount(replicaClient.replicaPoolSize())
                .pendingAcquireTimeout(replicaClient.replicaTimeout())
                .maxIdleTime(Duration.ofSeconds(30))
                .build());
        return factory;
    }

    /**
     * The one shared client for replica calls; filters (e.g. fault injection in tests) are applied in order, and
     * {@link ReplicaClientCustomizer}s (TLS) to its Netty client.
     */
    @Bean
    WebClient replicaWebClient(ReplicaClientProperties properties, AdmissionProperties admission,
                               ReactorResourceFactory resources,
                               ObjectProvider<ExchangeFilterFunction> filters,
                               ObjectProvider<ReplicaClientCustomizer> customizers) {
        Duration timeout = properties.replicaTimeout();
        ReactorClientHttpConnector connector = new ReactorClientHttpConnector(resources, client -> customized(client
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) timeout.toMillis())
                .responseTimeout(timeout)
                .keepAlive(true)
                // A restarted peer (a pod, a container) keeps its name but gets a new address. Netty's resolver would
                // cache the old one for the DNS record's TTL (a day with podman's aardvark-dns), so cap it at 1 s.
                .resolver(dns -> dns.cacheMaxTimeToLive(PEER_ADDRESS_MAX_TTL)), customizers));
        int maxBody = (int) admission.maxValueSize().toBytes() + 1024;
        WebClient.Builder builder = WebClient.builder()
                .clientConnector(connector)
                .codecs(codecs -> codecs.defaultCodecs().maxInMemorySize(maxBody));
        filters.orderedStream().forEach(builder::filter);
        return builder.build();
    }

    private static HttpClient customized(HttpClient client, ObjectProvider<ReplicaClientCustomizer> customizers) {
        HttpClient customized = client;
        for (ReplicaClientCustomizer customizer : customizers.orderedStream().toList()) {
            customized = customizer.customize(customized);
        }
        return customized;
    }

    @Bean
    ReplicaCallMetrics replicaCallMetrics(MeterRegistry registry) {
        return new ReplicaCallMetrics(registry);
    }

    /**
     * Every call to a peer (replication, repair, membership) goes through this client, with the cluster secret and
     * this node's epoch.
     */
    @Bean
    PeerClient peerClient(DhtProperties properties, ReplicaClientProperties replicaClient, WebClient replicaWebClient,
                          ReplicaCallMetrics metrics, ViewExchange viewExchange) {
        return new PeerClient(replicaWebClient, properties.clusterSecret(), metrics, replicaClient.replicaTimeout(),
                replicaClient.rangeIdleTimeout(), viewExchange);
    }
}
