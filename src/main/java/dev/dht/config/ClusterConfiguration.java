package dev.dht.config;

import dev.dht.cluster.ClusterView;
import dev.dht.cluster.ClusterViewFile;
import dev.dht.cluster.Member;
import dev.dht.cluster.MemberState;
import dev.dht.cluster.Membership;
import dev.dht.cluster.SeedViews;
import dev.dht.metrics.ClusterMetrics;
import dev.dht.peer.InternalProtocol;
import io.micrometer.core.instrument.MeterRegistry;
import java.net.URI;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** The cluster view: read from the data dir (or made from {@code dht.nodes} for a new cluster), held and measured. */
@Configuration(proxyBeanMethods = false)
public class ClusterConfiguration {
    private static final Logger LOG = LoggerFactory.getLogger(ClusterConfiguration.class);

    /**
     * This node's membership. The stored view is the truth once there is one; {@code dht.nodes} then only names
     * seeds. Without a stored view the node first asks the seeds ({@link SeedViews}): a cluster that runs and holds
     * this node gives it its view (a member whose data dir was emptied); a cluster that runs without it, or a node
     * not in {@code dht.nodes}, joins through the seeds ({@code dev.dht.membership.ChangeProcedure}), holding the
     * seeds' membership at epoch 0 until then; a listed node that finds no running cluster starts a new one of
     * {@code dht.nodes} (epoch 1, stored before the node serves; also a data dir from before views were stored).
     * Blocks on the file and the seeds (start-up).
     *
     * @throws InvalidSettingException if the stored view does not hold this node: it left or was removed, and only
     *                                 an emptied data dir may join again
     */
    @Bean
    Membership membership(DhtProperties properties, MeterRegistry registry) {
        Membership membership = readMembership(properties);
        ClusterMetrics.bind(membership, registry);
        return membership;
    }

    private static Membership readMembership(DhtProperties properties) {
        ClusterViewFile file = new ClusterViewFile(properties.dataDir());
        URI self = properties.self();
        ClusterView stored = file.read().orElse(null);
        if (stored != null) {
            if (!stored.isMember(self)) {
                throw new InvalidSettingException("dht.data-dir", self + " has left the cluster (it is no member of "
                        + "the view stored in " + properties.dataDir() + ", epoch " + stored.epoch()
                        + "); empty the data dir to join anew");
            }
            if (!stored.nodes().containsAll(properties.nodes()) && properties.nodes().contains(self)) {
                LOG.info("dht.nodes {} differs from the stored cluster view (epoch {}); the view decides membership, "
                        + "dht.nodes only names seeds", properties.nodes(), stored.epoch());
            }
            if (stored.replicationFactor() != properties.replicationFactor()) {
                LOG.warn("dht.replication-factor {} differs from the stored cluster view's {}; the view's applies",
                        properties.replicationFactor(), stored.replicationFactor());
            }
            return new Membership(self, stored, file);
        }
        ClusterView running = new SeedViews(properties.clusterSecret(), InternalProtocol.VIEW_PATH,
                InternalProtocol.SECRET_HEADER).first(properties.nodes(), self).orElse(null);
        if (running != null && running.isMember(self) && running.epoch() == 1) {
            LOG.info("{} takes the first view of the new cluster from a seed", self);
            file.write(running);
            return new Membership(self, running, file);
        }
        if (running != null && running.isMember(self)) {
            LOG.warn("{} is a member of the running cluster (epoch {}) but its data dir held no cluster view: it takes "
                    + "that view; if its store was lost too, start it with dht.rebuild=true", self, running.epoch());
            file.write(running);
            return new Membership(self, running, file);
        }
        if (running == null && properties.nodes().contains(self)) {
            ClusterView first = ClusterView.initial(properties.nodes(), properties.replicationFactor());
            file.write(first);
            LOG.info("cluster view epoch 1: a new cluster of {} members, replication factor {}", first.members().size(),
                    first.replicationFactor());
            return new Membership(self, first, file);
        }
        List<Member> seeds = properties.nodes().stream().map(node -> new Member(node, MemberState.NORMAL)).toList();
        LOG.info("{} has no cluster view and the cluster {}: it joins through the seeds {}", self,
                running == null ? "is not running yet" : "runs at epoch " + running.epoch(), properties.nodes());
        return new Membership(self, new ClusterView(0, properties.replicationFactor(), seeds), file);
    }

}
