package dev.dht.config;

import dev.dht.cluster.Membership;
import dev.dht.cluster.Node;
import dev.dht.cluster.PeerHealth;
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
import dev.dht.replication.Replicas;
import dev.dht.storage.LocalStore;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.List;
import java.util.function.Supplier;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Wires anti-entropy repair ({@code dht.repair.*}) and node rebuild ({@code dht.rebuild}): the scheduled
 * rounds and a rebuild start after the web server and stop before it ({@link ServingLifecycle}).
 */
@Configuration(proxyBeanMethods = false)
public class RepairConfiguration {

    /** Closed while {@code dht.rebuild=true} and the rebuild has not completed. */
    @Bean
    RebuildGate rebuildGate(DhtProperties properties) {
        return new RebuildGate(properties.rebuild());
    }

    @Bean
    RepairScan repairScan(DhtProperties properties, LocalStore store, Membership membership) {
        return new RepairScan(store, new RepairScope(membership::placement), self(membership),
                properties.repair().scanRate());
    }

    /** Repair with the other members of the current view (none while this node has yet to join). */
    @Bean
    AntiEntropyRepair antiEntropyRepair(DhtProperties properties, RepairScan scan, Membership membership,
                                        LocalStore store, Replicas replicas, PeerClient peerClient, RebuildGate gate,
                                        MeterRegistry registry) {
        Supplier<List<Node>> peers = () -> membership.isMember()
                ? membership.placement().members().stream().filter(node -> !node.self()).toList()
                : List.of();
        RepairMetrics metrics = new RepairMetrics(registry, peers.get(), gate::isRebuilding);
        return new AntiEntropyRepair(scan, new RepairClient(peerClient, self(membership)),
                new RepairScope(membership::placement), store, peers, replicas::of, properties.repair().maxRate(),
                metrics);
    }

    private static Node self(Membership membership) {
        return new Node(membership.self(), true);
    }

    @Bean(destroyMethod = "stop")
    RepairScheduler repairScheduler(DhtProperties properties, AntiEntropyRepair repair, PeerHealth health,
                                    Membership membership) {
        return new RepairScheduler(repair, health, properties.repair().interval(),
                () -> membership.view().change() != null);
    }

    @Bean(destroyMethod = "stop")
    NodeRebuild nodeRebuild(AntiEntropyRepair repair, RebuildGate gate) {
        return new NodeRebuild(repair, gate);
    }

    /** A rebuild and the scheduled rounds run once the web server serves, and stop first on shutdown. */
    @Bean
    ServingLifecycle repairLifecycle(RepairScheduler scheduler, NodeRebuild rebuild) {
        return new ServingLifecycle(() -> {
            rebuild.start();
            scheduler.start();
        }, () -> {
            scheduler.stop();
            rebuild.stop();
        });
    }

    @Bean
    RepairEndpoint repairEndpoint(AntiEntropyRepair repair) {
        return new RepairEndpoint(repair);
    }
}
