package dev.dht.replication.hints;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dht.failure.OverloadReason;
import dev.dht.failure.OverloadedException;
import dev.dht.storage.FreeSpaceReserve;
import dev.dht.storage.Record;
import dev.dht.storage.StorageEngine;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The hint store: each peer's hints oldest first, apart from other peers', counted, and kept across a reopen. */
class HintStoreTest {
    private static final String PEER = "localhost:80";
    /** A peer whose name starts with {@link #PEER}'s: their hints must not mix. */
    private static final String OTHER_PEER = "localhost:8080";

    @TempDir
    Path dir;

    @Test
    void hintsComeBackOldestFirstPerPeerAndSurviveAReopen() throws IOException {
        try (HintStore store = HintStore.open(dir, StorageEngine.JAVA, false)) {
            for (int i = 0; i < 5; i++) {
                store.add(PEER, bytes("k" + i), Record.value(100 + i, bytes("v" + i), 3, 0));
                store.add(OTHER_PEER, bytes("other" + i), Record.tombstone(200 + i, 2));
            }
            assertThat(keys(store.oldest(PEER, 3))).containsExactly("k0", "k1", "k2");
        }
        try (HintStore store = HintStore.open(dir, StorageEngine.JAVA, false)) {
            assertThat(store.pending(PEER)).isEqualTo(5);
            assertThat(store.pending(OTHER_PEER)).isEqualTo(5);
            List<Hint> hints = store.oldest(PEER, 10);
            assertThat(keys(hints)).containsExactly("k0", "k1", "k2", "k3", "k4");
            assertThat(hints.get(4).record()).isEqualTo(Record.value(104, bytes("v4"), 3, 0));
            long before = store.sizeBytes();

            store.remove(hints.subList(0, 2));

            assertThat(keys(store.oldest(PEER, 10))).containsExactly("k2", "k3", "k4");
            assertThat(store.pending(PEER)).isEqualTo(3);
            assertThat(store.sizeBytes()).isEqualTo(before - HintStore.sizeOf(PEER, bytes("k0"), hints.get(0).record())
                    - HintStore.sizeOf(PEER, bytes("k1"), hints.get(1).record()));
            assertThat(store.oldest(OTHER_PEER, 1).get(0).record().isTombstone()).isTrue();
        }
        try (HintStore store = HintStore.open(dir, StorageEngine.JAVA, false)) {
            assertThat(keys(store.oldest(PEER, 10))).as("hints added after a reopen go last").containsExactly("k2", "k3", "k4");
            store.add(PEER, bytes("k5"), Record.value(105, bytes("v5")));
            assertThat(keys(store.oldest(PEER, 10))).containsExactly("k2", "k3", "k4", "k5");
            assertThat(store.oldest("localhost:1", 10)).isEmpty();
        }
    }

    @Test
    void belowTheFreeSpaceReserveHintsAreNeitherAddedNorRemoved() throws IOException {
        try (HintStore store = HintStore.open(dir, StorageEngine.JAVA, false)) {
            store.add(PEER, bytes("k0"), Record.value(100, bytes("v0")));
        }
        try (HintStore store = HintStore.open(dir, StorageEngine.JAVA, false, FreeSpaceReserve.of(dir, Long.MAX_VALUE))) {
            assertThatThrownBy(() -> store.add(PEER, bytes("k1"), Record.value(101, bytes("v1"))))
                    .isInstanceOf(OverloadedException.class)
                            .hasFieldOrPropertyWithValue("reason", OverloadReason.DISK_FULL);
            List<Hint> hints = store.oldest(PEER, 10);
            assertThatThrownBy(() -> store.remove(hints)).isInstanceOf(OverloadedException.class)
                    .hasFieldOrPropertyWithValue("reason", OverloadReason.DISK_FULL);
            assertThat(keys(store.oldest(PEER, 10))).containsExactly("k0");
            assertThat(store.pending(PEER)).isEqualTo(1);
        }
    }

    @Test
    void hintsOfPeersNoLongerInTheClusterAreDeletedAndTheOthersKept() throws IOException {
        try (HintStore store = HintStore.open(dir, StorageEngine.JAVA, false)) {
            for (int i = 0; i < 5; i++) {
                store.add(PEER, bytes("k" + i), Record.value(100 + i, bytes("v" + i)));
                store.add(OTHER_PEER, bytes("other" + i), Record.value(200 + i, bytes("w" + i)));
            }
            long keptBytes = store.oldest(PEER, 10).stream()
                    .mapToLong(hint -> HintStore.sizeOf(PEER, hint.key(), hint.record())).sum();

            assertThat(store.removePeersOtherThan(Set.of(PEER, "localhost:1"))).isEqualTo(5);

            assertThat(store.pending(OTHER_PEER)).isZero();
            assertThat(store.oldest(OTHER_PEER, 10)).isEmpty();
            assertThat(keys(store.oldest(PEER, 10))).containsExactly("k0", "k1", "k2", "k3", "k4");
            assertThat(store.sizeBytes()).isEqualTo(keptBytes);
            assertThat(store.removePeersOtherThan(Set.of(PEER))).as("nothing left to delete").isZero();
        }
        try (HintStore store = HintStore.open(dir, StorageEngine.JAVA, false)) {
            assertThat(store.pending(OTHER_PEER)).as("deleted for good").isZero();
            assertThat(store.pending(PEER)).isEqualTo(5);
        }
    }

    private static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    private static List<String> keys(List<Hint> hints) {
        return hints.stream().map(hint -> new String(hint.key(), StandardCharsets.UTF_8)).toList();
    }
}
