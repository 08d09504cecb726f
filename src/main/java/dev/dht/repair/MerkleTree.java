package dev.dht.repair;

import dev.dht.storage.Record;
import java.nio.ByteBuffer;
import java.util.BitSet;
import net.openhft.hashing.LongHashFunction;

/**
 * A hash tree over a set of records, for anti-entropy repair: two replicas that build it over the records they
 * should both hold compare roots, descend only into the subtrees that differ and end at the differing
 * segments (the Merkle trees of Cassandra's repair and of Riak's active anti-entropy; R. Merkle, "A Digital
 * Signature Based on a Conventional Encryption Function", CRYPTO 1987).
 *
 * <p>As in Riak AAE, the leaves are {@link #SEGMENTS} fixed segments chosen by a hash of the key, not key
 * ranges, so a tree has the same shape on every node whatever the data. A leaf's hash is the sum (mod 2^64) of
 * the 64-bit xxHash3 of each record's (key, timestamp, tombstone, expiry, from): a sum does not depend on the
 * order the records are added in, so the tree is built by streaming a store in one pass with memory
 * O(segments), and 0 stands for an empty segment. Inner nodes hash their two children. The nodes are kept in
 * an array in heap order: node 1 is the root, node i has children 2i and 2i+1, the leaves are nodes
 * {@link #SEGMENTS} to 2 * {@link #SEGMENTS} - 1. Not thread-safe: one thread builds a tree ({@link #add}, then
 * {@link #seal}); a sealed tree is read-only.
 */
public final class MerkleTree {
    /** Bits of a key hash that choose its segment. */
    public static final int SEGMENT_BITS = 10;
    /** Number of leaves (segments). */
    public static final int SEGMENTS = 1 << SEGMENT_BITS;
    /** Size in bytes of {@link #toBytes()}: every node as a big-endian long, node 0 (unused) included. */
    public static final int ENCODED_BYTES = 2 * SEGMENTS * Long.BYTES;
    private static final LongHashFunction HASH = LongHashFunction.xx3();

    private final long[] nodes = new long[2 * SEGMENTS];
    /** Scratch of {@link #add}: (key hash, timestamp, expiry, from and tombstone), hashed together. */
    private final long[] fields = new long[4];
    private boolean sealed;

    /** The segment of {@code key} (UTF-8 bytes of the id), in {@code [0, SEGMENTS)}: the top bits of its xxHash3. */
    public static int segmentOf(byte[] key) {
        return (int) (HASH.hashBytes(key) >>> (Long.SIZE - SEGMENT_BITS));
    }

    /**
     * Adds one record to its segment's leaf. {@code from} is the replica count the record is counted with (the
     * caller resolves an unknown 0).
     *
     * @throws IllegalStateException once sealed
     */
    public void add(byte[] key, Record record, int from) {
        if (sealed) {
            throw new IllegalStateException("tree is sealed");
        }
        long keyHash = HASH.hashBytes(key);
        fields[0] = keyHash;
        fields[1] = record.timestamp();
        fields[2] = record.expiresAtMillis();
        fields[3] = ((long) from << 1) | (record.isTombstone() ? 1 : 0);
        nodes[SEGMENTS + (int) (keyHash >>> (Long.SIZE - SEGMENT_BITS))] += HASH.hashLongs(fields);
    }

    /** Computes the inner nodes from the leaves; returns this tree, now read-only. */
    public MerkleTree seal() {
        long[] pair = new long[2];
        for (int i = SEGMENTS - 1; i >= 1; i--) {
            pair[0] = nodes[2 * i];
            pair[1] = nodes[2 * i + 1];
            nodes[i] = pair[0] == 0 && pair[1] == 0 ? 0 : HASH.hashLongs(pair);
        }
        sealed = true;
        return this;
    }

    /** The root hash (0 for a tree without records). */
    public long root() {
        checkSealed();
        return nodes[1];
    }

    /**
     * The segments whose leaves differ from {@code other}'s, found by descending from the root only into
     * subtrees whose hashes differ.
     */
    public Difference differences(MerkleTree other) {
        checkSealed();
        other.checkSealed();
        BitSet segments = new BitSet(SEGMENTS);
        int compared = descend(other, 1, segments);
        return new Difference(segments, compared);
    }

    private int descend(MerkleTree other, int node, BitSet segments) {
        if (nodes[node] == other.nodes[node]) {
            return 1;
        }
        if (node >= SEGMENTS) {
            segments.set(node - SEGMENTS);
            return 1;
        }
        return 1 + descend(other, 2 * node, segments) + descend(other, 2 * node + 1, segments);
    }

    /** The sealed tree as {@link #ENCODED_BYTES} bytes (the internal repair protocol's body). */
    public byte[] toBytes() {
        checkSealed();
        ByteBuffer buffer = ByteBuffer.allocate(ENCODED_BYTES);
        buffer.asLongBuffer().put(nodes);
        return buffer.array();
    }

    /**
     * A sealed tree from {@link #toBytes()}.
     *
     * @throws IllegalArgumentException if {@code bytes} is not {@link #ENCODED_BYTES} long
     */
    public static MerkleTree fromBytes(byte[] bytes) {
        if (bytes.length != ENCODED_BYTES) {
            throw new IllegalArgumentException("a tree has " + ENCODED_BYTES + " bytes, got " + bytes.length);
        }
        MerkleTree tree = new MerkleTree();
        ByteBuffer.wrap(bytes).asLongBuffer().get(tree.nodes);
        tree.sealed = true;
        return tree;
    }

    private void checkSealed() {
        if (!sealed) {
            throw new IllegalStateException("tree is not sealed");
        }
    }

    /**
     * The outcome of comparing two trees.
     *
     * @param segments      the differing segments
     * @param nodesCompared tree nodes (ranges of segments) compared on the way down, the root included
     */
    public record Difference(BitSet segments, int nodesCompared) {
    }
}
