package dev.dht.repair;

import dev.dht.cluster.Node;
import dev.dht.cluster.Placement;
import dev.dht.storage.Record;
import java.util.List;
import java.util.function.Supplier;

/**
 * Which records two nodes should both hold, and so compare in a repair: those whose first {@code from}
 * rendezvous replicas under the current cluster view ({@link Placement#newReplicasAtMost}) include both,
 * {@code from} being the replica count the record's write asked for. Repair therefore never copies a key beyond
 * its first {@code from} replicas: a 1/1 write stays one copy and a 2/2 write two.
 *
 * <p>A record of format 0 carries no replica count ({@code from} 0, unknown); it counts as written with the
 * cluster's default {@code from}, the cluster size n (the default {@code replicas} was {@code (n/2+1)/n} then). A
 * count above the cluster size (a cluster that shrank) counts as n too. Pure computation: thread-safe.
 */
public final class RepairScope {
    private final Supplier<Placement> placement;

    /** @param placement the current placement, asked on each use */
    public RepairScope(Supplier<Placement> placement) {
        this.placement = placement;
    }

    /** The replica count {@code record} counts with: its {@code from}, or n if that is 0 (unknown) or above n. */
    public int fromOf(Record record) {
        return placement.get().placedFrom(record.from());
    }

    /** True if {@code node} is one of the first {@link #fromOf} replicas of {@code key}. */
    public boolean holds(Node node, byte[] key, Record record) {
        return placement.get().newReplicasAtMost(key, fromOf(record)).contains(node);
    }

    /** True if both {@code a} and {@code b} are among the first {@link #fromOf} replicas of {@code key}. */
    public boolean shared(Node a, Node b, byte[] key, Record record) {
        List<Node> replicas = placement.get().newReplicasAtMost(key, fromOf(record));
        return replicas.contains(a) && replicas.contains(b);
    }
}
