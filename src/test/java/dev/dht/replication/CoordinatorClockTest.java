package dev.dht.replication;

import static org.assertj.core.api.Assertions.assertThat;

import dev.dht.cluster.ClusterTopology;
import dev.dht.cluster.ShardRouter;
import dev.dht.node.HybridLogicalClock;
import dev.dht.storage.Record;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The coordinator's hybrid logical clock and the timestamps it reads, with no sockets: the replica is an
 * in-memory last-write-wins map, standing for a peer whose wall clock runs ahead of this node's.
 */
class CoordinatorClockTest {
    private static final ReplicationFactor ONE = new ReplicationFactor(1, 1);

    private final InMemoryReplica replica = new InMemoryReplica(Replica.IN_PROCESS);
    private final HybridLogicalClock clock = new HybridLogicalClock();
    private final Coordinator coordinator = coordinatorOver(replica, clock);

    @Test
    void aWriteAfterAReadOrdersAfterWhatWasRead() {
        long aMinuteAhead = clock.now() + (60_000L << 16);
        replica.write("k", Record.value(aMinuteAhead, bytes("written by a node whose clock is ahead"))).block();
        assertThat(coordinator.get("k", ONE).block()).map(record -> text(record.value()))
                .contains("written by a node whose clock is ahead");

        coordinator.write(WriteRequest.put("k", bytes("written after reading it"), ONE)).block();

        assertThat(coordinator.get("k", ONE).block()).map(record -> text(record.value()))
                .as("the later write wins").contains("written after reading it");
    }

    private static Coordinator coordinatorOver(Replica replica, HybridLogicalClock clock) {
        URI self = URI.create("http://localhost:8080");
        ClusterTopology topology = new ClusterTopology(self, List.of(self));
        return new Coordinator(topology.membership(), FixedReplicas.of(Map.of(topology.self(), replica)), clock,
                Duration.ofSeconds(1), Duration.ofMillis(50), new SimpleMeterRegistry());
    }

    private static byte[] bytes(String text) {
        return text.getBytes(StandardCharsets.UTF_8);
    }

    private static String text(byte[] bytes) {
        return new String(bytes, StandardCharsets.UTF_8);
    }
}
