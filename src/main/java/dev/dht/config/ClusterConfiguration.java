package dev.dht.config;

import dev.dht.cluster.ClusterStart;
import dev.dht.cluster.ClusterStart.Decision;
import dev.dht.cluster.ClusterView;
import dev.dht.cluster.ClusterViewFile;
import dev.dht.cluster.Membership;
import dev.dht.cluster.SeedViews;
import dev.dht.cluster.StartKind;
import dev.dht.metrics.ClusterMetrics;
import dev.dht.node.RebuildGate;
import dev.dht.peer.InternalProtocol;
import io.micrometer.core.instrument.MeterRegistry;
import java.net.URI;
import java.time.Duration;
import java.util.Map;
import javax.net.ssl.SSLContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** The cluster view at start: read from the data dir, or found at the seeds, held and measured. */
@Configuration(proxyBeanMethods = false)
public class ClusterConfiguration {
    private static final Logger LOG = LoggerFactory.getLogger(ClusterConfiguration.class);
    /** The pause between two rounds of questions to the seeds while the cluster's id is not known yet. */
    static final Duration SEED_RETRY = Duration.ofSeconds(1);

    /**
     * How this node starts and the view it starts with, as {@link ClusterStart#decide} decides from
     * the stored view and, without one, the seeds' answers ({@link SeedViews}). A member that lost its data writes
     * the rebuild mark ({@link RebuildGate#markPending}) before it stores the running cluster's view. Blocks on the
     * file and the seeds (start-up); a joiner that finds no running cluster (whose id it takes) asks again every
     * {@link #SEED_RETRY} until it does, before its web server starts.
     *
     * @throws InvalidSettingException if the stored view does not hold this node: it left or was removed, and only
     *                                 an emptied data dir may join again
     */
    @Bean
    NodeStart nodeStart(DhtProperties properties, TlsConfiguration.TlsSettings tls) {
        return readStart(properties, tls.enabled() ? tls.bundle().createSslContext() : null);
    }

    @Bean
    Membership membership(NodeStart start, MeterRegistry registry) {
        ClusterMetrics.bind(start.membership(), registry);
        return start.membership();
    }

    /**
     * How this node started, and its membership.
     *
     * @param kind       what the data dir and the seeds said
     * @param membership the membership it starts with
     */
    public record NodeStart(StartKind kind, Membership membership) {
    }

    private static NodeStart readStart(DhtProperties properties, SSLContext seedTls) {
        ClusterViewFile file = new ClusterViewFile(properties.dataDir());
        URI self = properties.self();
        ClusterView stored = file.read().orElse(null);
        SeedViews seeds = new SeedViews(properties.clusterSecret(), InternalProtocol.VIEW_PATH,
                InternalProtocol.SECRET_HEADER, seedTls);
        Decision decision;
        boolean logged = false;
        while (true) {
            Map<URI, ClusterView> answers = stored != null ? Map.of() : seeds.answers(properties.nodes(), self);
            try {
                decision = ClusterStart.decide(stored, answers, properties.nodes(), self,
                        properties.replicationFactor());
            } catch (ClusterStart.Refused refused) {
                throw new InvalidSettingException("dht.data-dir", refused.getMessage() + " (data dir "
                        + properties.dataDir() + ")");
            }
            if (decision.waitsFor() == null) {
                break;
            }
            if (!logged) {
                logged = true;
                LOG.info("{}; it waits for {} before it starts, asking every {} s", decision.reason(),
                        decision.waitsFor(), SEED_RETRY.toSeconds());
            }
            try {
                Thread.sleep(SEED_RETRY.toMillis());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while waiting for " + decision.waitsFor(), e);
            }
        }
        decision.warnings().forEach(LOG::warn);
        if (decision.kind() == StartKind.LOST_DATA) {
            LOG.warn(decision.reason());
            RebuildGate.markPending(properties.dataDir()); // before the view: a crash from here on rebuilds again
            file.write(decision.view());
        } else {
            LOG.info(decision.reason());
        }
        return new NodeStart(decision.kind(), new Membership(self, decision.view(), file));
    }
}
