package dev.dht.replication;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dht.cluster.ClusterTopology;
import dev.dht.cluster.Node;
import dev.dht.cluster.ShardRouter;
import dev.dht.node.HybridLogicalClock;
import dev.dht.replication.InMemoryReplica.Reads;
import dev.dht.storage.Record;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Flux;

/**
 * Which replicas a read asks, with no sockets: this node and two peers as in-memory replicas. A read at 2/3
 * asks this node and one peer; another peer only after a failure or the speculative retry delay.
 */
class CoordinatorReadTest {
    private static final ReplicationFactor TWO_OF_THREE = new ReplicationFactor(2, 3);
    private static final Duration TIMEOUT = Duration.ofSeconds(5);

    private final ClusterTopology topology = new ClusterTopology(URI.create("http://a:8080"),
            List.of(URI.create("http://a:8080"), URI.create("http://b:8080"), URI.create("http://c:8080")));
    private final ShardRouter router = new ShardRouter(topology.nodes());
    private final SimpleMeterRegistry registry = new SimpleMeterRegistry();
    private final InMemoryReplica self = new InMemoryReplica(Replica.IN_PROCESS);
    private final InMemoryReplica b = new InMemoryReplica(Replica.PEER_UP);
    private final InMemoryReplica c = new InMemoryReplica(Replica.PEER_UP);

    @Test
    void aQuorumReadAsksThisNodeAndOnePeerWhileBothAnswer() {
        Coordinator coordinator = coordinator(Duration.ofMillis(50));
        for (int i = 0; i < 20; i++) {
            coordinator.write(WriteRequest.put("k" + i, bytes("v" + i), new ReplicationFactor(3, 3))).block();
        }
        for (int i = 0; i < 20; i++) {
            assertThat(coordinator.get("k" + i, TWO_OF_THREE).block()).map(CoordinatorReadTest::text).contains("v" + i);
        }
        assertThat(self.readsAsked()).isEqualTo(20);
        assertThat(b.readsAsked() + c.readsAsked()).as("one peer per read").isEqualTo(20);
        assertThat(b.readsAsked()).as("keys spread over both peers").isPositive();
        assertThat(c.readsAsked()).as("keys spread over both peers").isPositive();
        assertThat(speculativeRetries()).isZero();
    }

    @Test
    void aSlowPeerIsPassedOverAfterTheSpeculativeRetryDelay() {
        Duration delay = Duration.ofMillis(200);
        Coordinator coordinator = coordinator(delay);
        String id = keyAskingFirst(b);
        coordinator.write(WriteRequest.put(id, bytes("v"), new ReplicationFactor(3, 3))).block();
        b.reads(Reads.NEVER_ANSWER);

        long started = System.nanoTime();
        assertThat(coordinator.get(id, TWO_OF_THREE).block()).map(CoordinatorReadTest::text).contains("v");
        Duration elapsed = Duration.ofNanos(System.nanoTime() - started);

        assertThat(elapsed).as("waited for the delay, not for the timeout")
                .isGreaterThanOrEqualTo(delay).isLessThan(TIMEOUT.dividedBy(2));
        assertThat(c.readsAsked()).isEqualTo(1);
        assertThat(speculativeRetries()).isEqualTo(1);
    }

    @Test
    void speculativeRetriesStayWithinATenthOfTheReads() {
        Coordinator coordinator = new Coordinator(topology.membership(), FixedReplicas.of(Map.of(node(0), self, node(1), b, node(2), c)),
                new HybridLogicalClock(), Duration.ofMillis(500), Duration.ofMillis(10), registry);
        b.reads(Reads.NEVER_ANSWER);
        List<String> ids = keysAskingFirst(b, 200);

        List<String> outcomes = Flux.fromIterable(ids)
                .flatMap(id -> coordinator.get(id, TWO_OF_THREE).map(found -> "answered")
                        .onErrorReturn(QuorumNotReachedException.class, "timed out"), ids.size())
                .collectList().block();

        double allowed = RetryBudget.MAX_BALANCE + ids.size() * Coordinator.SPECULATIVE_RETRY_RATIO;
        assertThat(speculativeRetries()).as("a slow peer on every read").isBetween(10.0, allowed);
        assertThat(outcomes.stream().filter("answered"::equals).count())
                .as("reads that speculated answered, the rest waited for the slow peer").isEqualTo((long) speculativeRetries());
    }

    @Test
    void aFailedPeerMakesTheReadAskTheOtherAtOnce() {
        Coordinator coordinator = coordinator(TIMEOUT.minusSeconds(1));
        String id = keyAskingFirst(b);
        coordinator.write(WriteRequest.put(id, bytes("v"), new ReplicationFactor(3, 3))).block();
        b.reads(Reads.FAIL);

        long started = System.nanoTime();
        assertThat(coordinator.get(id, TWO_OF_THREE).block()).map(CoordinatorReadTest::text).contains("v");

        assertThat(Duration.ofNanos(System.nanoTime() - started)).as("not waiting for the 4-s delay")
                .isLessThan(Duration.ofSeconds(2));
        assertThat(c.readsAsked()).isEqualTo(1);
        assertThat(speculativeRetries()).isEqualTo(1);
    }

    @Test
    void aPeerWhoseLastCallFailedIsAskedLast() {
        InMemoryReplica down = new InMemoryReplica(Replica.PEER_DOWN);
        down.reads(Reads.NEVER_ANSWER);
        Coordinator coordinator = new Coordinator(topology.membership(), FixedReplicas.of(Map.of(node(0), self, node(1), down, node(2), c)),
                new HybridLogicalClock(), TIMEOUT, TIMEOUT.minusSeconds(1), registry);
        for (int i = 0; i < 10; i++) {
            coordinator.write(WriteRequest.put("k" + i, bytes("v" + i), new ReplicationFactor(2, 3))).block();
        }
        long started = System.nanoTime();
        for (int i = 0; i < 10; i++) {
            assertThat(coordinator.get("k" + i, TWO_OF_THREE).block()).map(CoordinatorReadTest::text).contains("v" + i);
        }
        assertThat(Duration.ofNanos(System.nanoTime() - started)).isLessThan(Duration.ofSeconds(2));
        assertThat(down.readsAsked()).isZero();
    }

    @Test
    void aZeroDelayAsksAllReplicasAtOnce() {
        Coordinator coordinator = coordinator(Duration.ZERO);
        coordinator.write(WriteRequest.put("k", bytes("v"), new ReplicationFactor(3, 3))).block();
        assertThat(coordinator.get("k", TWO_OF_THREE).block()).map(CoordinatorReadTest::text).contains("v");
        assertThat(List.of(self.readsAsked(), b.readsAsked(), c.readsAsked())).containsExactly(1, 1, 1);
        assertThat(speculativeRetries()).as("no retry: all were asked from the start").isZero();
    }

    @Test
    void aReadFailsOnceTooManyReplicasFailed() {
        Coordinator coordinator = coordinator(TIMEOUT.minusSeconds(1));
        b.reads(Reads.FAIL);
        c.reads(Reads.FAIL);
        long started = System.nanoTime();
        assertThatThrownBy(() -> coordinator.get("k", TWO_OF_THREE).block())
                .isInstanceOfSatisfying(QuorumNotReachedException.class, e -> {
                    assertThat(e.succeeded()).isEqualTo(1);
                    assertThat(e.failed()).isEqualTo(2);
                });
        assertThat(Duration.ofNanos(System.nanoTime() - started)).as("neither the delay nor the timeout")
                .isLessThan(Duration.ofSeconds(2));
    }

    @Test
    void aReadWhoseStaleAnswerCannotBeRepairedFails() {
        Coordinator coordinator = coordinator(TIMEOUT.minusSeconds(1));
        String id = keyAskingFirst(b);
        coordinator.write(WriteRequest.put(id, bytes("old"), new ReplicationFactor(3, 3))).block();
        self.write(id, Record.value(new HybridLogicalClock().now() + 1, bytes("new"))).block();
        b.writesFail(true);

        assertThatThrownBy(() -> coordinator.get(id, TWO_OF_THREE).block())
                .as("the new value reached one replica and cannot reach a second: no quorum agrees on it")
                .isInstanceOf(QuorumNotReachedException.class);

        b.writesFail(false);
        assertThat(coordinator.get(id, TWO_OF_THREE).block()).map(CoordinatorReadTest::text).contains("new");
        assertThat(b.read(id).block()).as("repaired before the answer").map(CoordinatorReadTest::text).contains("new");
    }

    private Coordinator coordinator(Duration speculativeRetryDelay) {
        return new Coordinator(topology.membership(), FixedReplicas.of(Map.of(node(0), self, node(1), b, node(2), c)), new HybridLogicalClock(),
                TIMEOUT, speculativeRetryDelay, registry);
    }

    private Node node(int index) {
        return topology.nodes().get(index);
    }

    /** A key whose replica order puts {@code peer} before the other peer, so a 2/3 read asks it first. */
    private String keyAskingFirst(InMemoryReplica peer) {
        return keysAskingFirst(peer, 1).get(0);
    }

    /** {@code count} keys of which a 2/3 read asks {@code peer} first. */
    private List<String> keysAskingFirst(InMemoryReplica peer, int count) {
        Node wanted = peer == b ? node(1) : node(2);
        Node other = peer == b ? node(2) : node(1);
        List<String> keys = new ArrayList<>();
        for (int i = 0; keys.size() < count; i++) {
            List<Node> order = router.replicas("key" + i, 3);
            if (order.indexOf(wanted) < order.indexOf(other)) {
                keys.add("key" + i);
            }
        }
        return keys;
    }

    private double speculativeRetries() {
        return registry.get("dht.read.speculative.retries").counter().count();
    }

    private static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    private static String text(Record record) {
        return new String(record.value(), StandardCharsets.UTF_8);
    }
}
