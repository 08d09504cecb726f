package dev.dht.replication.hints;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.dht.cluster.ClusterView;
import dev.dht.cluster.Membership;
import dev.dht.cluster.Node;
import dev.dht.cluster.PeerHealth;
import dev.dht.replication.Replica;
import dev.dht.storage.KeyedRecord;
import dev.dht.storage.Record;
import dev.dht.storage.StorageEngine;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * A hint is replayed only while its peer still replicates the key: after a membership change moved the key away, the
 * hint is deleted unsent and counted as {@code dht.hints.dropped{reason=not_replica}}, so replay never leaves a record
 * on a node that cleanup already passed.
 */
class HintOwnershipTest {
    private static final URI SELF = URI.create("http://a:8080");
    private static final Node PEER = new Node(URI.create("http://b:8080"), false);

    @TempDir
    Path dir;

    @Test
    void aHintForAKeyThePeerNoLongerReplicatesIsDroppedAndTheOthersAreReplayed() throws Exception {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        PeerHealth health = new PeerHealth();
        RecordingReplica peer = new RecordingReplica();
        // three members, one copy of each key: the peer replicates about a third of the keys
        Membership membership = new Membership(SELF, ClusterView.initial(
                List.of(SELF, PEER.url(), URI.create("http://c:8080")), 1), null);
        List<String> owned = new ArrayList<>();
        List<String> moved = new ArrayList<>();
        for (int i = 0; owned.size() < 2 || moved.size() < 1; i++) {
            String id = "key-" + i;
            boolean replicates = membership.placement().replicates(PEER.url(), id.getBytes(StandardCharsets.UTF_8), 1);
            (replicates ? owned : moved).add(id);
        }
        List<String> ids = List.of(owned.get(0), moved.get(0), owned.get(1));
        try (HintStore store = HintStore.open(dir, StorageEngine.JAVA, false);
             HintedHandoff handoff = new HintedHandoff(store, health, true, Duration.ofHours(1), 1 << 30, 1000,
                     membership, registry)) {
            Replica hinting = handoff.hinting(PEER, peer);
            peer.failing = true;
            for (String id : ids) {
                hinting.write(id, Record.value(1, id.getBytes(StandardCharsets.UTF_8), 1, 0))
                        .onErrorResume(e -> Mono.empty()).block(Duration.ofSeconds(5));
            }
            // the replay loop drops the hint of the moved key even while the peer fails; the others wait for it
            await().atMost(Duration.ofSeconds(10)).until(() -> store.pending(PEER.name()) == 2
                    && registry.get("dht.hints.dropped").tag("reason", "not_replica").counter().count() == 1);
            assertThat(peer.written).isEmpty();

            peer.failing = false;
            health.succeeded(PEER);
            await().atMost(Duration.ofSeconds(20)).until(() -> store.pending(PEER.name()) == 0);

            assertThat(peer.written).containsExactlyInAnyOrder(owned.get(0), owned.get(1));
            assertThat(registry.get("dht.hints.dropped").tag("reason", "not_replica").counter().count()).isEqualTo(1);
            assertThat(registry.get("dht.hints.replayed").counter().count()).isEqualTo(2);
        }
    }

    /** A peer whose writes fail while {@link #failing}, and that records the ids it stored. */
    private static final class RecordingReplica implements Replica {
        final List<String> written = new CopyOnWriteArrayList<>();
        volatile boolean failing;

        @Override
        public Mono<Optional<Record>> read(String id) {
            return Mono.just(Optional.empty());
        }

        @Override
        public Mono<Boolean> write(String id, Record record) {
            if (failing) {
                return Mono.error(new IllegalStateException("peer down"));
            }
            written.add(id);
            return Mono.just(true);
        }

        @Override
        public Flux<KeyedRecord> range(String start, String end) {
            return Flux.empty();
        }

        @Override
        public int readRank() {
            return PEER_UP;
        }
    }
}
