package dev.dht.metrics;

import dev.dht.cluster.Membership;
import dev.dht.cluster.MemberState;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.Locale;

/**
 * Membership meters: Gauge {@code dht.cluster.epoch} (the view's epoch) and Gauge {@code dht.cluster.members}
 * (tag {@code state}: normal, joining, leaving), read from the current view on each scrape.
 */
public final class ClusterMetrics {

    private ClusterMetrics() {
    }

    /** Registers the gauges of {@code membership}'s current view. */
    public static void bind(Membership membership, MeterRegistry registry) {
        Gauge.builder("dht.cluster.epoch", membership, Membership::epoch)
                .description("epoch of this node's cluster view").strongReference(true).register(registry);
        for (MemberState state : MemberState.values()) {
            Gauge.builder("dht.cluster.members", membership, m -> m.view().count(state))
                    .description("members of the cluster view by state")
                    .tag("state", state.name().toLowerCase(Locale.ROOT))
                    .strongReference(true)
                    .register(registry);
        }
    }
}
