package dev.dht.config;

import dev.dht.cluster.ClusterView;
import dev.dht.cluster.ClusterViewFile;
import dev.dht.cluster.Member;
import dev.dht.cluster.MemberState;
import dev.dht.cluster.Membership;
import dev.dht.cluster.SeedViews;
import dev.dht.cluster.StartKind;
import dev.dht.metrics.ClusterMetrics;
import dev.dht.peer.InternalProtocol;
import io.micrometer.core.instrument.MeterRegistry;
import java.net.URI;
import java.util.List;
import javax.net.ssl.SSLContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** The cluster view at start: read from the data dir, or found at the seeds, held and measured. */
@Configuration(proxyBeanMethods = false)
public class ClusterConfiguration {
    private static final Logger LOG = LoggerFactory.getLogger(ClusterConfiguration.class);

    /**
     * How this node starts and the view it starts with (see {@link StartKind}). The stored view is the truth once
     * there is one; {@code dht.nodes} then only names seeds. Without a stored view the node first asks the seeds
     * ({@link SeedViews}): a running cluster that holds this node makes it a member that lost its data (it takes
     * the cluster's view and rebuilds); one that does not hold it, or a node not in {@code dht.nodes}, joins through
     * the seeds, holding their membership at epoch 0 until then; a listed node that finds no running cluster waits
     * for the view log to form the cluster of {@code dht.nodes} (never alone). Blocks on the file and the seeds
     * (start-up).
     *
     * @throws InvalidSettingException if the stored view does not hold this node: it left or was removed, and only
     *                                 an emptied data dir may join again
     */
    @Bean
    ClusterStart clusterStart(DhtProperties properties, TlsConfiguration.TlsSettings tls) {
        return readStart(properties, tls.enabled() ? tls.bundle().createSslContext() : null);
    }

    @Bean
    Membership membership(ClusterStart start, MeterRegistry registry) {
        ClusterMetrics.bind(start.membership(), registry);
        return start.membership();
    }

    /**
     * How this node started, and its membership.
     *
     * @param kind       what the data dir and the seeds said
     * @param membership the membership it starts with
     */
    public record ClusterStart(StartKind kind, Membership membership) {
    }

    private static ClusterStart readStart(DhtProperties properties, SSLContext seedTls) {
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
            return new ClusterStart(StartKind.STORED, new Membership(self, stored, file));
        }
        ClusterView running = new SeedViews(properties.clusterSecret(), InternalProtocol.VIEW_PATH,
                InternalProtocol.SECRET_HEADER, seedTls).first(properties.nodes(), self).orElse(null);
        if (running != null && running.isMember(self)) {
            LOG.warn("{} is a member of the running cluster (epoch {}) but its data dir holds no cluster view: it lost "
                    + "its data; it takes that view and streams its records back before it serves reads", self,
                    running.epoch());
            file.write(running);
            return new ClusterStart(StartKind.LOST_DATA, new Membership(self, running, file));
        }
        List<Member> seeds = properties.nodes().stream().map(node -> new Member(node, MemberState.NORMAL)).toList();
        ClusterView unformed = new ClusterView(0, properties.replicationFactor(), seeds);
        if (running == null && properties.nodes().contains(self)) {
            LOG.info("{} has no cluster view and no seed holds one: it waits for the view log to form the cluster of "
                    + "{}", self, properties.nodes());
            return new ClusterStart(StartKind.FORMING, new Membership(self, unformed, file));
        }
        LOG.info("{} has no cluster view and the cluster {}: it joins through the seeds {}", self,
                running == null ? "is not running yet" : "runs at epoch " + running.epoch(), properties.nodes());
        return new ClusterStart(StartKind.JOINING, new Membership(self, unformed, file));
    }
}
