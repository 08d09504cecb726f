package dev.dht.replication;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.dht.cluster.ClusterTopology;
import dev.dht.node.HybridLogicalClock;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;

/**
 * {@link Coordinator#write(WriteRequest, Runnable)} says when every replica is done with the record, which may be
 * after the answer (the caller keeps the value counted as held until then): once, after the last replica's
 * outcome, whether it stored the record or failed. Two nodes, one in memory, the other answering when the test
 * says so; no sockets, no timing.
 */
class WriteSettledTest {
    private final ClusterTopology topology = new ClusterTopology(URI.create("http://a:8080"),
            List.of(URI.create("http://a:8080"), URI.create("http://b:8080")));
    private final InMemoryReplica fast = new InMemoryReplica(Replica.PEER_UP);
    private final UnansweredReplica held = new UnansweredReplica(Replica.PEER_UP);
    private final Coordinator coordinator = new Coordinator(topology.membership(),
            FixedReplicas.of(Map.of(topology.nodes().get(0), fast, topology.nodes().get(1), held)), new HybridLogicalClock(),
            Duration.ofSeconds(30), Duration.ofMillis(50), new SimpleMeterRegistry());
    private final AtomicInteger settled = new AtomicInteger();

    @Test
    void settledRunsOnceTheSlowerReplicaIsDoneAfterTheAnswer() {
        coordinator.write(put(1, 2), settled::incrementAndGet).block(Duration.ofSeconds(30));
        assertThat(settled).as("answered by one replica; the other still holds the record").hasValue(0);

        held.writeAnswer.tryEmitValue(true);

        assertThat(settled).hasValue(1);
    }

    @Test
    void settledRunsAlsoWhenTheLastReplicaFails() {
        fast.writesFail(true);
        Mono<Void> write = coordinator.write(put(2, 2), settled::incrementAndGet);
        held.writeAnswer.tryEmitError(new IllegalStateException("replica down"));

        assertThatThrownBy(() -> write.block(Duration.ofSeconds(30))).isInstanceOf(QuorumNotReachedException.class);
        assertThat(settled).hasValue(1);
    }

    private static WriteRequest put(int ack, int from) {
        return WriteRequest.put("k", "value".getBytes(StandardCharsets.UTF_8), new ReplicationFactor(ack, from));
    }
}
