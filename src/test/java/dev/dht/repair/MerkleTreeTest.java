package dev.dht.repair;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dht.storage.Record;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.BitSet;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * The hash tree anti-entropy repair compares: two replicas holding the same records (inserted in any order) have
 * the same root and no differing segment; a record that differs in timestamp, tombstone, expiry or replica count,
 * or is missing, shows in exactly its own segment, found by walking one path down; an empty tree differs wherever
 * the other has records; a tree survives its byte form, and bytes of the wrong length are refused.
 */
class MerkleTreeTest {
    private static final int RECORDS = 5000;

    private static byte[] key(int i) {
        return ("key-" + i).getBytes(StandardCharsets.UTF_8);
    }

    private static MerkleTree treeOf(List<Integer> order, int changed, Record changedTo) {
        MerkleTree tree = new MerkleTree();
        for (int i : order) {
            Record record = i == changed ? changedTo : Record.value(1000L + i, ("v" + i).getBytes(StandardCharsets.UTF_8), 3, 0);
            tree.add(key(i), record, 3);
        }
        return tree.seal();
    }

    private static List<Integer> inOrder() {
        List<Integer> order = new ArrayList<>();
        for (int i = 0; i < RECORDS; i++) {
            order.add(i);
        }
        return order;
    }

    @Test
    void equalRecordsInAnyOrderGiveEqualRootsAndNoDifference() {
        List<Integer> shuffled = inOrder();
        Collections.shuffle(shuffled, new Random(17));
        MerkleTree a = treeOf(inOrder(), -1, null);
        MerkleTree b = treeOf(shuffled, -1, null);

        assertThat(a.root()).isEqualTo(b.root()).isNotZero();
        MerkleTree.Difference difference = a.differences(b);
        assertThat(difference.segments().isEmpty()).isTrue();
        assertThat(difference.nodesCompared()).isEqualTo(1);
    }

    @Test
    void oneNewerTimestampDiffersInExactlyItsSegment() {
        int changed = 1234;
        MerkleTree a = treeOf(inOrder(), -1, null);
        MerkleTree b = treeOf(inOrder(), changed, Record.value(99_999L, "v".getBytes(StandardCharsets.UTF_8), 3, 0));

        MerkleTree.Difference difference = a.differences(b);
        assertThat(difference.segments().cardinality()).isEqualTo(1);
        assertThat(difference.segments().nextSetBit(0)).isEqualTo(MerkleTree.segmentOf(key(changed)));
        // one path from the root down: 2 nodes compared per level below the root, 10 levels
        assertThat(difference.nodesCompared()).isEqualTo(1 + 2 * MerkleTree.SEGMENT_BITS);
    }

    @Test
    void aTombstoneAnExpiryOrAReplicaCountEachChangeTheSegment() {
        int changed = 42;
        Record original = Record.value(1000L + changed, ("v" + changed).getBytes(StandardCharsets.UTF_8), 3, 0);
        MerkleTree base = treeOf(inOrder(), changed, original);
        for (Record other : List.of(Record.tombstone(original.timestamp(), 3),
                Record.value(original.timestamp(), original.value(), 3, 5_000))) {
            assertThat(base.differences(treeOf(inOrder(), changed, other)).segments().cardinality()).as(other.toString())
                    .isEqualTo(1);
        }
        MerkleTree otherFrom = new MerkleTree();
        for (int i = 0; i < RECORDS; i++) {
            Record record = i == changed ? original : Record.value(1000L + i, ("v" + i).getBytes(StandardCharsets.UTF_8), 3, 0);
            otherFrom.add(key(i), record, i == changed ? 2 : 3);
        }
        assertThat(base.differences(otherFrom.seal()).segments().cardinality()).isEqualTo(1);
    }

    @Test
    void aMissingRecordDiffersInItsSegmentAndAnEmptyTreeEverywhereThereAreRecords() {
        MerkleTree all = treeOf(inOrder(), -1, null);
        List<Integer> allButOne = inOrder();
        allButOne.remove(Integer.valueOf(7));
        assertThat(all.differences(treeOf(allButOne, -1, null)).segments().stream().boxed().toList())
                .containsExactly(MerkleTree.segmentOf(key(7)));

        MerkleTree empty = new MerkleTree().seal();
        assertThat(empty.root()).isZero();
        BitSet occupied = new BitSet();
        for (int i = 0; i < RECORDS; i++) {
            occupied.set(MerkleTree.segmentOf(key(i)));
        }
        assertThat(all.differences(empty).segments()).isEqualTo(occupied);
    }

    @Test
    void bytesRoundTripAndWrongLengthIsRefused() {
        MerkleTree tree = treeOf(inOrder(), -1, null);
        MerkleTree copy = MerkleTree.fromBytes(tree.toBytes());
        assertThat(copy.root()).isEqualTo(tree.root());
        assertThat(copy.differences(tree).segments().isEmpty()).isTrue();
        assertThatThrownBy(() -> MerkleTree.fromBytes(new byte[10])).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> new MerkleTree().root()).isInstanceOf(IllegalStateException.class);
    }
}
