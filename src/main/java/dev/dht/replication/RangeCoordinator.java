package dev.dht.replication;

import dev.dht.node.HybridLogicalClock;
import dev.dht.storage.KeyedRecord;
import dev.dht.storage.Record;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.function.Supplier;
import reactor.core.publisher.Flux;

/**
 * Serves a range over the whole cluster: every node streams its local range in key order (tombstones
 * included), the streams are merged by key ({@link Flux#mergeComparing}), the newest record per key is kept
 * ({@link Record#newest}) and tombstones and expired values are dropped (an expired value still hides older
 * versions of its key on other nodes: it acts as a tombstone of its write's timestamp).
 *
 * <p>Memory is bounded: each source is prefetched at most {@link #PREFETCH} records, and peers are read only
 * as fast as the client consumes (HTTP/1.1 flow control through the WebClient body). A client that goes away
 * cancels every source. Keys written with a small {@code from} may live on one node only, so every node must
 * serve its part: a failing node fails the stream with {@link RangeUnavailableException}. Non-blocking.
 */
public final class RangeCoordinator {
    /** Records buffered per source. */
    public static final int PREFETCH = 16;
    private static final Comparator<KeyedRecord> KEY_ORDER = (a, b) -> Arrays.compareUnsigned(a.key(), b.key());

    private final Supplier<List<Replica>> nodes;
    private final HybridLogicalClock clock;

    /**
     * @param nodes one replica per node of the cluster, self included
     * @param clock the node clock, whose wall clock ({@link HybridLogicalClock#wallMillis()}) judges TTL expiry
     */
    public RangeCoordinator(List<Replica> nodes, HybridLogicalClock clock) {
        List<Replica> fixed = List.copyOf(nodes);
        this.nodes = () -> fixed;
        this.clock = clock;
    }

    /**
     * @param members the replica of every member of the current cluster view, self included, in every state (a
     *                joining or leaving member may hold the newest version of a key); asked once per range
     * @param clock   the node clock, whose wall clock judges TTL expiry
     */
    public RangeCoordinator(Supplier<List<Replica>> members, HybridLogicalClock clock) {
        this.nodes = members;
        this.clock = clock;
    }

    /**
     * The live records in {@code [start, end)} across the cluster, in unsigned key order, newest version each.
     *
     * @param end exclusive bound, or null for no bound
     */
    public Flux<KeyedRecord> range(String start, String end) {
        @SuppressWarnings("unchecked") // generic array for the varargs of mergeComparing
        Flux<KeyedRecord>[] sources = nodes.get().stream().map(node -> node.range(start, end)).toArray(Flux[]::new);
        return Flux.mergeComparing(PREFETCH, KEY_ORDER, sources)
                .bufferUntilChanged(KeyedRecord::key, Arrays::equals)
                .map(RangeCoordinator::newest)
                .filter(entry -> !entry.record().isTombstone() && !entry.record().isExpiredAt(clock.wallMillis()));
    }

    private static KeyedRecord newest(List<KeyedRecord> versions) {
        KeyedRecord newest = versions.get(0);
        for (int i = 1; i < versions.size(); i++) {
            if (Record.newest(newest.record(), versions.get(i).record()) != newest.record()) {
                newest = versions.get(i);
            }
        }
        return newest;
    }
}
