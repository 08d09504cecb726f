package dev.dht.config;

import dev.dht.cluster.ClusterView;
import dev.dht.cluster.Membership;
import dev.dht.membership.ChangeProcedure;
import dev.dht.membership.ClusterEndpoint;
import dev.dht.membership.MembershipHealthIndicator;
import dev.dht.membership.OwnershipCleanup;
import dev.dht.membership.RecordStreaming;
import dev.dht.membership.ViewExchange;
import dev.dht.peer.PeerClient;
import dev.dht.peer.server.ClusterEpochFilter;
import dev.dht.peer.server.InternalClusterHandler;
import dev.dht.storage.LocalStore;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicReference;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.context.SmartLifecycle;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Wires live membership changes (docs/membership.md): view exchange between nodes, streaming, cleanup, the change
 * procedure and its actuator endpoint. A join or a resumed change starts, and an interrupted cleanup resumes, after
 * the web server has started ({@link MembershipLifecycle}).
 */
@Configuration(proxyBeanMethods = false)
public class MembershipConfiguration {
    /** Longest wait for requests coordinated under an older epoch before a node acknowledges a newer view. */
    static final Duration DRAIN_LIMIT = Duration.ofSeconds(30);

    /** The node's views travel through here; the peer client sends its epoch (so it is supplied late). */
    @Bean
    ViewExchange viewExchange(Membership membership, ObjectProvider<PeerClient> peerClient) {
        return new ViewExchange(membership, peerClient::getObject, DRAIN_LIMIT);
    }

    @Bean
    RecordStreaming recordStreaming(DhtProperties properties, Membership membership, LocalStore store,
                                    ObjectProvider<PeerClient> peerClient, MeterRegistry registry) {
        return new RecordStreaming(membership, store, peerClient::getObject, properties.dataDir(),
                properties.streamRate(), registry);
    }

    /**
     * Cleanup, paced at {@code dht.repair.scan-rate} records per second, scheduled whenever an adopted view ends a
     * change (completed or aborted) that may have left this node records it no longer replicates
     * ({@link OwnershipCleanup#mayHoldUnreplicated}), unless {@code dht.cleanup=false}.
     */
    @Bean
    OwnershipCleanup ownershipCleanup(DhtProperties properties, Membership membership, LocalStore store,
                                      MeterRegistry registry) {
        OwnershipCleanup cleanup = new OwnershipCleanup(membership, store, properties.dataDir(),
                properties.repair().scanRate(), registry);
        AtomicReference<ClusterView> last = new AtomicReference<>(membership.view());
        membership.onChange(placement -> {
            ClusterView before = last.getAndSet(placement.view());
            if (properties.cleanup() && before.change() != null && placement.view().change() == null
                    && placement.self() != null
                    && OwnershipCleanup.mayHoldUnreplicated(before.change(), placement.view(), membership.self())) {
                cleanup.schedule();
            }
        });
        return cleanup;
    }

    @Bean
    ChangeProcedure changeProcedure(DhtProperties properties, Membership membership, ViewExchange exchange,
                                    ObjectProvider<PeerClient> peerClient, RecordStreaming streaming,
                                    OwnershipCleanup cleanup) {
        return new ChangeProcedure(membership, exchange, peerClient::getObject, streaming, cleanup,
                properties.nodes());
    }

    @Bean
    ClusterEndpoint clusterEndpoint(Membership membership, ChangeProcedure procedure, RecordStreaming streaming,
                                    OwnershipCleanup cleanup) {
        return new ClusterEndpoint(membership, procedure, streaming, cleanup);
    }

    /** Actuator health contributor {@code membership} (also part of the readiness group). */
    @Bean
    MembershipHealthIndicator membershipHealthIndicator(Membership membership) {
        return new MembershipHealthIndicator(membership);
    }

    @Bean
    InternalClusterHandler internalClusterHandler(Membership membership, ViewExchange exchange,
                                                  RecordStreaming streaming, OwnershipCleanup cleanup) {
        return new InternalClusterHandler(membership, exchange, streaming, cleanup);
    }

    @Bean
    ClusterEpochFilter clusterEpochFilter(Membership membership, ViewExchange exchange) {
        return new ClusterEpochFilter(membership::epoch, exchange::catchUp, node -> membership.view().isMember(node));
    }

    @Bean
    MembershipLifecycle membershipLifecycle(ChangeProcedure procedure, OwnershipCleanup cleanup) {
        return new MembershipLifecycle(procedure, cleanup);
    }

    /**
     * Starts a join, a resumed change and a pending cleanup once the web server serves (peers call this node back
     * during a change); stops them first on shutdown.
     */
    static final class MembershipLifecycle implements SmartLifecycle {
        private final ChangeProcedure procedure;
        private final OwnershipCleanup cleanup;
        private volatile boolean running;

        MembershipLifecycle(ChangeProcedure procedure, OwnershipCleanup cleanup) {
            this.procedure = procedure;
            this.cleanup = cleanup;
        }

        @Override
        public void start() {
            cleanup.start();
            procedure.startUp();
            running = true;
        }

        @Override
        public void stop() {
            procedure.stop();
            cleanup.stop();
            running = false;
        }

        @Override
        public boolean isRunning() {
            return running;
        }
    }
}
