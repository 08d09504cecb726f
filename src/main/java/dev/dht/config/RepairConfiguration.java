package dev.dht.config;

import dev.dht.cluster.ClusterTopology;
import dev.dht.cluster.Node;
import dev.dht.cluster.PeerHealth;
import dev.dht.cluster.ShardRouter;
import dev.dht.metrics.RepairMetrics;
import dev.dht.node.RebuildGate;
import dev.dht.peer.PeerClient;
import dev.dht.repair.AntiEntropyRepair;
import dev.dht.repair.NodeRebuild;
import dev.dht.repair.RepairClient;
import dev.dht.repair.RepairEndpoint;
import dev.dht.repair.RepairScan;
import dev.dht.repair.RepairScheduler;
import dev.dht.repair.RepairScope;
import dev.dht.replication.Replica;
import dev.dht.storage.LocalStore;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.LinkedHashMap;
import java.util.Map;
import org.springframework.context.SmartLifecycle;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Wires anti-entropy repair ({@code dht.repair.*}) and node rebuild ({@code dht.rebuild}): the scheduled
 * rounds and a rebuild start after the web server and stop before it ({@link RepairLifecycle}).
 */
@Configuration(proxyBeanMethods = false)
public class RepairConfiguration {

    /** Closed while {@code dht.rebuild=true} and the rebuild has not completed. */
    @Bean
    RebuildGate rebuildGate(DhtProperties properties) {
        return new RebuildGate(properties.rebuild());
    }

    @Bean
    RepairScan repairScan(DhtProperties properties, LocalStore store, ShardRouter router, ClusterTopology topology) {
        return new RepairScan(store, new RepairScope(router, topology.size()), topology.self(),
                properties.repair().scanRate());
    }

    @Bean
    AntiEntropyRepair antiEntropyRepair(DhtProperties properties, RepairScan scan, ShardRouter router,
                                        ClusterTopology topology, LocalStore store, DhtConfiguration.Replicas replicas,
                                        PeerClient peerClient, RebuildGate gate, MeterRegistry registry) {
        Map<Node, Replica> peers = new LinkedHashMap<>(replicas.byNode());
        peers.remove(topology.self());
        RepairMetrics metrics = new RepairMetrics(registry, peers.keySet().stream().toList(), gate::isRebuilding);
        return new AntiEntropyRepair(scan, new RepairClient(peerClient, topology.self()),
                new RepairScope(router, topology.size()), store, peers, properties.repair().maxRate(), metrics);
    }

    @Bean(destroyMethod = "stop")
    RepairScheduler repairScheduler(DhtProperties properties, AntiEntropyRepair repair, PeerHealth health) {
        return new RepairScheduler(repair, health, properties.repair().interval());
    }

    @Bean(destroyMethod = "stop")
    NodeRebuild nodeRebuild(AntiEntropyRepair repair, RebuildGate gate) {
        return new NodeRebuild(repair, gate);
    }

    @Bean
    RepairLifecycle repairLifecycle(RepairScheduler scheduler, NodeRebuild rebuild) {
        return new RepairLifecycle(scheduler, rebuild);
    }

    @Bean
    RepairEndpoint repairEndpoint(AntiEntropyRepair repair) {
        return new RepairEndpoint(repair);
    }

    /**
     * Starts a rebuild and the scheduled rounds after the web server has started (the last lifecycle phase) and
     * stops them first on shutdown, before the web server and the replica client's event loops stop: a round
     * still calling peers would keep those loops from ever becoming quiet, and their shutdown would wait for
     * its full timeout.
     */
    static final class RepairLifecycle implements SmartLifecycle {
        private final RepairScheduler scheduler;
        private final NodeRebuild rebuild;
        private volatile boolean running;

        RepairLifecycle(RepairScheduler scheduler, NodeRebuild rebuild) {
            this.scheduler = scheduler;
            this.rebuild = rebuild;
        }

        @Override
        public void start() {
            rebuild.start();
            scheduler.start();
            running = true;
        }

        @Override
        public void stop() {
            scheduler.stop();
            rebuild.stop();
            running = false;
        }

        @Override
        public boolean isRunning() {
            return running;
        }
    }
}
