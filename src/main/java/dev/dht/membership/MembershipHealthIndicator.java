package dev.dht.membership;

import dev.dht.cluster.Membership;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import dev.dht.cluster.MemberState;
import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;

/**
 * Actuator health contributor {@code membership}, part of the readiness group: UP while this node is a
 * {@code NORMAL} member, OUT_OF_SERVICE while it joins or leaves or rebuilds a lost store, checks its view, or while its part of the view
 * log does not run, DOWN once it has left (or
 * before it holds a view of its own). So a Kubernetes pod is ready only as a normal member, and a PodDisruptionBudget holds other disruptions
 * during a join. Details: epoch and state. Never blocks.
 */
public final class MembershipHealthIndicator extends AbstractHealthIndicator {
    private final Membership membership;
    private final BooleanSupplier rebuilding;
    private final Supplier<String> viewLogProblem;

    /**
     * @param rebuilding     true while this node streams back the records of a lost store (it is then not ready)
     * @param viewLogProblem why this node's part of the view log does not run, or null while it runs (it is then
     *                       not ready: it would miss every change)
     */
    public MembershipHealthIndicator(Membership membership, BooleanSupplier rebuilding,
                                     Supplier<String> viewLogProblem) {
        super("membership health check failed");
        this.membership = membership;
        this.rebuilding = rebuilding;
        this.viewLogProblem = viewLogProblem;
    }

    @Override
    protected void doHealthCheck(Health.Builder builder) {
        MemberState state = membership.isMember() ? membership.view().state(membership.self()).orElse(null) : null;
        String problem = viewLogProblem.get();
        if (problem != null) {
            builder.outOfService().withDetail("viewLog", problem);
        } else if (state == MemberState.NORMAL && rebuilding.getAsBoolean()) {
            builder.outOfService().withDetail("rebuilding", true);
        } else if (state == MemberState.NORMAL && !membership.isViewConfirmed()) {
            builder.outOfService().withDetail("checkingView", true);
        } else if (state == MemberState.NORMAL) {
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
