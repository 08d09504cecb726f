package dev.dht.membership;

import dev.dht.cluster.ClusterChange;
import dev.dht.cluster.Node;
import dev.dht.cluster.PeerHealth;
import java.time.Duration;
import java.util.function.LongSupplier;

/**
 * Whether a member is down too long for the membership: silent (as {@link PeerHealth}, the node's one failure
 * detector, sees it) for {@code dht.change-failure-timeout}, and, while a change runs, the change has run that long
 * on this node too (its timeout counts from its start at the earliest, so a member is never judged on a silence from
 * before the change). Every node observes every change as its view log applies it, whichever node leads, and no
 * leader change resets either time: a new leader judges a member as the old one would have, so a rollback comes
 * within the timeout plus one election however often the leader changes.
 *
 * <p>Thread-safe: {@link #observe} on the coordinator's tick, the rest from its steps.
 */
final class ChangeLiveness {
    private final PeerHealth health;
    private final Duration failureTimeout;
    private final LongSupplier nanoTime;
    /** The change this node saw last (null: none), and when it first saw it. */
    private volatile ClusterChange observed;
    private volatile long observedSinceNanos;

    /**
     * @param failureTimeout {@code dht.change-failure-timeout}
     * @param nanoTime       the same monotonic time in ns as {@code health}'s
     */
    ChangeLiveness(PeerHealth health, Duration failureTimeout, LongSupplier nanoTime) {
        this.health = health;
        this.failureTimeout = failureTimeout;
        this.nanoTime = nanoTime;
    }

    /**
     * Notes the change of the log's view (null: none); a change of another kind or node than the last one starts its
     * time. Its phases do not: the timeout counts from the change's start, not from its latest phase.
     */
    synchronized void observe(ClusterChange change) {
        ClusterChange last = observed;
        if (change != null && (last == null || last.kind() != change.kind() || !last.node().equals(change.node()))) {
            observedSinceNanos = nanoTime.getAsLong();
        }
        observed = change;
    }

    /** True if {@code node} has been silent for the failure timeout, and so has the change in progress run. */
    boolean downTooLong(Node node) {
        if (health.silentFor(node).compareTo(failureTimeout) < 0) {
            return false;
        }
        return observed == null || nanoTime.getAsLong() - observedSinceNanos >= failureTimeout.toNanos();
    }
}
