package dev.dht.repair;

import dev.dht.cluster.Node;
import dev.dht.pacing.Pacer;
import dev.dht.replication.Replica;
import dev.dht.storage.KeyedRecord;
import dev.dht.storage.LocalStore;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.BitSet;
import java.util.Comparator;
import java.util.List;
import java.util.function.BiConsumer;
import java.util.function.LongConsumer;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * One anti-entropy exchange between this node and one peer (after Cassandra's repair and Riak's active
 * anti-entropy): both build the {@link MerkleTree} of the records they should both hold ({@link RepairScope}), this
 * node fetches the peer's whole tree in one exchange and descends only into differing subtrees, then streams both
 * sides' full records of the differing segments in key order and merge-joins them: a record the peer lacks or has
 * older is pushed to it (the replica write path), one this node lacks or has older is written here. Either happens
 * only if the receiving node is among the record's first {@code from} replicas, so repair never adds copies. Why
 * whole trees and full records: docs/replication-and-repair.md, "RepairSession".
 *
 * <p>Paced: at most {@code maxRate} keys per second pass the merge-join, in batches of {@link #BATCH}, each batch
 * followed by its pause ({@link Pacer#pause}, a timer: no thread waits); memory is bounded by the merge's prefetch
 * and one batch. Non-blocking; storage work runs on the storage scheduler.
 */
final class RepairSession {
    /** Keys handled together: one local write batch, up to this many pushes, one pause. */
    static final int BATCH = 100;
    private static final int MERGE_PREFETCH = 32;
    private static final int PUSHES_IN_FLIGHT = 8;
    private static final Comparator<Side> BY_KEY = (a, b) -> Arrays.compareUnsigned(a.entry().key(), b.entry().key());

    private final RepairScan scan;
    private final RepairClient client;
    private final RepairScope scope;
    private final LocalStore store;
    private final Replica peerReplica;
    private final Node peer;
    private final Pacer pacer;
    private final LongConsumer onPulled;
    private final LongConsumer onPushed;
    private long compared;
    private long pulled;
    private long pushed;

    /**
     * @param peerReplica the peer as a replica (its write path receives the pushes)
     * @param maxRate     keys per second, at most
     * @param onPulled    told the count of each batch of records written here
     * @param onPushed    told the count of each batch of records sent to the peer
     */
    RepairSession(RepairScan scan, RepairClient client, RepairScope scope, LocalStore store, Replica peerReplica,
                  Node peer, int maxRate, LongConsumer onPulled, LongConsumer onPushed) {
        this.scan = scan;
        this.client = client;
        this.scope = scope;
        this.store = store;
        this.peerReplica = peerReplica;
        this.peer = peer;
        this.pacer = Pacer.perSecond(maxRate);
        this.onPulled = onPulled;
        this.onPushed = onPushed;
    }

    /**
     * Runs the exchange once; {@code onCompared} is told the tree nodes compared and the segments that differed.
     * Emits the result, or fails if the peer or the store failed (what was repaired so far stays).
     */
    Mono<RepairResult> run(BiConsumer<Long, Long> onCompared) {
        long started = System.nanoTime();
        return Mono.zip(scan.tree(peer), client.tree(peer))
                .flatMap(trees -> {
                    long treeMillis = Duration.ofNanos(System.nanoTime() - started).toMillis();
                    MerkleTree.Difference difference = trees.getT1().differences(trees.getT2());
                    BitSet segments = difference.segments();
                    onCompared.accept((long) difference.nodesCompared(), (long) segments.cardinality());
                    Mono<Void> streamed = segments.isEmpty() ? Mono.empty() : mergeJoin(segments);
                    return streamed.then(Mono.fromSupplier(() -> new RepairResult(peer.name(),
                            difference.nodesCompared(), segments.cardinality(), compared, pulled, pushed,
                            Duration.ofNanos(System.nanoTime() - started).toMillis(), treeMillis, null)));
                });
    }

    private Mono<Void> mergeJoin(BitSet segments) {
        Flux<Side> local = scan.records(peer, segments).map(entry -> new Side(entry, true));
        Flux<Side> remote = client.records(peer, segments).map(entry -> new Side(entry, false));
        return Flux.mergeComparing(MERGE_PREFETCH, BY_KEY, local, remote)
                .bufferUntilChanged(side -> side.entry().key(), Arrays::equals)
                .buffer(BATCH)
                .concatMap(this::repairBatch)
                .then();
    }

    /** Decides each key of the batch, writes the pulls here in one storage task, sends the pushes, then paces. */
    private Mono<Void> repairBatch(List<List<Side>> keys) {
        List<KeyedRecord> pulls = new ArrayList<>();
        List<KeyedRecord> pushes = new ArrayList<>();
        for (List<Side> sides : keys) {
            decide(sides, pulls, pushes);
        }
        compared += keys.size();
        Mono<Void> pull = pulls.isEmpty() ? Mono.empty() : store.writeAll(pulls)
                .then(Mono.fromRunnable(() -> {
                    pulled += pulls.size();
                    onPulled.accept(pulls.size());
                }));
        Mono<Void> push = Flux.fromIterable(pushes)
                .flatMap(entry -> peerReplica.write(new String(entry.key(), StandardCharsets.UTF_8), entry.record()),
                        PUSHES_IN_FLIGHT)
                .then(Mono.fromRunnable(() -> {
                    pushed += pushes.size();
                    onPushed.accept(pushes.size());
                }));
        return Mono.when(pull, push).then(Mono.defer(() -> pacer.pause(keys.size())));
    }

    /** One key: one or two sides (at most one each); the newer record goes to the node that lacks it. */
    private void decide(List<Side> sides, List<KeyedRecord> pulls, List<KeyedRecord> pushes) {
        KeyedRecord mine = null;
        KeyedRecord theirs = null;
        for (Side side : sides) {
            if (side.local()) {
                mine = side.entry();
            } else {
                theirs = side.entry();
            }
        }
        if (theirs != null && (mine == null || theirs.record().supersedes(mine.record()))) {
            if (scope.holds(scan.self(), theirs.key(), theirs.record())) {
                pulls.add(theirs);
            }
        } else if (mine != null && (theirs == null || mine.record().supersedes(theirs.record()))) {
            if (scope.holds(peer, mine.key(), mine.record())) {
                pushes.add(mine);
            }
        }
    }

    /** A record from this node ({@code local}) or from the peer. */
    private record Side(KeyedRecord entry, boolean local) {
    }
}
