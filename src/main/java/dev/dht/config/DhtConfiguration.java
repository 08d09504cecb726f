package dev.dht.config;

import dev.dht.cluster.ClusterTopology;
import dev.dht.cluster.Node;
import dev.dht.cluster.PeerHealth;
import dev.dht.cluster.ShardRouter;
import dev.dht.metrics.ClientRequestMetrics;
import dev.dht.metrics.ReplicaCallMetrics;
import dev.dht.metrics.StorageMetrics;
import dev.dht.node.HybridLogicalClock;
import dev.dht.node.NodeHeartbeat;
import dev.dht.node.RebuildGate;
import dev.dht.peer.PeerClient;
import dev.dht.replication.Coordinator;
import dev.dht.replication.LocalReplica;
import dev.dht.replication.RangeCoordinator;
import dev.dht.replication.RemoteReplica;
import dev.dht.replication.Replica;
import dev.dht.replication.hints.HintStore;
import dev.dht.replication.hints.HintedHandoff;
import dev.dht.storage.FreeSpaceReserve;
import dev.dht.storage.FreeSpaceReserveRepository;
import dev.dht.storage.LevelDbBackgroundThread;
import dev.dht.storage.LevelDbRecordRepository;
import dev.dht.storage.LocalStore;
import dev.dht.storage.RecordRepository;
import dev.dht.storage.RowCachedRecordRepository;
import dev.dht.storage.StorageEngine;
import dev.dht.storage.StorageHealthIndicator;
import dev.dht.storage.StorageScheduler;
import dev.dht.storage.TombstoneCollector;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.cache.CaffeineCacheMetrics;
import io.netty.channel.ChannelOption;
import java.time.Clock;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.context.event.ApplicationReadyEvent;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.ApplicationListener;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.client.ReactorResourceFactory;
import org.springframework.http.client.reactive.ReactorClientHttpConnector;
import org.springframework.web.reactive.function.client.ExchangeFilterFunction;
import org.springframework.web.reactive.function.client.WebClient;
import reactor.netty.http.client.HttpClient;
import reactor.netty.resources.ConnectionProvider;
import reactor.netty.resources.LoopResources;

/** Wires storage, cluster and replication beans from {@link DhtProperties}. */
@Configuration(proxyBeanMethods = false)
@EnableConfigurationProperties(DhtProperties.class)
public class DhtConfiguration {
    /** Longest time a peer's resolved address is reused before its name is looked up again. */
    private static final Duration PEER_ADDRESS_MAX_TTL = Duration.ofSeconds(1);

    /**
     * The heartbeat file of {@code dht.data-dir}: refuses to start a node down longer than the tombstone GC grace,
     * and persists the clock's high-water mark (see {@link NodeHeartbeat}). The node counts as up from when it is
     * ready to serve. The node's wall clock is the system UTC clock; a test may register a {@link Clock} bean
     * instead (InProcessCluster does, to skew one node's clock); it is no setting.
     */
    @Bean(destroyMethod = "close")
    NodeHeartbeat nodeHeartbeat(DhtProperties properties, ObjectProvider<Clock> wallClock) {
        try {
            return NodeHeartbeat.open(properties.dataDir(), properties.tombstone().gcGrace(), properties.rebuild(),
                    wallClock.getIfAvailable(Clock::systemUTC));
        } catch (NodeHeartbeat.DownTooLongException e) {
            throw new InvalidSettingException("dht.rebuild", e.getMessage());
        }
    }

    @Bean
    ApplicationListener<ApplicationReadyEvent> nodeHeartbeatStarter(NodeHeartbeat heartbeat) {
        return event -> heartbeat.start();
    }

    @Bean
    HybridLogicalClock hybridLogicalClock(NodeHeartbeat heartbeat) {
        return heartbeat.clock();
    }

    /** Purges tombstones and expired values older than {@code dht.tombstone.gc-grace} every {@code gc-interval}. */
    @Bean(destroyMethod = "close")
    TombstoneCollector tombstoneCollector(DhtProperties properties, LocalStore store, MeterRegistry registry) {
        DhtProperties.Tombstone settings = properties.tombstone();
        TombstoneCollector collector = new TombstoneCollector(store.repository(), store.clock(), settings.gcGrace(),
                settings.gcRate(), registry);
        if (!settings.gcInterval().isZero()) {
            collector.start(settings.gcInterval());
        }
        return collector;
    }

    /** This node's store; closed on shutdown after in-flight requests finished (storage queue first, then LevelDB). */
    @Bean
    LocalStore localStore(DhtProperties properties, HybridLogicalClock clock, FreeSpaceReserve reserve,
                          MeterRegistry registry) {
        DhtProperties.Storage settings = properties.storage();
        RecordRepository repository = new FreeSpaceReserveRepository(
                LevelDbRecordRepository.open(properties.dataDir(), settings.engine(), settings.sync(),
                        (int) settings.writeBufferSize().toBytes()), reserve);
        if (settings.engine() == StorageEngine.JNI && settings.compactionNice() > 0) {
            LevelDbBackgroundThread.lowerPriority(settings.compactionNice());
        }
        if (settings.rowCacheSize().toBytes() > 0) {
            RowCachedRecordRepository cached = new RowCachedRecordRepository(repository, settings.rowCacheSize().toBytes());
            CaffeineCacheMetrics.monitor(registry, cached.rows(), "dht.row.cache");
            repository = cached;
        }
        StorageScheduler scheduler = new StorageScheduler(settings.threads(), settings.queueCapacity(), "storage");
        StorageMetrics metrics = new StorageMetrics(registry);
        LocalStore store = new LocalStore(repository, scheduler, clock, metrics);
        metrics.bind(store.repository()::sizeOnDiskBytes, scheduler::queueDepth, scheduler::rejections, registry);
        return store;
    }

    /** {@code dht.storage.min-free-space} on the data dir: records and hints are written only while it is kept. */
    @Bean
    FreeSpaceReserve freeSpaceReserve(DhtProperties properties) {
        return FreeSpaceReserve.of(properties.dataDir(), properties.storage().minFreeSpace().toBytes());
    }

    @Bean
    ClientRequestMetrics clientRequestMetrics(MeterRegistry registry) {
        return new ClientRequestMetrics(registry);
    }

    /** Actuator health contributor {@code leveldb} (also part of the readiness group). */
    @Bean
    StorageHealthIndicator leveldbHealthIndicator(LocalStore store) {
        return new StorageHealthIndicator(store);
    }

    @Bean
    ClusterTopology clusterTopology(DhtProperties properties) {
        return new ClusterTopology(properties.self(), properties.nodes());
    }

    @Bean
    ShardRouter shardRouter(ClusterTopology topology) {
        return new ShardRouter(topology);
    }

    @Bean
    PeerHealth peerHealth(ClusterTopology topology, MeterRegistry registry) {
        PeerHealth health = new PeerHealth();
        health.bindGauges(topology.nodes().stream().filter(node -> !node.self()).toList(), registry);
        return health;
    }

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
    ReactorResourceFactory reactorResourceFactory(DhtProperties properties) {
        ReactorResourceFactory factory = new ReactorResourceFactory();
        factory.setUseGlobalResources(false);
        factory.setLoopResourcesSupplier(() -> LoopResources.create("webflux-http", 1, properties.effectiveIoThreads(), true));
        factory.setConnectionProviderSupplier(() -> ConnectionProvider.builder("replicas")
                .maxConnections(properties.replicaPoolSize())
                .pendingAcquireMaxCount(properties.replicaPoolSize())
                .pendingAcquireTimeout(properties.replicaTimeout())
                .maxIdleTime(Duration.ofSeconds(30))
                .build());
        return factory;
    }

    /**
     * The one shared client for replica calls; filters (e.g. fault injection in tests) are applied in order, and
     * {@link ReplicaClientCustomizer}s (TLS) to its Netty client.
     */
    @Bean
    WebClient replicaWebClient(DhtProperties properties, ReactorResourceFactory resources,
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
        int maxBody = (int) properties.maxValueSize().toBytes() + 1024;
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

    /** Every call to a peer (replication and repair) goes through this client, with the cluster secret. */
    @Bean
    PeerClient peerClient(DhtProperties properties, WebClient replicaWebClient, ReplicaCallMetrics metrics) {
        return new PeerClient(replicaWebClient, properties.clusterSecret(), metrics, properties.replicaTimeout(),
                properties.rangeIdleTimeout());
    }

    /**
     * Hinted handoff, with its own LevelDB in {@code <dht.data-dir>/hints}, rid of the hints of peers no longer in
     * {@code dht.nodes}; closed on shutdown (replay stops, hints already offered are stored).
     */
    @Bean
    HintedHandoff hintedHandoff(DhtProperties properties, ClusterTopology topology, PeerHealth health,
                                FreeSpaceReserve reserve, MeterRegistry registry) {
        DhtProperties.Hints hints = properties.hints();
        HintStore store = HintStore.open(properties.dataDir().resolve("hints"), properties.storage().engine(),
                properties.storage().sync(), reserve);
        HintedHandoff handoff = new HintedHandoff(store, health, hints.enabled(), hints.window(),
                hints.maxSize().toBytes(), hints.replayRate(), registry);
        handoff.dropHintsOfRemovedPeers(topology.nodes());
        return handoff;
    }

    /**
     * One replica per node, in topology order: this node in-process, peers over the internal protocol, their
     * failed writes kept as hints ({@link HintedHandoff#hinting}).
     */
    @Bean
    Replicas replicas(DhtProperties properties, ClusterTopology topology, LocalStore store, PeerClient peerClient,
                      PeerHealth health, ReplicaCallMetrics callMetrics, HintedHandoff hintedHandoff,
                      RebuildGate rebuildGate) {
        Map<Node, Replica> replicas = new LinkedHashMap<>();
        for (Node node : topology.nodes()) {
            replicas.put(node, node.self()
                    ? new LocalReplica(store, rebuildGate)
                    : hintedHandoff.hinting(node, new RemoteReplica(node, peerClient, health, callMetrics,
                            Math.min(properties.replicaWritesInFlight(), properties.replicaPoolSize()),
                            Math.min(properties.replicaReadsInFlight(), properties.replicaPoolSize()),
                            stallThreshold(properties))));
        }
        return new Replicas(replicas);
    }

    /**
     * How long a peer may answer none of the calls outstanding to it before reads ask it last: the speculative
     * retry delay, or (with speculation off) the replica timeout.
     */
    private static Duration stallThreshold(DhtProperties properties) {
        Duration delay = properties.speculativeRetryDelay();
        return delay.isZero() ? properties.replicaTimeout() : delay;
    }

    @Bean
    Coordinator coordinator(DhtProperties properties, ShardRouter router, Replicas replicas, LocalStore store,
                            MeterRegistry registry) {
        return new Coordinator(router, replicas.byNode(), store.clock(), properties.replicaTimeout(),
                properties.speculativeRetryDelay(), registry);
    }

    @Bean
    RangeCoordinator rangeCoordinator(Replicas replicas, LocalStore store) {
        return new RangeCoordinator(List.copyOf(replicas.byNode().values()), store.clock());
    }

    /** The replica of every node, in topology order. */
    record Replicas(Map<Node, Replica> byNode) {
    }
}
