package dev.dht.membership;

import dev.dht.cluster.ClusterView;
import dev.dht.cluster.Placement;
import dev.dht.cluster.ViewListener;
import java.net.URI;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Schedules the {@link OwnershipCleanup} when this node, a member of the view it adopted, takes the view that ends a
 * change (completed or aborted) that may have left it records it no longer replicates
 * ({@link OwnershipCleanup#mayHoldUnreplicated}); never with {@code dht.cleanup=false}. Scheduling blocks on the
 * cleanup's marker file, on the adopting thread ({@link ViewListener}).
 */
public final class CleanupAfterChange implements ViewListener {
    private final OwnershipCleanup cleanup;
    private final URI self;
    private final boolean enabled;
    private final AtomicReference<ClusterView> last;

    /**
     * @param cleanup the cleanup to schedule
     * @param initial the view this node holds when the listener is registered: the view before the first one adopted
     * @param self    this node's base URL
     * @param enabled {@code dht.cleanup}: false never schedules
     */
    public CleanupAfterChange(OwnershipCleanup cleanup, ClusterView initial, URI self, boolean enabled) {
        this.cleanup = cleanup;
        this.self = self;
        this.enabled = enabled;
        this.last = new AtomicReference<>(initial);
    }

    @Override
    public void adopted(Placement placement) {
        ClusterView before = last.getAndSet(placement.view());
        if (enabled && before.change() != null && placement.view().change() == null && placement.self() != null
                && OwnershipCleanup.mayHoldUnreplicated(before.change(), placement.view(), self)) {
            cleanup.schedule();
        }
    }
}
