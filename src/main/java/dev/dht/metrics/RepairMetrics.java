package dev.dht.metrics;

import dev.dht.cluster.Node;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;

/**
 * Meters of anti-entropy repair and rebuild, per peer: {@code dht.repair.last.completed} (gauge, epoch seconds
 * of the last repair with the peer that completed, 0 before the first), {@code dht.repair.ranges} (tree nodes
 * compared and leaf segments found different, tag {@code result}), {@code dht.repair.records} (records written
 * here from the peer or sent to it, tag {@code direction} pulled or pushed); {@code dht.rebuild.records}
 * (records streamed in by a rebuild) and {@code dht.rebuild.active} (1 while this node rebuilds). Thread-safe.
 */
public final class RepairMetrics {
    private final Map<Node, PeerMeters> peers = new ConcurrentHashMap<>();
    private final MeterRegistry registry;
    private final Counter rebuildRecords;

    /**
     * Registers the meters of every peer in {@code peerNodes} (a peer that joins later gets its meters with its first
     * repair); {@code rebuilding} feeds {@code dht.rebuild.active}.
     */
    public RepairMetrics(MeterRegistry registry, List<Node> peerNodes, BooleanSupplier rebuilding) {
        this.registry = registry;
        for (Node peer : peerNodes) {
            meters(peer);
        }
        rebuildRecords = Counter.builder("dht.rebuild.records")
                .description("records written to this node by its rebuild").register(registry);
        Gauge.builder("dht.rebuild.active", rebuilding, active -> active.getAsBoolean() ? 1 : 0)
                .description("1 while this node rebuilds its store and does not answer replica reads").register(registry);
    }

    /** Counts one comparison of trees with {@code peer}. */
    public void compared(Node peer, long rangesCompared, long segmentsDifferent) {
        PeerMeters meters = meters(peer);
        meters.rangesCompared.increment(rangesCompared);
        meters.rangesDifferent.increment(segmentsDifferent);
    }

    /** Counts {@code records} written here from {@code peer}; {@code rebuild} counts them as rebuild progress too. */
    public void pulled(Node peer, long records, boolean rebuild) {
        meters(peer).pulled.increment(records);
        if (rebuild) {
            rebuildRecords.increment(records);
        }
    }

    /** Counts {@code records} sent to {@code peer}. */
    public void pushed(Node peer, long records) {
        meters(peer).pushed.increment(records);
    }

    /** Records that a repair with {@code peer} completed at {@code epochSeconds}. */
    public void completed(Node peer, long epochSeconds) {
        meters(peer).lastCompleted.set(epochSeconds);
    }

    private PeerMeters meters(Node peer) {
        return peers.computeIfAbsent(peer, node -> new PeerMeters(registry, node));
    }

    private static final class PeerMeters {
        final AtomicLong lastCompleted = new AtomicLong();
        final Counter rangesCompared;
        final Counter rangesDifferent;
        final Counter pulled;
        final Counter pushed;

        PeerMeters(MeterRegistry registry, Node peer) {
            String name = peer.name();
            Gauge.builder("dht.repair.last.completed", lastCompleted, AtomicLong::get)
                    .description("epoch seconds of the last completed repair with the peer, 0 before the first")
                    .tag("peer", name).register(registry);
            rangesCompared = Counter.builder("dht.repair.ranges").description("hash tree ranges compared / different")
                    .tag("peer", name).tag("result", "compared").register(registry);
            rangesDifferent = Counter.builder("dht.repair.ranges").description("hash tree ranges compared / different")
                    .tag("peer", name).tag("result", "different").register(registry);
            pulled = Counter.builder("dht.repair.records").description("records repaired, by direction")
                    .tag("peer", name).tag("direction", "pulled").register(registry);
            pushed = Counter.builder("dht.repair.records").description("records repaired, by direction")
                    .tag("peer", name).tag("direction", "pushed").register(registry);
        }
    }
}
