package dev.dht.replication;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dht.cluster.ClusterTopology;
import dev.dht.cluster.Node;
import dev.dht.cluster.ShardRouter;
import dev.dht.node.HybridLogicalClock;
import dev.dht.storage.Record;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Replicas that disagree on the read path, with no sockets: this node and two peers as in-memory replicas, each
 * holding its own version of a key, read at 3/3 so that every replica's answer counts. The newest answer wins
 * whichever replica gave it; the answering replicas that lack it get it before the read answers (blocking read
 * repair), but only those among the first {@code from} replicas of the key as it was written; a repair that fails
 * or outlasts the replica timeout fails the read.
 */
class CoordinatorReadRepairTest {
    private static final ReplicationFactor ALL = new ReplicationFactor(3, 3);
    private static final Duration TIMEOUT = Duration.ofSeconds(5);

    private final ClusterTopology topology = new ClusterTopology(URI.create("http://a:8080"),
            List.of(URI.create("http://a:8080"), URI.create("http://b:8080"), URI.create("http://c:8080")));
    private final ShardRouter router = new ShardRouter(topology.nodes());
    private final HybridLogicalClock clock = new HybridLogicalClock();
    /** The replicas of nodes 0 (this node), 1 and 2. */
    private final List<InMemoryReplica> replicas = List.of(new InMemoryReplica(Replica.IN_PROCESS),
            new InMemoryReplica(Replica.PEER_UP), new InMemoryReplica(Replica.PEER_UP));
    private final long older = clock.now();
    private final long newer = clock.now();

    @ParameterizedTest(name = "newest on replica {0}")
    @ValueSource(ints = {0, 1, 2})
    void aNewerValueWinsOverOlderValues(int holder) {
        holds(holder, Record.value(newer, bytes("new")), Record.value(older, bytes("old")));

        assertThat(read("k")).map(CoordinatorReadRepairTest::text).contains("new");
    }

    @ParameterizedTest(name = "tombstone on replica {0}")
    @ValueSource(ints = {0, 1, 2})
    void aNewerTombstoneWinsOverOlderValues(int holder) {
        holds(holder, Record.tombstone(newer), Record.value(older, bytes("old")));

        assertThat(read("k")).as("the tombstone, answered 404").hasValueSatisfying(record ->
                assertThat(record.isTombstone()).isTrue());
    }

    @ParameterizedTest(name = "value on replica {0}")
    @ValueSource(ints = {0, 1, 2})
    void aNewerValueWinsOverOlderTombstones(int holder) {
        holds(holder, Record.value(newer, bytes("written again")), Record.tombstone(older));

        assertThat(read("k")).map(CoordinatorReadRepairTest::text).contains("written again");
    }

    @Test
    void aMissingAndAStaleReplicaGetTheNewestValueBeforeTheReadAnswers() {
        replicas.get(0).write("k", Record.value(newer, bytes("new"))).block();
        replicas.get(2).write("k", Record.value(older, bytes("old"))).block();
        // repairs that land late: the read must wait for them, not merely send them
        replicas.get(1).writesDelayed(Duration.ofMillis(300));
        replicas.get(2).writesDelayed(Duration.ofMillis(300));

        assertThat(read("k")).map(CoordinatorReadRepairTest::text).contains("new");

        assertThat(replicas.get(1).read("k").block()).as("the missing record repaired before the answer")
                .map(CoordinatorReadRepairTest::text).contains("new");
        assertThat(replicas.get(2).read("k").block()).as("the older record repaired before the answer")
                .map(CoordinatorReadRepairTest::text).contains("new");
    }

    @Test
    void aNewerTombstoneIsRepairedOverAnOlderValue() {
        replicas.get(1).write("k", Record.tombstone(newer)).block();
        replicas.get(0).write("k", Record.value(older, bytes("old"))).block();
        replicas.get(0).writesDelayed(Duration.ofMillis(300));

        read("k");

        for (InMemoryReplica replica : replicas) {
            assertThat(replica.read("k").block()).hasValueSatisfying(record ->
                    assertThat(record.isTombstone()).as("a tombstone on every replica").isTrue());
        }
    }

    @ParameterizedTest(name = "written with from={0}")
    @ValueSource(ints = {1, 2})
    void aRecordIsRepairedOnlyOntoTheFirstFromReplicasOfItsKey(int from) {
        List<InMemoryReplica> order = replicasInOrderOf("k");
        order.get(0).write("k", Record.value(newer, bytes("few copies"), from, 0)).block();

        assertThat(read("k")).map(CoordinatorReadRepairTest::text).contains("few copies");

        for (int i = 0; i < order.size(); i++) {
            assertThat(order.get(i).read("k").block().isPresent())
                    .as("replica %d of the key holds the record written with from=%d", i, from).isEqualTo(i < from);
        }
    }

    @Test
    void aFailedRepairFailsTheRead() {
        replicas.get(0).write("k", Record.value(newer, bytes("new"))).block();
        replicas.get(1).write("k", Record.value(older, bytes("old"))).block();
        replicas.get(2).write("k", Record.value(newer, bytes("new"))).block();
        replicas.get(1).writesFail(true);

        assertThatThrownBy(() -> read("k")).as("no 3 replicas agree on the answer")
                .isInstanceOf(QuorumNotReachedException.class);
    }

    @Test
    void aRepairThatOutlastsTheReplicaTimeoutFailsTheRead() {
        Duration timeout = Duration.ofMillis(300);
        replicas.get(0).write("k", Record.value(newer, bytes("new"))).block();
        replicas.get(2).write("k", Record.value(newer, bytes("new"))).block();
        replicas.get(1).writesDelayed(TIMEOUT);

        long started = System.nanoTime();
        assertThatThrownBy(() -> coordinator(timeout).get("k", ALL).block())
                .isInstanceOf(QuorumNotReachedException.class);
        assertThat(Duration.ofNanos(System.nanoTime() - started)).as("failed at the replica timeout")
                .isLessThan(TIMEOUT);
    }

    /** Puts {@code newest} on replica {@code holder} and {@code stale} on the two others. */
    private void holds(int holder, Record newest, Record stale) {
        for (int i = 0; i < replicas.size(); i++) {
            replicas.get(i).write("k", i == holder ? newest : stale).block();
        }
    }

    private Optional<Record> read(String id) {
        return coordinator(TIMEOUT).get(id, ALL).block();
    }

    /** A coordinator on node 0 that asks every replica at once (no speculative retry delay). */
    private Coordinator coordinator(Duration timeout) {
        return new Coordinator(topology.membership(), FixedReplicas.of(Map.of(node(0), replicas.get(0), node(1), replicas.get(1), node(2),
                replicas.get(2))), clock, timeout, Duration.ZERO, new SimpleMeterRegistry());
    }

    /** The replicas of {@code id} in its rendezvous order: the first {@code from} of them are its owners. */
    private List<InMemoryReplica> replicasInOrderOf(String id) {
        return router.replicas(id, 3).stream().map(node -> replicas.get(topology.nodes().indexOf(node))).toList();
    }

    private Node node(int index) {
        return topology.nodes().get(index);
    }

    private static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    private static String text(Record record) {
        return new String(record.value(), StandardCharsets.UTF_8);
    }
}
