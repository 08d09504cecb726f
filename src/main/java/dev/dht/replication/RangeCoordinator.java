package dev.dht.replication;

import dev.dht.cluster.Membership;
import dev.dht.cluster.Placement;
import dev.dht.node.HybridLogicalClock;
import dev.dht.storage.KeyedRecord;
import dev.dht.storage.Record;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Function;
import java.util.function.Supplier;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

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
 *
 * <p>A range reads the members of the view it started under and counts as a request under it
 * ({@link Membership#enter}) until it ends, so a membership step waits for it; one that runs on long after its view
 * was replaced is revoked ({@link Membership#drained}) and fails with {@link RangeUnavailableException}: it would
 * otherwise go on reading members whose cleanup deletes what moved away from them.
 */
public final class RangeCoordinator {
    /** Records buffered per source. */
    public static final int PREFETCH = 16;
    private static final Comparator<KeyedRecord> KEY_ORDER = (a, b) -> Arrays.compareUnsigned(a.key(), b.key());

    private final Supplier<Membership.Ticket> tickets;
    private final Function<Placement, List<Replica>> members;
    private final HybridLogicalClock clock;

    /**
     * A coordinator over a fixed set of nodes and no membership (tests, tools).
     *
     * @param nodes one replica per node of the cluster, self included
     * @param clock the node clock, whose wall clock ({@link HybridLogicalClock#wallMillis()}) judges TTL expiry
     */
    public RangeCoordinator(List<Replica> nodes, HybridLogicalClock clock) {
        List<Replica> fixed = List.copyOf(nodes);
        this.tickets = null;
        this.members = placement -> fixed;
        this.clock = clock;
    }

    /**
     * @param membership the cluster view; each range enters it once and reads the members of that view
     * @param members    the replica of every member of a placement, self included, in every state (a joining or
     *                   leaving member may hold the newest version of a key)
     * @param clock      the node clock, whose wall clock judges TTL expiry
     */
    public RangeCoordinator(Membership membership, Function<Placement, List<Replica>> members,
                            HybridLogicalClock clock) {
        this.tickets = membership::enter;
        this.members = members;
        this.clock = clock;
    }

    /**
     * The live records in {@code [start, end)} across the cluster, in unsigned key order, newest version each.
     * Fails with {@link RangeUnavailableException} if a node cannot serve its part or the range outlived its view.
     *
     * @param end exclusive bound, or null for no bound
     */
    public Flux<KeyedRecord> range(String start, String end) {
        if (tickets == null) {
            return range(start, end, members.apply(null));
        }
        return Flux.defer(() -> {
            Membership.Ticket ticket = tickets.get();
            AtomicBoolean cut = new AtomicBoolean();
            Flux<KeyedRecord> records;
            try {
                records = range(start, end, members.apply(ticket.placement()));
            } catch (RuntimeException e) {
                ticket.exit();
                throw e;
            }
            return records
                    .takeUntilOther(ticket.revoked().doOnSuccess(revoked -> cut.set(true)))
                    .concatWith(Mono.defer(() -> cut.get()
                            ? Mono.error(new RangeUnavailableException("the cluster view changed while the range ran"
                                    + " (epoch " + ticket.placement().view().epoch() + " was replaced); ask again"))
                            : Mono.empty()))
                    .doFinally(signal -> ticket.exit());
        });
    }

    private Flux<KeyedRecord> range(String start, String end, List<Replica> nodes) {
        @SuppressWarnings("unchecked") // generic array for the varargs of mergeComparing
        Flux<KeyedRecord>[] sources = nodes.stream().map(node -> node.range(start, end)).toArray(Flux[]::new);
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
