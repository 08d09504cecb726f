package dev.dht.repair;

import dev.dht.cluster.Placement;
import dev.dht.cluster.ViewListener;
import dev.dht.node.RebuildGate;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Decides the rebuild of a founding member that started on an empty disk by the first view it adopts as a member: a
 * view of the cluster id it agreed on with the other founding members is a brand-new cluster (they all held no
 * view: nothing to stream, the gate opens), any other is a cluster that ran without this node's data (the rebuild
 * starts). Decides once; later views do nothing. Opening the gate blocks on its mark file, on the adopting thread
 * ({@link ViewListener}); the rebuild runs elsewhere.
 */
public final class FirstViewRebuild implements ViewListener {
    private static final Logger log = LoggerFactory.getLogger(FirstViewRebuild.class);

    private final AtomicBoolean decided = new AtomicBoolean();
    private final Supplier<UUID> agreed;
    private final RebuildGate gate;
    private final NodeRebuild rebuild;

    /**
     * @param agreed  the new cluster's id this node agreed on with the other founding members, asked when the first
     *                view comes (null if it agreed on none)
     * @param gate    opened for a brand-new cluster
     * @param rebuild started for a cluster that ran without this node
     */
    public FirstViewRebuild(Supplier<UUID> agreed, RebuildGate gate, NodeRebuild rebuild) {
        this.agreed = agreed;
        this.gate = gate;
        this.rebuild = rebuild;
    }

    @Override
    public void adopted(Placement placement) {
        if (placement.self() != null && placement.view().epoch() > 0 && decided.compareAndSet(false, true)) {
            if (placement.view().cluster().equals(agreed.get())) {
                log.info("a brand-new cluster: nothing to rebuild");
                gate.finish();
            } else {
                log.warn("the cluster ran without this node's data (epoch {}): rebuilding", placement.view().epoch());
                rebuild.start();
            }
        }
    }
}
