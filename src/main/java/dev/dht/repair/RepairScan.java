package dev.dht.repair;

import dev.dht.cluster.Node;
import dev.dht.storage.KeyedRecord;
import dev.dht.storage.LocalStore;
import java.util.BitSet;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * This node's side of a repair with one peer: the {@link MerkleTree} of the records both should hold
 * ({@link RepairScope}) and the stream of those records in chosen segments. Both read a LevelDB snapshot
 * with backpressure ({@link LocalStore#range}), so memory stays O(segments) whatever the store's size; the
 * scan runs on the storage scheduler and never blocks the caller. A full storage queue fails the scan with
 * {@link java.util.concurrent.RejectedExecutionException} (503 on the internal endpoints).
 */
public final class RepairScan {
    /** Records read from the snapshot per storage task. */
    static final int SCAN_BATCH = 256;
    private static final byte[] FIRST_KEY = new byte[0];
    private final LocalStore store;
    private final RepairScope scope;
    private final Node self;

    /** A scan of {@code store} by {@code self}, the node this process runs. */
    public RepairScan(LocalStore store, RepairScope scope, Node self) {
        this.store = store;
        this.scope = scope;
        this.self = self;
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
     * The snapshot is read {@link #SCAN_BATCH} records per storage task, so that a scan of a large store, which
     * nothing else paces when it builds a tree, takes turns with client requests on the storage threads
     * instead of holding one for the whole store.
     */
    private Flux<KeyedRecord> shared(Node peer) {
        return store.range(FIRST_KEY, null)
                .limitRate(SCAN_BATCH)
                .filter(entry -> scope.shared(self, peer, entry.key(), entry.record()));
    }

    /** This node. */
    public Node self() {
        return self;
    }
}
