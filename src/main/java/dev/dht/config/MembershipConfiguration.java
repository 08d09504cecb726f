package dev.dht.config;

import dev.dht.cluster.ClusterView;
import dev.dht.cluster.EpochFence;
import dev.dht.cluster.Membership;
import dev.dht.cluster.PeerHealth;
import dev.dht.cluster.SeedViews;
import dev.dht.cluster.StartKind;
import dev.dht.config.ClusterConfiguration.NodeStart;
import dev.dht.config.TlsConfiguration.TlsSettings;
import dev.dht.membership.ChangeProcedure;
import dev.dht.membership.CleanupAfterChange;
import dev.dht.membership.ClusterEndpoint;
import dev.dht.membership.ClusterFounding;
import dev.dht.membership.InternalClusterHandler;
import dev.dht.membership.InternalNodeHandler;
import dev.dht.membership.LocalNodeStats;
import dev.dht.membership.MemberStatus;
import dev.dht.membership.MembershipHealthIndicator;
import dev.dht.membership.OwnershipCleanup;
import dev.dht.membership.RecordStreaming;
import dev.dht.membership.TopologyCoordinator;
import dev.dht.membership.ViewCheck;
import dev.dht.membership.ViewExchange;
import dev.dht.membership.raft.RaftPeers;
import dev.dht.membership.raft.ViewLog;
import dev.dht.membership.raft.ViewLogRecovery;
import dev.dht.node.RebuildGate;
import dev.dht.peer.InternalProtocol;
import dev.dht.peer.PeerClient;
import dev.dht.peer.server.ClusterEpochFilter;
import dev.dht.replication.hints.HintedHandoff;
import dev.dht.storage.LocalStore;
import dev.dht.storage.RecordCount;
import dev.dht.storage.TombstoneCollector;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.function.Supplier;
import javax.net.ssl.KeyManager;
import javax.net.ssl.TrustManager;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.context.SmartLifecycle;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Wires membership (docs/membership.md): the view log (a Raft group of the members), the topology coordinator
 * that drives changes on its leader, the change requests and their actuator endpoint, view exchange between nodes,
 * the view check after a start or a pause, streaming and cleanup. The Raft server, the view check, the coordinator,
 * a join and an interrupted cleanup start after the web server has started ({@link MembershipLifecycle}).
 */
@Configuration(proxyBeanMethods = false)
public class MembershipConfiguration {
    /**
     * How long after a view was replaced the requests still coordinated under it may run before they are refused
     * (ranges cut, hint replays stopped); a node acknowledges the newer view once they all ended.
     */
    static final Duration DRAIN_LIMIT = Duration.ofSeconds(30);
    /** The longest a one-node cluster's start waits for its log to form it. */
    static final Duration FORM_ALONE_LIMIT = Duration.ofSeconds(30);
    /** {@code dht.raft.port}'s default distance from the server port. */
    static final int RAFT_PORT_OFFSET = 1000;

    /** The node's views travel through here; the peer client sends its epoch (so it is supplied late). */
    @Bean
    ViewExchange viewExchange(Membership membership, ObjectProvider<PeerClient> peerClient) {
        return new ViewExchange(membership, peerClient::getObject, DRAIN_LIMIT);
    }

    /** Who votes in the view log and where each member's Raft server listens. */
    @Bean
    RaftPeers raftPeers(DhtProperties properties, @Value("${server.port:8080}") int serverPort) {
        return new RaftPeers(raftPort(properties, serverPort) - serverPort, properties.raft().voters());
    }

    /** {@code dht.raft.port}, or the server port plus 1000; any free port if the server's is (0: tests). */
    private static int raftPort(DhtProperties properties, int serverPort) {
        Integer port = properties.raft().port();
        return port != null ? port : serverPort == 0 ? 0 : serverPort + RAFT_PORT_OFFSET;
    }

    /**
     * This node's Raft server of the view log; every view the log applies is adopted (by a member of it, or of the
     * view before: a node learns from the log that it was removed). With TLS, mutual TLS from the peers' bundle.
     */
    @Bean(destroyMethod = "close")
    ViewLog viewLog(DhtProperties properties, @Value("${server.port:8080}") int serverPort, Membership membership,
                    TlsSettings tls) {
        KeyManager keys = null;
        TrustManager trust = null;
        if (tls.enabled()) {
            keys = tls.bundle().getManagers().getKeyManagerFactory().getKeyManagers()[0];
            trust = tls.bundle().getManagers().getTrustManagerFactory().getTrustManagers()[0];
        }
        return new ViewLog(membership.self(), raftPort(properties, serverPort), properties.dataDir(), keys, trust,
                view -> {
                    if (membership.epoch() == 0) {
                        membership.adopt(view); // a founding member takes the cluster's first view from its log
                    } else {
                        membership.adoptIfConcerned(view);
                    }
                });
    }

    /** Clients are served only once the view was confirmed by a member or the log, after the start and after a pause. */
    @Bean
    ViewCheck viewCheck(Membership membership, ObjectProvider<PeerClient> peerClient, ViewLog viewLog) {
        return new ViewCheck(membership, peerClient::getObject, viewLog::readView);
    }

    @Bean
    RecordStreaming recordStreaming(DhtProperties properties, Membership membership, LocalStore store,
                                    ObjectProvider<PeerClient> peerClient, MeterRegistry registry, ViewLog viewLog) {
        return new RecordStreaming(membership, store, peerClient::getObject, properties.dataDir(),
                properties.streamRate(), registry, viewLog::lost);
    }

    /**
     * Cleanup, paced at {@code dht.repair.scan-rate} records per second, scheduled whenever an adopted view ends a
     * change (completed or aborted) that may have left this node records it no longer replicates
     * ({@link CleanupAfterChange}), unless {@code dht.cleanup=false}.
     */
    @Bean
    OwnershipCleanup ownershipCleanup(DhtProperties properties, Membership membership, LocalStore store,
                                      ObjectProvider<PeerClient> peerClient, MeterRegistry registry) {
        OwnershipCleanup cleanup = new OwnershipCleanup(membership, peerClient::getObject, store,
                properties.dataDir(), properties.repair().scanRate(), registry);
        membership.onChange(new CleanupAfterChange(cleanup, membership.view(), membership.self(),
                properties.cleanup()));
        return cleanup;
    }

    @Bean
    ChangeProcedure changeProcedure(DhtProperties properties, Membership membership, ViewLog viewLog,
                                    ObjectProvider<PeerClient> peerClient, OwnershipCleanup cleanup,
                                    NodeStart start) {
        return new ChangeProcedure(membership, viewLog, peerClient::getObject, cleanup, properties.nodes(),
                start.kind() == StartKind.JOINING);
    }

    /** How a founding member on an empty data dir learns its cluster's id before its view log starts. */
    @Bean
    ClusterFounding clusterFounding(DhtProperties properties, Membership membership,
                                    ObjectProvider<PeerClient> peerClient, ViewLog viewLog, RaftPeers raftPeers) {
        return new ClusterFounding(membership, peerClient::getObject, viewLog, raftPeers, properties.nodes());
    }

    /** The driver of changes while this node leads the view log; a founding member may form the cluster. */
    @Bean
    TopologyCoordinator topologyCoordinator(DhtProperties properties, Membership membership, ViewLog viewLog,
                                            RaftPeers raftPeers, ViewExchange exchange,
                                            ObjectProvider<PeerClient> peerClient, RecordStreaming streaming,
                                            OwnershipCleanup cleanup, PeerHealth health) {
        Supplier<ClusterView> founding = properties.nodes().contains(membership.self())
                ? () -> ClusterView.initial(properties.nodes(), properties.replicationFactor(),
                        membership.view().cluster())
                : null;
        return new TopologyCoordinator(membership, viewLog, raftPeers, exchange, peerClient::getObject, streaming,
                cleanup, founding, properties.changeFailureTimeout(), health);
    }

    @Bean
    ClusterEndpoint clusterEndpoint(Membership membership, ChangeProcedure procedure, RecordStreaming streaming,
                                    OwnershipCleanup cleanup, ViewLog viewLog, PeerHealth health,
                                    ObjectProvider<PeerClient> peerClient, LocalNodeStats stats) {
        MemberStatus status = new MemberStatus(membership.self(), viewLog, health, peerClient::getObject,
                stats::current);
        return new ClusterEndpoint(membership, procedure, streaming, cleanup, viewLog, status);
    }

    /**
     * This node's figures for {@code dht status}: its records counted at most every 10 s (a status waits up to
     * 500 ms for a fresh count, well within the asking node's probe timeout), bytes on disk, hints held.
     */
    @Bean
    LocalNodeStats localNodeStats(Membership membership, LocalStore store, HintedHandoff hints) {
        RecordCount records = new RecordCount(store.repository(), Duration.ofSeconds(10), Duration.ofMillis(500));
        return new LocalNodeStats(membership, records, store.repository()::sizeOnDiskBytes, hints::pending);
    }

    /** Actuator health contributor {@code membership} (also part of the readiness group). */
    @Bean
    MembershipHealthIndicator membershipHealthIndicator(Membership membership, RebuildGate rebuild, ViewLog viewLog) {
        return new MembershipHealthIndicator(membership, rebuild::isRebuilding, viewLog::problem);
    }

    /** The serving side of {@code GET /internal/node/stats}: this node's figures for the operator's status. */
    @Bean
    InternalNodeHandler internalNodeHandler(LocalNodeStats stats) {
        return new InternalNodeHandler(stats);
    }

    @Bean
    InternalClusterHandler internalClusterHandler(Membership membership, ViewExchange exchange,
                                                  RecordStreaming streaming, OwnershipCleanup cleanup,
                                                  ChangeProcedure procedure) {
        return new InternalClusterHandler(membership, exchange, streaming, cleanup, procedure);
    }

    /** The replica's epoch fence: follows every view this node takes. */
    @Bean
    EpochFence epochFence(Membership membership) {
        EpochFence fence = new EpochFence(membership.placement());
        membership.onChange(fence);
        return fence;
    }

    @Bean
    ClusterEpochFilter clusterEpochFilter(Membership membership, ViewExchange exchange) {
        return new ClusterEpochFilter(membership::epoch, exchange::catchUp, node -> membership.view().isMember(node));
    }

    /**
     * The lifecycle of membership; also suspends tombstone GC while a membership change runs (repair is suspended
     * meanwhile, see {@link TombstoneCollector#suspendWhile}).
     */
    @Bean
    MembershipLifecycle membershipLifecycle(ChangeProcedure procedure, OwnershipCleanup cleanup, ViewLog viewLog,
                                            TopologyCoordinator coordinator, RaftPeers raftPeers,
                                            NodeStart start, TombstoneCollector tombstones, ViewCheck viewCheck,
                                            ClusterFounding founding, DhtProperties properties, TlsSettings tls) {
        Membership membership = start.membership();
        tombstones.suspendWhile(() -> membership.view().change() != null);
        boolean forming = start.kind() == StartKind.FORMING;
        ViewLogRecovery recovery = recovery(properties, tls, membership, raftPeers);
        Runnable startLog = forming ? founding::start
                : () -> viewLog.startAwaiting(raftPeers, membership.view(), recovery);
        boolean alone = forming && membership.view().nodes().size() == 1;
        return new MembershipLifecycle(procedure, cleanup, viewLog, startLog, founding, coordinator, viewCheck, alone,
                start.kind() == StartKind.STORED);
    }

    /**
     * The recovery of the view log from a lost majority if {@code dht.raft.recover=true}, else null; it asks the
     * members for their views as a node on an empty disk asks the seeds ({@link SeedViews}, blocking: start-up).
     */
    private static ViewLogRecovery recovery(DhtProperties properties, TlsSettings tls, Membership membership,
                                            RaftPeers raftPeers) {
        if (!properties.raft().recover()) {
            return null;
        }
        SeedViews members = new SeedViews(properties.clusterSecret(), InternalProtocol.VIEW_PATH,
                InternalProtocol.SECRET_HEADER, tls.enabled() ? tls.bundle().createSslContext() : null);
        return new ViewLogRecovery(membership.self(), properties.dataDir(), raftPeers, membership::view,
                nodes -> members.answers(nodes, membership.self()));
    }

    /**
     * Starts the Raft server, the coordinator, a join and a pending cleanup once the web server serves (peers call
     * this node back during a change); stops them first on shutdown.
     */
    static final class MembershipLifecycle implements SmartLifecycle {
        private final ChangeProcedure procedure;
        private final OwnershipCleanup cleanup;
        private final ViewLog viewLog;
        private final Runnable startLog;
        private final ClusterFounding founding;
        private final TopologyCoordinator coordinator;
        private final ViewCheck viewCheck;
        private final boolean formsAlone;
        private final boolean storedView;
        private volatile boolean running;

        /**
         * @param startLog   starts the view log: at once in the stored or running cluster's group (recovering it
         *                   from a lost majority first if {@code dht.raft.recover=true}), or once a founding member
         *                   learnt its cluster's id ({@link ClusterFounding})
         * @param formsAlone a new cluster of this node only: the start waits until the log formed it
         * @param storedView the node started from its stored view, which it confirms before it serves
         */
        MembershipLifecycle(ChangeProcedure procedure, OwnershipCleanup cleanup, ViewLog viewLog, Runnable startLog,
                            ClusterFounding founding, TopologyCoordinator coordinator, ViewCheck viewCheck,
                            boolean formsAlone, boolean storedView) {
            this.viewCheck = viewCheck;
            this.formsAlone = formsAlone;
            this.storedView = storedView;
            this.procedure = procedure;
            this.cleanup = cleanup;
            this.viewLog = viewLog;
            this.startLog = startLog;
            this.founding = founding;
            this.coordinator = coordinator;
        }

        @Override
        public void start() {
            startLog.run();
            viewCheck.start(storedView);
            coordinator.start();
            if (formsAlone) {
                coordinator.awaitFormed(FORM_ALONE_LIMIT);
            }
            cleanup.resume();
            procedure.startUp();
            running = true;
        }

        @Override
        public void stop() {
            procedure.stop();
            founding.stop();
            viewCheck.stop();
            coordinator.stop();
            cleanup.stop();
            viewLog.close();
            running = false;
        }

        @Override
        public boolean isRunning() {
            return running;
        }
    }
}
