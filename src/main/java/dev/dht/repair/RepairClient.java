package dev.dht.repair;

import dev.dht.cluster.Node;
import dev.dht.peer.PeerClient;
import dev.dht.storage.KeyedRecord;
import java.util.BitSet;
import java.util.Objects;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * The calling side of anti-entropy repair as one node sees it: the repair endpoints of the {@link PeerClient},
 * with this node named to the peer as the other side of the pair and the tree decoded. A peer builds its tree by
 * scanning its whole store at its {@code dht.repair.scan-rate}, so a tree may take up to
 * {@link PeerClient#REPAIR_TREE_TIMEOUT}; a record stream has no timeout (the repair paces it, as a client paces
 * a range). A peer's 503 fails a call with {@link dev.dht.failure.OverloadedException}. Non-blocking.
 */
public final class RepairClient {
    private final PeerClient peers;
    private final Node self;

    /** @param self this node, named to the peer as the other side of the pair */
    public RepairClient(PeerClient peers, Node self) {
        this.peers = Objects.requireNonNull(peers, "peers");
        this.self = Objects.requireNonNull(self, "self");
    }

    /** {@code peer}'s tree of the records it shares with this node. */
    public Mono<MerkleTree> tree(Node peer) {
        return peers.repairTree(peer, self).map(MerkleTree::fromBytes);
    }

    /** {@code peer}'s records shared with this node in {@code segments}, in key order. */
    public Flux<KeyedRecord> records(Node peer, BitSet segments) {
        return peers.repairRecords(peer, self, segments);
    }
}
