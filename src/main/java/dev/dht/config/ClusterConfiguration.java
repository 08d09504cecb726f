package dev.dht.config;

import dev.dht.cluster.ClusterEndpoint;
import dev.dht.cluster.ClusterView;
import dev.dht.cluster.ClusterViewFile;
import dev.dht.metrics.ClusterMetrics;
import io.micrometer.core.instrument.MeterRegistry;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/** The cluster view: read from the data dir, brought up to {@code dht.nodes}, stored, exposed and measured. */
@Configuration(proxyBeanMethods = false)
public class ClusterConfiguration {
    private static final Logger LOG = LoggerFactory.getLogger(ClusterConfiguration.class);

    /**
     * This node's view of the cluster. Membership is still set by {@code dht.nodes} at start: the stored view's
     * successor for the configured nodes and factor (the same epoch if nothing changed, the next one otherwise),
     * or epoch 1 on a new data dir. Stored before the node serves. Blocks on the file (start-up).
     */
    @Bean
    ClusterView clusterView(DhtProperties properties) {
        ClusterViewFile file = new ClusterViewFile(properties.dataDir());
        ClusterView stored = file.read().orElse(null);
        ClusterView view = stored == null
                ? ClusterView.initial(properties.nodes(), properties.replicationFactor())
                : stored.successor(properties.nodes(), properties.replicationFactor());
        if (view != stored) {
            file.write(view);
            LOG.info("cluster view epoch {}: {} members, replication factor {}", view.epoch(), view.members().size(),
                    view.replicationFactor());
        }
        return view;
    }

    @Bean
    ClusterEndpoint clusterEndpoint(ClusterView view, MeterRegistry registry) {
        ClusterMetrics.bind(view, registry);
        return new ClusterEndpoint(view);
    }
}
