package dev.dht.metrics;

import dev.dht.cluster.ClusterView;
import dev.dht.cluster.MemberState;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.Locale;

/**
 * Membership meters: Gauge {@code dht.cluster.epoch} (the view's epoch) and Gauge {@code dht.cluster.members}
 * (tag {@code state}: normal, joining, leaving), read from the view on each scrape.
 */
public final class ClusterMetrics {

    private ClusterMetrics() {
    }

    /** Registers the gauges of {@code view}. */
    public static void bind(ClusterView view, MeterRegistry registry) {
        Gauge.builder("dht.cluster.epoch", view, ClusterView::epoch)
                .description("epoch of this node's cluster view").strongReference(true).register(registry);
        for (MemberState state : MemberState.values()) {
            Gauge.builder("dht.cluster.members", view, v -> v.count(state))
                    .description("members of the cluster view by state")
                    .tag("state", state.name().toLowerCase(Locale.ROOT))
                    .strongReference(true)
                    .register(registry);
        }
    }
}
