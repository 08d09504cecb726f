package dev.dht.replication;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dht.cluster.ClusterTopology;
import dev.dht.cluster.Node;
import dev.dht.cluster.ShardRouter;
import dev.dht.node.HybridLogicalClock;
import dev.dht.storage.ForwardingRecordRepository;
import dev.dht.storage.LevelDbRecordRepository;
import dev.dht.storage.LocalStore;
import dev.dht.storage.Record;
import dev.dht.storage.StorageEngine;
import dev.dht.storage.StorageScheduler;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A write whose local store is slower than {@code dht.replica-timeout} (this node's LevelDB behind a repository
 * that takes {@link #LOCAL_WRITE} per write, as a node writing many large values with little heap does) is
 * answered once it lands, not 504 although it was stored; a write missing a peer still gets 504 at the timeout.
 * Two nodes, this one real (LocalReplica over LevelDB), the peer in memory or silent; no sockets.
 */
class SlowLocalWriteTest {
    private static final Duration TIMEOUT = Duration.ofMillis(200);
    private static final Duration LOCAL_WRITE = Duration.ofMillis(1000);

    @TempDir
    Path dir;

    private final ClusterTopology topology = new ClusterTopology(URI.create("http://a:8080"),
            List.of(URI.create("http://a:8080"), URI.create("http://b:8080")));
    private final ShardRouter router = new ShardRouter(topology.nodes());
    private final InMemoryReplica peer = new InMemoryReplica(Replica.PEER_UP);
    private LevelDbRecordRepository leveldb;
    private StorageScheduler storage;
    private LocalReplica self;
    private volatile boolean slow = true;

    @BeforeEach
    void open() {
        leveldb = LevelDbRecordRepository.open(dir, StorageEngine.JAVA, false);
        storage = new StorageScheduler(2, 16, "test-storage");
        self = new LocalReplica(new LocalStore(new ForwardingRecordRepository(leveldb) {
            @Override
            public boolean upsert(byte[] key, Record record) {
                if (slow) {
                    sleep(LOCAL_WRITE);
                }
                return super.upsert(key, record);
            }
        }, storage, new HybridLogicalClock()));
    }

    @AfterEach
    void close() throws Exception {
        storage.close();
        leveldb.close();
    }

    @Test
    void aOneOfOneWriteWhoseLocalStoreIsSlowerThanTheTimeoutIsAcknowledgedAndStored() {
        Coordinator coordinator = coordinator(peer);
        String id = keyStoredFirstOn(0);
        long started = System.nanoTime();
        coordinator.write(WriteRequest.put(id, bytes("value"), new ReplicationFactor(1, 1))).block(Duration.ofSeconds(30));
        assertThat(Duration.ofNanos(System.nanoTime() - started)).as("answered when the local write landed")
                .isGreaterThanOrEqualTo(LOCAL_WRITE);

        slow = false;
        Optional<Record> read = coordinator.get(id, new ReplicationFactor(1, 1)).block(Duration.ofSeconds(30));
        assertThat(read).map(record -> new String(record.value(), StandardCharsets.UTF_8)).contains("value");
    }

    @Test
    void aTwoOfTwoWriteWaitsForItsSlowLocalStoreOnceThePeerAnswered() {
        Coordinator coordinator = coordinator(peer);
        coordinator.write(WriteRequest.put("k", bytes("value"), new ReplicationFactor(2, 2))).block(Duration.ofSeconds(30));
        assertThat(peer.read("k").block()).isPresent();
    }

    @Test
    void aWriteMissingAPeerStillGets504AtTheTimeoutWithoutWaitingForTheLocalStore() {
        Coordinator coordinator = coordinator(new UnansweredReplica(Replica.PEER_DOWN));
        long started = System.nanoTime();
        assertThatThrownBy(() -> coordinator.write(WriteRequest.put("k", bytes("value"), new ReplicationFactor(2, 2))).block())
                .isInstanceOfSatisfying(QuorumNotReachedException.class, e -> {
                    assertThat(e.getMessage()).contains("the rest timed out");
                    assertThat(e.refusedOnly()).isFalse();
                });
        assertThat(Duration.ofNanos(System.nanoTime() - started)).as("the peer is missing: no wait for the local write")
                .isLessThan(LOCAL_WRITE);

        slow = false;
        assertThatThrownBy(() -> coordinator.write(WriteRequest.put("k2", bytes("value"), new ReplicationFactor(2, 2))).block())
                .as("a fast local write and a silent peer: 504 as before")
                .isInstanceOf(QuorumNotReachedException.class);
    }

    @Test
    void aOneOfOneWriteToASilentPeerStillGets504() {
        Coordinator coordinator = coordinator(new UnansweredReplica(Replica.PEER_DOWN));
        String id = keyStoredFirstOn(1);
        assertThatThrownBy(() -> coordinator.write(WriteRequest.put(id, bytes("value"), new ReplicationFactor(1, 1))).block())
                .isInstanceOf(QuorumNotReachedException.class);
    }

    private Coordinator coordinator(Replica other) {
        return new Coordinator(topology.membership(), FixedReplicas.of(Map.of(node(0), self, node(1), other)), new HybridLogicalClock(), TIMEOUT,
                Duration.ofMillis(50), new SimpleMeterRegistry());
    }

    private Node node(int index) {
        return topology.nodes().get(index);
    }

    /** A key whose first replica is node {@code index}, so a 1/1 write goes there only. */
    private String keyStoredFirstOn(int index) {
        for (int i = 0; ; i++) {
            if (router.replicas("key" + i, 1).get(0).equals(node(index))) {
                return "key" + i;
            }
        }
    }

    private static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    private static void sleep(Duration duration) {
        try {
            Thread.sleep(duration.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
