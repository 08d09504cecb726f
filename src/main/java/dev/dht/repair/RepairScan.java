package dev.dht.repair;

import dev.dht.cluster.Node;
import dev.dht.pacing.Pacer;
import dev.dht.storage.KeyedRecord;
import dev.dht.storage.LocalStore;
import java.util.BitSet;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * This node's side of a repair with one peer: the {@link MerkleTree} of the records both should hold
 * ({@link RepairScope}) and the stream of those records in chosen segments. Both read a LevelDB snapshot
 * with backpressure ({@link LocalStore#range}), so memory stays O(segments) whatever the store's size; the
 * reads run on the storage scheduler and never block the caller. A full storage queue fails the scan with
 * {@link dev.dht.failure.OverloadedException} (503 on the internal endpoints).
 *
 * <p>Paced: every scan reads at most {@code dht.repair.scan-rate} records per second, every record of the store
 * counted (it is read, whether or not the pair shares it), so building a tree over a large store takes its turns
 * with client requests at a bounded share of the storage threads and disk, on both sides of a repair (the peer
 * builds its tree for {@code GET /internal/repair/tree} with the same scan). The pause before a batch goes on is a
 * timer on Reactor's parallel scheduler ({@link Pacer#pause}): no storage thread or event loop waits; the records
 * of a batch then go on (the tree is hashed, the records stream) on that timer's thread, or on the storage
 * thread that read them when the pacer lets them pass at once (a scan behind its rate makes up at most one burst,
 * {@link Pacer#BURST}).
 */
public final class RepairScan {
    /** Records read from the snapshot per storage task. */
    static final int SCAN_BATCH = 256;
    private static final byte[] FIRST_KEY = new byte[0];
    private final LocalStore store;
    private final RepairScope scope;
    private final Node self;
    private final int scanRate;

    /**
     * A scan of {@code store} by {@code self}, the node this process runs.
     *
     * @param scanRate {@code dht.repair.scan-rate}: records per second one scan reads, at most
     * @throws IllegalArgumentException if {@code scanRate} is below 1
     */
    public RepairScan(LocalStore store, RepairScope scope, Node self, int scanRate) {
        if (scanRate < 1) {
            throw new IllegalArgumentException("scan rate must be at least 1 record per second, was " + scanRate);
        }
        this.store = store;
        this.scope = scope;
        this.self = self;
        this.scanRate = scanRate;
    }

    /** The sealed tree of the records this node and {@code peer} should both hold. */
    public Mono<MerkleTree> tree(Node peer) {
        return shared(peer)
                .collect(MerkleTree::new, (tree, entry) -> tree.add(entry.key(), entry.record(), scope.fromOf(entry.record())))
                .map(MerkleTree::seal);
    }

    /** The records this node and {@code peer} should both hold whose keys fall in {@code segments}, in key order. */
    public Flux<KeyedRecord> records(Node peer, BitSet segments) {
        return shared(peer).filter(entry -> segments.get(MerkleTree.segmentOf(entry.key())));
    }

    /**
     * The snapshot is read {@link #SCAN_BATCH} records per storage task, so that a scan takes turns with client
     * requests on the storage threads instead of holding one for the whole store; each batch waits for its
     * turn at the scan rate before it goes on, and the next batch is read only once this one went on (the
     * inner {@code concatMap} asks for one batch at a time), so at most two batches are held.
     */
    private Flux<KeyedRecord> shared(Node peer) {
        return Flux.defer(() -> {
            Pacer pacer = Pacer.perSecond(scanRate);
            return store.range(FIRST_KEY, null)
                    .limitRate(SCAN_BATCH)
                    .buffer(SCAN_BATCH)
                    .concatMap(batch -> pacer.pause(batch.size()).thenMany(Flux.fromIterable(batch)), 1)
                    .filter(entry -> scope.shared(self, peer, entry.key(), entry.record()));
        });
    }

    /** This node. */
    public Node self() {
        return self;
    }
}
