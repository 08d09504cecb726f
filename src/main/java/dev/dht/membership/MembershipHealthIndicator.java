package dev.dht.membership;

import dev.dht.cluster.Membership;
import dev.dht.cluster.MemberState;
import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;

/**
 * Actuator health contributor {@code membership}, part of the readiness group: UP while this node is a
 * {@code NORMAL} member, OUT_OF_SERVICE while it joins or leaves, DOWN once it has left (or before it holds a view of
 * its own). So a Kubernetes pod is ready only as a normal member, and a PodDisruptionBudget holds other disruptions
 * during a join. Details: epoch and state. Never blocks.
 */
public final class MembershipHealthIndicator extends AbstractHealthIndicator {
    private final Membership membership;

    public MembershipHealthIndicator(Membership membership) {
        super("membership health check failed");
        this.membership = membership;
    }

    @Override
    protected void doHealthCheck(Health.Builder builder) {
        MemberState state = membership.view().state(membership.self()).orElse(null);
        if (state == MemberState.NORMAL) {
            builder.up();
        } else if (state == null) {
            builder.down();
        } else {
            builder.outOfService();
        }
        builder.withDetail("epoch", membership.epoch())
                .withDetail("state", state == null ? "NONE" : state.name());
    }
}
