package dev.dht.config;

import dev.dht.cluster.Membership;
import dev.dht.cluster.Node;
import dev.dht.cluster.Placement;
import dev.dht.cluster.PeerHealth;
import dev.dht.membership.ViewExchange;
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
import dev.dht.replication.Replicas;
import dev.dht.replication.hints.HintStore;
import dev.dht.replication.hints.HintedHandoff;
import dev.dht.storage.FreeSpaceReserve;
import dev.dht.storage.KeyedRecord;
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
import java.util.List;
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

    /**
     * The timers of {@code dht.client.requests}; the {@link dev.dht.admission.AdmissionHandler} of every connection
     * times client requests into them (see {@link AdmissionConfiguration}).
     */
    @Bean
    ClientRequestMetrics clientRequestMetrics(MeterRegistry registry) {
        return new ClientRequestMetrics(registry);
    }

    /** Actuator health contributor {@code leveldb} (also part of the readiness group). */
    @Bean
    StorageHealthIndicator leveldbHealthIndicator(LocalStore store) {
        return new StorageHealthIndicator(store);
    }

    /** Peers' health; Gauge {@code dht.peer.up} of a peer is registered with its replica ({@link #replicas}). */
    @Bean
    PeerHealth peerHealth() {
        return new PeerHealth();
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

    /**
     * Every call to a peer (replication, repair, membership) goes through this client, with the cluster secret and
     * this node's epoch.
     */
    @Bean
    PeerClient peerClient(DhtProperties properties, WebClient replicaWebClient, ReplicaCallMetrics metrics,
                          ViewExchange viewExchange) {
        return new PeerClient(replicaWebClient, properties.clusterSecret(), metrics, properties.replicaTimeout(),
                properties.rangeIdleTimeout(), viewExchange);
    }

    /**
     * Hinted handoff, with its own LevelDB in {@code <dht.data-dir>/hints}, rid of the hints of peers no longer
     * members of the cluster view, at start and whenever a view is adopted; closed on shutdown (replay stops, hints
     * already offered are stored).
     */
    @Bean
    HintedHandoff hintedHandoff(DhtProperties properties, Membership membership, PeerHealth health,
                                FreeSpaceReserve reserve, MeterRegistry registry) {
        DhtProperties.Hints hints = properties.hints();
        HintStore store = HintStore.open(properties.dataDir().resolve("hints"), properties.storage().engine(),
                properties.storage().sync(), reserve);
        HintedHandoff handoff = new HintedHandoff(store, health, hints.enabled(), hints.window(),
                hints.maxSize().toBytes(), hints.replayRate(), (peer, hint) -> replicates(membership, peer, hint),
                registry);
        if (membership.isMember()) { // a node yet to join has no view of its own to judge by
            handoff.dropHintsOfRemovedPeers(membership.placement().members());
        }
        membership.onChange(placement -> { // on the adopting thread, never an event loop: the hint store blocks
            if (placement.self() != null) {
                handoff.dropHintsOfRemovedPeers(placement.members());
            }
        });
        return handoff;
    }

    /**
     * Whether {@code peer} is one of {@code hint}'s key's replicas under the current view: in its old or new set
     * while a change runs ({@code from} capped at the members), as the record's write placed it.
     */
    private static boolean replicates(Membership membership, Node peer, KeyedRecord hint) {
        Placement placement = membership.placement();
        int from = placement.placedFrom(hint.record().from());
        return Placement.contains(placement.oldReplicasAtMost(hint.key(), from), peer.url())
                || Placement.contains(placement.newReplicasAtMost(hint.key(), from), peer.url());
    }

    /**
     * The replica of each member of the cluster view, made at start and when a view adds a member: this node
     * in-process, a peer over the internal protocol with its failed writes kept as hints (replayed from then on,
     * {@link HintedHandoff#hinting}) and its Gauge {@code dht.peer.up}.
     */
    @Bean
    Replicas replicas(DhtProperties properties, Membership membership, LocalStore store, PeerClient peerClient,
                      PeerHealth health, ReplicaCallMetrics callMetrics, HintedHandoff hintedHandoff,
                      RebuildGate rebuildGate, MeterRegistry registry) {
        Replicas replicas = new Replicas(node -> {
            if (node.self()) {
                return new LocalReplica(store, rebuildGate);
            }
            health.bindGauges(List.of(node), registry);
            return hintedHandoff.hinting(node, new RemoteReplica(node, peerClient, health, callMetrics,
                    Math.min(properties.replicaWritesInFlight(), properties.replicaPoolSize()),
                    Math.min(properties.replicaReadsInFlight(), properties.replicaPoolSize()),
                    stallThreshold(properties)));
        });
        // every member's replica at once, as with every later view: its hints replay without waiting for a request
        replicas.of(membership.placement().members());
        membership.onChange(placement -> replicas.of(placement.members()));
        return replicas;
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
    Coordinator coordinator(DhtProperties properties, Membership membership, Replicas replicas, LocalStore store,
                            MeterRegistry registry) {
        return new Coordinator(membership, replicas, store.clock(), properties.replicaTimeout(),
                properties.speculativeRetryDelay(), registry);
    }

    /** Ranges read every member of the current view, joining and leaving ones too. */
    @Bean
    RangeCoordinator rangeCoordinator(Membership membership, Replicas replicas, LocalStore store) {
        return new RangeCoordinator(() -> replicas.of(membership.placement().members()), store.clock());
    }
}
