package dev.dht.config;

import dev.dht.cluster.Membership;
import dev.dht.cluster.Node;
import dev.dht.cluster.PeerHealth;
import dev.dht.cluster.StartKind;
import dev.dht.config.ClusterConfiguration.NodeStart;
import dev.dht.membership.ClusterFounding;
import dev.dht.metrics.RepairMetrics;
import dev.dht.node.RebuildGate;
import dev.dht.peer.PeerClient;
import dev.dht.repair.AntiEntropyRepair;
import dev.dht.repair.FirstViewRebuild;
import dev.dht.repair.InternalRepairHandler;
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
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Wires anti-entropy repair ({@code dht.repair.*}) and node rebuild ({@code dht.rebuild}): the scheduled
 * rounds and a rebuild start after the web server and stop before it ({@link ServingLifecycle}).
 */
@Configuration(proxyBeanMethods = false)
public class RepairConfiguration {
    private static final Logger log = LoggerFactory.getLogger(RepairConfiguration.class);

    /**
     * Closed until the rebuild completed on a node started with {@code dht.rebuild=true} or that lost its data
     * ({@link StartKind#LOST_DATA}); on a founding member on an empty disk ({@link StartKind#FORMING}) closed until its
     * first view shows a brand-new cluster or it rebuilt ({@link #nodeRebuild}). Also closed, whatever
     * the stored view says, while the data dir holds the mark of a rebuild that a crash cut short: it runs again.
     */
    @Bean
    RebuildGate rebuildGate(DhtProperties properties, NodeStart start) {
        if (start.kind() == StartKind.STORED && RebuildGate.isPending(properties.dataDir())) {
            log.warn("{} holds the mark of a rebuild that did not complete ({} in {}): it rebuilds again from every "
                    + "peer before it serves reads", start.membership().self(), RebuildGate.MARK_FILE,
                    properties.dataDir());
        }
        return RebuildGate.of(properties.dataDir(), properties.rebuild() || start.kind() == StartKind.LOST_DATA
                || start.kind() == StartKind.FORMING);
    }

    @Bean
    RepairScan repairScan(DhtProperties properties, LocalStore store, Membership membership) {
        return new RepairScan(store, new RepairScope(membership::placement), self(membership),
                properties.repair().scanRate());
    }

    /** Repair with the other members of the current view (none while this node has yet to join). */
    /** The serving side of repair's internal endpoints: this node's trees and records for a peer. */
    @Bean
    InternalRepairHandler internalRepairHandler(RepairScan scan, Membership membership) {
        return new InternalRepairHandler(scan, membership);
    }

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

    /**
     * The rebuild; on a founding member on an empty disk it is decided by its first view: none for a brand-new cluster
     * (the view is of the id it agreed on with the other founding members, who all held no view: nothing to stream),
     * from every replica for a cluster that ran without this node's data (it took a running cluster's view): see
     * {@link FirstViewRebuild}. A rebuild completes without a replica only if {@code dht.rebuild.accept-missing}
     * names it.
     */
    @Bean(destroyMethod = "stop")
    NodeRebuild nodeRebuild(AntiEntropyRepair repair, RebuildGate gate, Membership membership, NodeStart start,
                            ClusterFounding founding, RebuildProperties rebuildProperties) {
        NodeRebuild rebuild = new NodeRebuild(repair, gate, rebuildProperties.acceptMissing());
        if (start.kind() == StartKind.FORMING) {
            membership.onChange(new FirstViewRebuild(founding::agreed, gate, rebuild));
        }
        return rebuild;
    }

    /** A rebuild and the scheduled rounds run once the web server serves, and stop first on shutdown. */
    @Bean
    ServingLifecycle repairLifecycle(RepairScheduler scheduler, NodeRebuild rebuild, NodeStart start) {
        boolean rebuildAtStart = start.kind() != StartKind.FORMING; // a founding member: its first view decides
        return new ServingLifecycle(() -> {
            if (rebuildAtStart) {
                rebuild.start();
            }
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
