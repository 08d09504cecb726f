package dev.dht.replication;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dht.cluster.ClusterView;
import dev.dht.cluster.Membership;
import dev.dht.cluster.Node;
import dev.dht.cluster.Placement;
import dev.dht.node.HybridLogicalClock;
import dev.dht.storage.Record;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * Read repair while a node joins (phase write-both-read-old): a read asks the old set, and when its answers disagree
 * the newest record also goes to the key's replicas the read did not ask, the joiner among them, so a joiner that
 * already streamed the key does not keep the older version; a joiner that fails the repair does not fail the read.
 * Nodes a, b, c hold the keys; d joins. No sockets: in-memory replicas.
 */
class ReadRepairDuringChangeTest {
    private static final ReplicationFactor ALL = new ReplicationFactor(3, 3);
    private static final List<URI> OLD = List.of(URI.create("http://a:8080"), URI.create("http://b:8080"),
            URI.create("http://c:8080"));
    private static final URI JOINER = URI.create("http://d:8080");

    private final ClusterView joining = ClusterView.initial(OLD, 3).withJoining(JOINER);
    private final Placement placement = new Placement(joining, OLD.get(0));
    private final HybridLogicalClock clock = new HybridLogicalClock();
    private final Map<URI, InMemoryReplica> replicas = new HashMap<>();

    ReadRepairDuringChangeTest() {
        replicas.put(OLD.get(0), new InMemoryReplica(Replica.IN_PROCESS));
        for (URI node : List.of(OLD.get(1), OLD.get(2), JOINER)) {
            replicas.put(node, new InMemoryReplica(Replica.PEER_UP));
        }
    }

    @Test
    void theJoinerGetsTheRecordAReadRepairedInTheOldSet() {
        String id = keyTheJoinerGains();
        List<Node> old = placement.oldReplicas(bytes(id), 3);
        // the joiner streamed the older version before the newer write, which reached one old replica only
        holds(id, old.get(0).url(), old.get(1).url(), old.get(2).url(), JOINER);

        assertThat(read(id)).map(ReadRepairDuringChangeTest::text).contains("new");

        assertThat(replicas.get(JOINER).read(id).block()).as("the joiner, which the read did not ask")
                .map(ReadRepairDuringChangeTest::text).contains("new");
        for (Node node : old) {
            assertThat(replicas.get(node.url()).read(id).block()).map(ReadRepairDuringChangeTest::text).contains("new");
        }
    }

    @Test
    void aJoinerThatFailsTheRepairDoesNotFailTheRead() {
        String id = keyTheJoinerGains();
        List<Node> old = placement.oldReplicas(bytes(id), 3);
        holds(id, old.get(0).url(), old.get(1).url());
        replicas.get(JOINER).writesFail(true);

        assertThat(read(id)).map(ReadRepairDuringChangeTest::text).contains("new");
        assertThat(replicas.get(old.get(1).url()).read(id).block()).as("the stale answer repaired")
                .map(ReadRepairDuringChangeTest::text).contains("new");
    }

    /** The newest version of {@code id} on {@code newest}, an older one on each of {@code older}. */
    private void holds(String id, URI newest, URI... older) {
        long olderTimestamp = clock.now();
        replicas.get(newest).write(id, Record.value(clock.now(), bytes("new"), 3, 0)).block();
        for (URI node : older) {
            replicas.get(node).write(id, Record.value(olderTimestamp, bytes("old"), 3, 0)).block();
        }
    }

    private String keyTheJoinerGains() {
        for (int i = 0; ; i++) {
            String id = "k" + i;
            if (Placement.contains(placement.newReplicas(bytes(id), 3), JOINER)) {
                return id;
            }
        }
    }

    private Optional<Record> read(String id) {
        Membership membership = new Membership(OLD.get(0), joining, null);
        Map<Node, Replica> byNode = new HashMap<>();
        for (Node node : placement.members()) {
            byNode.put(node, replicas.get(node.url()));
        }
        return new Coordinator(membership, FixedReplicas.of(byNode), clock, Duration.ofSeconds(5), Duration.ZERO,
                new SimpleMeterRegistry()).get(id, ALL).block(Duration.ofSeconds(10));
    }

    private static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    private static String text(Record record) {
        return new String(record.value(), StandardCharsets.UTF_8);
    }
}
